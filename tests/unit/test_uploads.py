"""The bounded upload parser (issue 14 item 2): size, depth, no YAML anchors, errors with positions.

First the parser on its own (and a property: any text gives data or an UploadError, nothing else),
then every upload path through the real pages: a refusal is a 200 with the error and its line
and column, never a 500 (nor a crashed process).
"""

from __future__ import annotations

import inspect
import json
import sys
import time

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.cyaml import CParser

from console import uploads
from console.acls import core as acl_rules
from console.models import Operation
from console.reassignment import planner
from console.topics.batch import BatchParseError, parse_batch

DEEP_YAML = "- " + "[" * 200_000  # 200 KB: libyaml's composer segfaulted the web process on this
DEEP_JSON = '{"version": 1, "partitions": ' + "[" * 100_000 + "]" * 100_000 + "}"


def billion_laughs() -> str:
    """The classic bomb: ten levels of nine aliases each (10^9 leaves), padded to ~32 KB."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n" + "#" * (32 * 1024 - sum(map(len, lines))) + "\n"


def assignment_bomb() -> str:
    """~32 KB that the topic batch used to walk 42 million times (6,000 aliases of 7,000 ids)."""
    replicas = "[" + ",".join(["1"] * 7000) + "]"
    return "- name: bomb\n  assignment: [&p " + replicas + "," + ",".join(["*p"] * 6000) + "]\n"


def refused(call, *args) -> uploads.UploadError:
    with pytest.raises(uploads.UploadError) as info:
        call(*args)
    return info.value


# ---- the parser ----------------------------------------------------------------------------------


def test_it_refuses_deep_yaml_at_the_first_level_too_many_without_recursing():
    # Under a recursion limit a little above this frame's depth: a parser that recursed per level
    # would hit RecursionError, which the reader turns into a depth error at line 1, column 1 (its
    # last line of defence), so the position proves it stopped at level 21 without recursing. (A
    # time bound flaked here on a loaded CI machine: 2.2 s for what takes 0.2 s.)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 120)
    try:
        errors = [refused(call, DEEP_YAML) for call in (uploads.load_yaml, uploads.compose_yaml)]
    finally:
        sys.setrecursionlimit(limit)
    for error in errors:
        assert (error.kind, error.line, error.column) == ("depth", 1, 22)  # '-' is level 1
        assert "nested deeper than 20 levels" in str(error)
    indented = refused(uploads.load_yaml, "".join("  " * i + f"k{i}:\n" for i in range(30)))
    assert (indented.kind, indented.line, indented.column) == ("depth", 21, 41)


def test_twenty_levels_are_still_accepted():
    assert uploads.load_yaml("- " + "[" * 19 + "]" * 19) == [json.loads("[" * 19 + "]" * 19)]
    assert uploads.load_json("[" * 20 + "]" * 20) == json.loads("[" * 20 + "]" * 20)


def test_it_refuses_a_billion_laughs_at_once_with_the_position_of_the_first_anchor():
    bomb = billion_laughs()
    assert 30_000 < len(bomb) < 34_000
    started = time.perf_counter()
    for call in (uploads.load_yaml, uploads.compose_yaml):
        error = refused(call, bomb)
        assert (error.kind, error.line, error.column) == ("anchor", 1, 5)
        assert "anchors and aliases" in error.message
    assert time.perf_counter() - started < 1


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("- &t {name: a}\n", (1, 3)),
        ("a: 1\nb: *a\n", (2, 4)),
        ("- name: a\n  configs: {<<: *base}\n", (2, 17)),
    ],
)
def test_anchors_and_aliases_are_refused_where_they_are(text, where):
    error = refused(uploads.load_yaml, text)
    assert (error.kind, (error.line, error.column)) == ("anchor", where)


def test_deep_json_is_refused_before_json_recurses():
    error = refused(uploads.load_json, DEEP_JSON)
    assert (error.kind, error.line, error.column) == ("depth", 1, 49)
    strings = json.dumps({"a": "[" * 500, "b": ['\\"' + "{" * 500]})  # brackets inside strings
    assert uploads.load_json(strings) == json.loads(strings)


def test_oversize_text_is_refused_before_parsing(settings):
    settings.UPLOAD_MAX_BYTES = 1000
    for call in (uploads.load_yaml, uploads.load_json, uploads.csv_rows):
        error = refused(call, "x" * 1001)
        assert (error.kind, error.line, error.column) == ("size", 1, 1)
        assert "the text is 1,001 bytes; at most 1,000 bytes" in error.message
    assert refused(uploads.load_yaml, "é" * 501).kind == "size"  # bytes of UTF-8, not characters
    assert uploads.load_yaml("é" * 500) == "é" * 500


def test_the_default_limit_is_two_megabytes():
    assert uploads.max_bytes() == 2 * 1024 * 1024
    assert refused(uploads.load_json, " " * (2 * 1024 * 1024 + 1)).kind == "size"


@pytest.mark.parametrize(
    ("call", "text", "where", "fragment"),
    [
        (uploads.load_yaml, "a: [1,\n  2", (2, 4), "expected ',' or ']'"),
        (uploads.load_yaml, "a: b\x00", (1, 5), "#x0000"),
        (uploads.load_yaml, "a: !!python/object:os.system x", (1, 4), "constructor"),
        (uploads.load_yaml, "a: 2020-13-45", (1, 1), "cannot be read"),
        (uploads.load_yaml, "a: " + "9" * 5000, (1, 1), "cannot be read"),
        (uploads.load_json, '{"a": 1,,}', (1, 9), "double quotes"),
        (uploads.load_json, '{"a": ' + "9" * 5000 + "}", (1, 1), "cannot be read"),
        (uploads.csv_rows, "a,b\n" + "x" * 200_000 + "\n", (2, 1), "field larger"),
    ],
)
def test_malformed_input_is_one_error_with_its_position(call, text, where, fragment):
    error = refused(call, text)
    assert (error.kind, (error.line, error.column)) == ("syntax", where)
    assert fragment in error.message and str(error).startswith(f"line {where[0]}, column {where[1]}: ")


def test_libyaml_only_makes_the_events_the_python_composer_and_safe_constructor_do_the_rest():
    """libyaml's composer recurses in C (it crashed the process on DEEP_YAML): never reached."""
    loader = uploads._Loader
    for name in ("check_node", "get_node", "get_single_node", "compose_document", "compose_node"):
        assert getattr(loader, name) is getattr(Composer, name), name
    assert issubclass(loader, SafeConstructor) and not issubclass(loader, yaml.constructor.FullConstructor)
    assert loader.__mro__.index(Composer) < loader.__mro__.index(CParser)


# Strings with the characters that matter to a bracket scanner or YAML (PyYAML does not join
# JSON's surrogate-pair escapes, so text outside the BMP is left out of this round trip).
WORDS = st.text(alphabet="ab é'\"\\[]{}:,&*#-", max_size=5)
NESTED = st.recursive(
    st.none() | st.booleans() | st.integers() | WORDS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(WORDS, inner, max_size=3),
    max_leaves=40,
)
PUNCTUATION = st.text(alphabet="[]{}:,-&*!|>?'\"#%@`\\ \t\nax0é\x00", max_size=200)


def depth(value) -> int:
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return 1 + max(map(depth, children), default=0) if isinstance(value, dict | list) else 0


@hsettings(max_examples=300, deadline=None)
@given(PUNCTUATION | st.text(max_size=200), st.sampled_from(["yaml", "compose", "json", "csv"]))
def test_any_text_gives_data_or_an_upload_error_and_nothing_else(text, fmt):
    call = {
        "yaml": uploads.load_yaml,
        "compose": uploads.compose_yaml,
        "json": uploads.load_json,
        "csv": uploads.csv_rows,
    }[fmt]
    try:
        call(text)
    except uploads.UploadError as exc:
        assert exc.line >= 1 and exc.column >= 1 and exc.message


@hsettings(max_examples=100, deadline=None)
@given(NESTED, st.integers(min_value=0, max_value=40))
def test_nested_data_round_trips_up_to_the_limit_and_is_refused_beyond(value, extra):
    wrapped = value
    for _ in range(extra):
        wrapped = [wrapped]
    for call, text in ((uploads.load_json, json.dumps(wrapped)), (uploads.load_yaml, json.dumps(wrapped))):
        if depth(wrapped) <= uploads.MAX_DEPTH:
            assert call(text) == wrapped
        else:
            assert refused(call, text).kind == "depth"


def _reference_json_depth(text: str, limit: int) -> tuple[int, int] | None:
    """The JSON depth pre-scan before its fast pass (verbatim but for the limit and the result):
    the (line, column) of the first bracket deeper than ``limit``, or None."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for match in uploads._JSON_TOKENS.finditer(text):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            if depth > limit:
                return uploads._position(text, match.start())
        elif char in "]}":
            depth -= 1
    return None


@hsettings(max_examples=400, deadline=None)
@given(st.text(alphabet='[]{}"\\a,:\n', max_size=120), st.integers(min_value=0, max_value=5))
@example('"\\""[[[[[["', 3)  # an escaped quote: the string ends at the second ", the brackets count
@example('"a\\\\"[[[[[["', 3)  # an escaped backslash, then the closing quote
@example('["[[[[[[[[", {"}}}}": [[[[1]]]]}]', 4)
@example('é"[[[[[[', 3)  # no backslash (the bytes pass): an unterminated string, non-ASCII before it
@example('[[["]]]"[[["é[', 4)  # no backslash: a string's closing brackets close nothing
def test_the_json_depth_check_refuses_exactly_where_the_token_scan_does(text, limit):
    """Brackets inside strings (escaped quotes, unterminated strings), unbalanced brackets, lines."""
    saved = uploads.MAX_DEPTH
    uploads.MAX_DEPTH = limit
    try:
        expected = _reference_json_depth(text, limit)
        try:
            uploads._check_json_depth(text)
            got = None
        except uploads.UploadError as exc:
            assert exc.kind == "depth"
            got = (exc.line, exc.column)
    finally:
        uploads.MAX_DEPTH = saved
    assert got == expected


# ---- the areas' parsers ----------------------------------------------------------------------------


def test_the_topic_batch_refuses_the_alias_bomb_quickly():
    bomb = assignment_bomb()
    assert 30_000 < len(bomb) < 34_000
    started = time.perf_counter()
    with pytest.raises(BatchParseError) as info:
        parse_batch(bomb, "yaml")
    assert time.perf_counter() - started < 1
    problem = info.value.problems[0]
    assert (problem.line, problem.column) == (2, 16) and "anchors and aliases" in problem.message


def test_the_acl_parsers_and_the_plan_parser_refuse_deep_json():
    with pytest.raises(acl_rules.AclValidationError) as acl:
        acl_rules.parse_batch("[" * 100_000)
    assert acl.value.errors == ["line 1, column 21: nested deeper than 20 levels"]
    with pytest.raises(acl_rules.AclValidationError, match="not valid JSON .line 1, column 21: nested"):
        acl_rules.bindings_from_json(["[" * 100_000])
    with pytest.raises(planner.PlanParseError) as plan:
        planner.parse_plan(DEEP_JSON)
    assert (plan.value.line, plan.value.column) == (1, 49)
    assert "Nested deeper than 20 levels" in str(plan.value)


# ---- through the pages -----------------------------------------------------------------------------


def url(view: str, cluster) -> str:
    return reverse(view, kwargs={"name": cluster.name})


@pytest.mark.django_db
def test_the_topic_batch_page_shows_each_refusal_with_its_position(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    page = url("topic_batch_create", kafka_cluster)
    cases = [
        ({"text": DEEP_YAML, "format": "yaml"}, b"line 1, column 22: nested deeper than 20 levels"),
        ({"text": DEEP_YAML}, b"line 1, column 22: nested deeper than 20 levels"),
        ({"text": "[" * 100_000, "format": "json"}, b"line 1, column 21: nested deeper than 20 levels"),
        ({"text": "- &t {name: a}\n"}, b"line 1, column 3: YAML anchors and aliases"),
        (
            {"text": "name\n" + "a" * (2 * 1024 * 1024)},
            b"line 1, column 1: the text is 2,097,157 bytes; at most 2,097,152 bytes (2.0 MiB)",
        ),
    ]
    for data, expected in cases:
        response = client.post(page, {**data, "action": "create"})
        assert response.status_code == 200, data.get("format")
        assert expected in response.content
    started = time.perf_counter()
    bomb = SimpleUploadedFile("bomb.yaml", assignment_bomb().encode())
    response = client.post(page, {"upload": bomb, "action": "create"})
    assert time.perf_counter() - started < 1
    assert response.status_code == 200 and b"line 2, column 16: YAML anchors and aliases" in response.content


@pytest.mark.django_db
def test_the_acl_pages_show_deep_and_aliased_batches_as_errors(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    page = url("acl_new", kafka_cluster)
    deep = client.post(page, {"mode": "batch", "text": '{"create": ' + "[" * 100_000})
    assert deep.status_code == 200 and b"line 1, column 31: nested deeper than 20 levels" in deep.content
    started = time.perf_counter()
    bomb = client.post(page, {"mode": "batch", "text": billion_laughs()})
    assert time.perf_counter() - started < 1
    assert bomb.status_code == 200 and b"line 1, column 5: YAML anchors and aliases" in bomb.content
    forged = client.post(url("acl_apply", kafka_cluster), {"create": "[" * 100_000})
    assert forged.status_code == 200
    assert b"not valid JSON (line 1, column 21: nested deeper than 20 levels)" in forged.content


@pytest.mark.django_db
def test_the_plan_page_shows_a_deep_plan_as_an_error(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    page = url("reassign_new", kafka_cluster)
    for data in (
        {"plan_json": DEEP_JSON},
        {"plan_file": SimpleUploadedFile("plan.json", DEEP_JSON.encode())},
    ):
        response = client.post(page, {"intent": "json", "throttle_mb": "1", "action": "preview", **data})
        assert response.status_code == 200
        assert b"Nested deeper than 20 levels (line 1, column 49)" in response.content
    assert not Operation.objects.exists()


@pytest.mark.django_db
def test_the_topic_policy_page_shows_deep_config_ranges_as_an_error(client, personas, kafka_cluster):
    client.force_login(personas["admin"])
    response = client.post(url("topic_policy", kafka_cluster), {"config_ranges": "[" * 100_000})
    assert response.status_code == 200
    assert b"Line 1, column 21: nested deeper than 20 levels" in response.content


def test_a_plan_larger_than_the_upload_limit_but_within_the_plan_form_is_accepted(settings):
    """Plans for tens of thousands of partitions exceed UPLOAD_MAX_BYTES; the plan bound is the form's."""
    import json

    from console.reassignment import planner

    settings.UPLOAD_MAX_BYTES = 1024 * 1024
    parts = [
        {
            "topic": f"orders-{i // 100:05d}",
            "partition": i % 100,
            "replicas": [1, 2, 3],
            "log_dirs": ["any"] * 3,
        }
        for i in range(40_000)
    ]
    text = json.dumps({"version": 1, "partitions": parts})
    assert len(text) > settings.UPLOAD_MAX_BYTES
    assert len(planner.parse_plan(text)) == 40_000


# ---- found by the hostile-input cases (test_hostile_input*.py) -------------------------------------

LONE = '{"resource_type": "TOPIC", "resource_name": "a", "pattern_type": "LITERAL", "principal": ",\\ud800",'
LONE += ' "host": "*", "operation": "READ", "permission": "ALLOW"}'


@pytest.mark.django_db
def test_a_lone_surrogate_escape_in_posted_json_is_refused_where_it_is_not_a_500(
    client, personas, kafka_cluster
):
    """json.loads turns "\\ud800" into a str no page can encode: UnicodeEncodeError (a 500) on acl_apply."""
    with pytest.raises(uploads.UploadError) as info:
        uploads.load_json('{"a":\n  "x\\udc00"}')
    assert (info.value.line, info.value.column) == (2, 5) and "surrogate" in info.value.message
    assert uploads.load_json('"\\ud83d\\ude00"') == "\U0001f600"  # a pair is one character
    # YAML: libyaml refuses an escape of any surrogate (a pair too) where the escape is; a raw one
    # (a str from surrogateescape) before parsing, where it is.
    for text, where in (('a: "\\ud800"', (1, 7)), ('a: "\\ud83d\\ude00"', (1, 7))):
        with pytest.raises(uploads.UploadError) as info:
            uploads.load_yaml(text)
        assert (info.value.line, info.value.column) == where
        assert "invalid Unicode character escape" in info.value.message
    with pytest.raises(uploads.UploadError) as info:
        uploads.load_yaml('a:\n  "é\udcff"')
    assert (info.value.line, info.value.column) == (2, 5) and "surrogate" in info.value.message
    client.force_login(personas["admin"])
    response = client.post(reverse("acl_apply", kwargs={"name": kafka_cluster.name}), {"create": LONE})
    assert response.status_code == 200 and b"surrogate" in response.content
