"""The message browser's pure part: decoding, filters, masking, the query's checks (no Kafka, no DB)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import pytest

from console.messages import core, masking
from console.messages.core import BrowseInvalid, BrowseQuery, ShownMessage


@dataclass(frozen=True)
class Rec:
    partition: int = 0
    offset: int = 0
    timestamp: int | None = 1000
    timestamp_type: str = "CreateTime"
    key: bytes | None = b"k"
    value: bytes | None = b""
    headers: tuple = ()
    size: int = 10


def test_it_decodes_json_text_hex_and_the_confluent_wire_format():
    assert core.decode(b'{"a":1,"b":[2]}') == core.Decoded('{\n  "a": 1,\n  "b": [\n    2\n  ]\n}', "json")
    assert core.decode("héllo".encode()) == core.Decoded("héllo", "text")
    assert core.decode(b"\xff\xfe\x01") == core.Decoded("ff fe 01", "hex")
    assert core.decode(b"\x00\x00\x00\x01\x2a\x02\x06abc") == core.Decoded("02 06 61 62 63", "schema", 298)
    assert core.decode(None) == core.Decoded("", "null")
    big = b'{"id": 18446744073709551617, "x": 1.5}'  # past 64 bits: shown exactly
    assert core.decode(big) == core.Decoded('{\n  "id": 18446744073709551617,\n  "x": 1.5\n}', "json")
    assert core.decode(b'{"a": NaN}') == core.Decoded('{"a": NaN}', "text")  # NaN is not JSON
    assert core.decode(b"k17") == core.Decoded("k17", "text")


def test_it_decodes_as_asked():
    assert core.decode(b'{"a":1}', "text") == core.Decoded('{"a":1}', "text")
    assert core.decode(b'{"a":1}', "hex") == core.Decoded("7b 22 61 22 3a 31 7d", "hex")
    assert core.decode(b"not json", "json") == core.Decoded("not json", "text")
    assert core.decode(b"\x00\x00\x00\x00\x01x", "text").kind == "text"  # no wire format unless auto
    assert core.decode(b"\xff", "text") == core.Decoded("\ufffd", "text")


def test_it_checks_the_query():
    modes = "offset, timestamp, newest, oldest, follow"
    cursor = "the follow cursor is {partition: offset}, both whole numbers >= 0"
    cases = [
        (BrowseQuery("sideways", None), f"unknown mode 'sideways' (one of {modes})"),
        (BrowseQuery("newest", None, count=0), "count must be 1 to 500 (was 0)"),
        (BrowseQuery("newest", None, count=501), "count must be 1 to 500 (was 501)"),
        (BrowseQuery("offset", None, offset=3), "mode offset needs a partition and an offset"),
        (BrowseQuery("offset", 0), "mode offset needs a partition and an offset"),
        (BrowseQuery("timestamp", None), "mode timestamp needs a timestamp"),
        (BrowseQuery("newest", None, decode="b64"), "unknown decoding 'b64' (one of auto, text, json, hex)"),
        (BrowseQuery("newest", -1), "partition -1 is out of range: partitions are numbered from 0"),
        (BrowseQuery("follow", None, cursor={"0": 5}), cursor),
        (BrowseQuery("follow", None, cursor={0: -1}), cursor),
    ]
    for query, message in cases:
        with pytest.raises(BrowseInvalid) as caught:
            core.check_query(query)
        assert str(caught.value) == message
    with pytest.raises(BrowseInvalid, match=r"^JSON path filter: '\$\[\[' is not a JSON path"):
        core.check_query(BrowseQuery("newest", None, json_path="$[["))
    core.check_query(BrowseQuery("offset", 0, offset=0, json_path="$.a=1", header="h=v"))


def _shown(rec, rules=None, query=None, how="auto"):
    return core.prepare(rec, rules, core.filters_of(query or BrowseQuery("newest", None)), how)


def test_it_filters_on_key_header_value_and_json_path():
    rec = Rec(
        key=b"order-17",
        value=b'{"id": 7, "who": {"name": "ann"}}',
        headers=(("trace", b"abc"), ("empty", None)),
    )
    keep = [
        BrowseQuery("newest", None, key_contains="der-1"),
        BrowseQuery("newest", None, header="trace"),
        BrowseQuery("newest", None, header="trace=abc"),
        BrowseQuery("newest", None, header="empty"),
        BrowseQuery("newest", None, value_contains='"who"'),
        BrowseQuery("newest", None, json_path="$.who.name"),
        BrowseQuery("newest", None, json_path="$.who.name=ann"),
        BrowseQuery("newest", None, json_path='$.who.name="ann"'),
        BrowseQuery("newest", None, json_path="$.id=7"),
    ]
    drop = [
        BrowseQuery("newest", None, key_contains="x"),
        BrowseQuery("newest", None, header="other"),
        BrowseQuery("newest", None, header="trace=abd"),
        BrowseQuery("newest", None, value_contains="bob"),
        BrowseQuery("newest", None, json_path="$.who.age"),
        BrowseQuery("newest", None, json_path="$.id=8"),
    ]
    assert [_shown(rec, query=q) is not None for q in keep] == [True] * len(keep)
    assert [_shown(rec, query=q) is not None for q in drop] == [False] * len(drop)
    assert _shown(Rec(value=b"plain"), query=BrowseQuery("newest", None, json_path="$.a")) is None


def test_it_shows_a_record_with_every_field():
    rec = Rec(partition=2, offset=41, key=b"k1", value=b"v", headers=(("h", b"x"), ("n", None)), size=7)
    assert _shown(rec) == ShownMessage(
        2, 41, 1000, "CreateTime", "k1", "text", "v", "text", None, (("h", "x"), ("n", "")), 7, ()
    )


def test_it_masks_json_paths_headers_and_regex_and_names_the_rules():
    rules = [
        masking.make_rule("json_path", "$.card.number", "pay."),
        masking.make_rule("header", "Authorization", "pay."),
        masking.make_rule("regex", r"\d{3}-\d{2}-\d{4}"),
    ]
    value = json.dumps(
        {"card": {"number": "4111111111111111", "exp": "12/30"}, "note": "ssn 123-45-6789"}
    ).encode()
    rec = Rec(value=value, headers=(("authorization", b"Bearer s3cret"), ("trace", b"t1")))
    shown = _shown(rec, rules)
    assert json.loads(shown.value) == {"card": {"number": "***", "exp": "12/30"}, "note": "ssn ***"}
    assert shown.headers == (("authorization", "***"), ("trace", "t1"))
    assert shown.masked_by == (rules[0].label, rules[2].label, rules[1].label)
    assert rules[0].label == "json_path $.card.number (topics 'pay.*')"
    assert rules[2].label == r"regex \d{3}-\d{2}-\d{4} (every topic)"
    for secret in ("4111111111111111", "s3cret", "123-45-6789"):
        assert secret not in repr(shown)
    untouched = _shown(Rec(value=b'{"other": 1}'), rules)
    assert untouched.masked_by == () and untouched.value == '{\n  "other": 1\n}'


def test_it_masks_inside_a_binary_value_and_in_hex():
    rule = masking.make_rule("regex", "secret")
    shown = _shown(Rec(value=b"\xff\x00secret\xfe"), [rule], how="hex")
    assert shown.value == "ff 00 2a 2a 2a fe" and shown.masked_by == (rule.label,)


def test_it_filters_on_the_masked_message_so_a_filter_is_no_oracle():
    rules = [masking.make_rule("json_path", "$.pin"), masking.make_rule("header", "token")]
    rec = Rec(value=b'{"pin": "1234"}', headers=(("token", b"abc"),))
    for query in (
        BrowseQuery("newest", None, value_contains="1234"),
        BrowseQuery("newest", None, json_path="$.pin=1234"),
        BrowseQuery("newest", None, json_path='$.pin="1234"'),
        BrowseQuery("newest", None, header="token=abc"),
    ):
        assert _shown(rec, rules, query) is None, query
        assert _shown(rec, None, query) is not None, query  # unmasked: the filter sees the value
    assert _shown(rec, rules, BrowseQuery("newest", None, json_path="$.pin=***")) is not None


def test_it_refuses_a_rule_that_cannot_apply():
    cases = [
        ("json_path", "$[[", "'$[[' is not a JSON path"),
        ("json_path", " ", "the JSON path is empty"),
        ("regex", "(a", "'(a' is not a regular expression RE2 accepts"),
        ("regex", r"(a)\1", "is not a regular expression RE2 accepts"),
        ("regex", "x*", "'x*' matches the empty text"),
        ("header", "", "a header rule names the header"),
        ("xpath", "/a", "unknown masking kind 'xpath' (one of json_path, header, regex)"),
    ]
    for kind, expression, message in cases:
        with pytest.raises(masking.RuleInvalid) as caught:
            masking.make_rule(kind, expression)
        assert message in str(caught.value), (kind, expression, str(caught.value))


def test_it_applies_the_rules_of_every_prefix_the_topic_starts_with():
    rules = [
        masking.make_rule("header", "a", ""),
        masking.make_rule("header", "b", "pay."),
        masking.make_rule("header", "c", "pay.cards"),
    ]
    assert [r.expression for r in masking.rules_for(rules, "pay.cards.v1")] == ["a", "b", "c"]
    assert [r.expression for r in masking.rules_for(rules, "orders")] == ["a"]


def test_it_merges_partitions_by_timestamp():
    def m(p, o, ts):
        return ShownMessage(p, o, ts, "CreateTime", "", "null", "", "null", None, (), 0, ())

    merged = core.merge([[m(0, 0, 5), m(0, 1, 9)], [m(1, 0, 7), m(1, 1, None)]])
    assert [(x.partition, x.offset) for x in merged] == [(1, 1), (0, 0), (1, 0), (0, 1)]


def test_it_walks_plain_json_paths_as_jsonpath_ng_finds_and_updates_them():
    import copy

    from jsonpath_ng.ext import parse

    from console.messages import jsondoc

    docs = [
        {"a": {"b": 1, "c": "***"}},
        {"a": [{"b": 1}, {"b": 2}, {"c": 3}]},
        {"a": {"x": {"b": 3}, "y": [1]}},
        {"a": "s", "a b": {"c": 1}},
        {"a": None},
        [1, [2, 3]],
        {"a": [1, [2]]},
        5,
        {"len": 1, "a": {"b": {"b": 2}}},
    ]
    paths = [
        "$",
        "$.a",
        "$.a.b",
        "$.a[*].b",
        "$.a[0]",
        "$.a[*]",
        "$.a[-1]",
        "$[0]",
        "$.*",
        "$.a.*",
        "$.a[1][0]",
    ]
    paths += ["$['a']", "$['a b'].c", '$["a"].b', "$.a.b.b", "$.a[7]", "$.a[-9]", "$.*.*", "$[*][1]"]
    for text in paths:
        path = jsondoc.JsonPath(text)
        assert path.steps is not None, text  # walked, not handed to jsonpath-ng
        reference = parse(text)
        for doc in docs:
            assert path.find(doc) == [m.value for m in reference.find(doc)], (text, doc)
            mine, theirs = (
                path.replace(copy.deepcopy(doc), "***")[0],
                reference.update(copy.deepcopy(doc), "***"),
            )
            assert mine == theirs, (text, doc, mine, theirs)
    for text in ("$..b", "$.a[?(@.b > 1)]", "a.b", "$.len", "$.a[0:2]"):
        path = jsondoc.JsonPath(text)
        assert path.steps is None, text
        for doc in docs:
            assert path.find(doc) == [m.value for m in parse(text).find(doc)], (text, doc)


def test_a_rule_is_compiled_once_per_text_and_a_bad_one_is_refused_every_time():
    first = masking.make_rule("json_path", "$.card.number", "pay.")
    assert masking.make_rule("json_path", "$.card.number", "pay.") is first  # every read asks again
    assert masking.make_rule("json_path", "$.card.number", "") is not first
    for _ in range(2):
        with pytest.raises(masking.RuleInvalid):
            masking.make_rule("json_path", "$.[", "")


def test_json_values_are_parsed_as_the_stdlib_parses_them():
    """orjson reads most values (module jsondoc); every answer is the stdlib's, type and all."""
    from console.messages import jsondoc

    strict = json.JSONDecoder(parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    cases = [
        b'{"a": 1, "b": [true, null, "x"], "c": {"d": 1.5}}',
        b"-9223372036854775808",
        b"-9223372036854775809",  # 19 digits past int64: orjson would give a float
        b"18446744073709551615",
        b'{"id": 18446744073709551616}',  # past 64 bits
        b'{"n": 1234567890123456789012345678901234567890}',
        b'{"note": "12345678901234567890"}',  # a long run of digits in a string: the same either way
        b"-0",
        b"-0.0",
        b"1e400",  # past a double: orjson refuses, the stdlib reads inf
        b'"\\ud800"',  # a lone surrogate: orjson refuses, the stdlib reads it
        b'{"a": 1, "a": 2}',
        b"  [1, 2]  ",
        b"5e-324",
        b"0.1",
    ]
    for data in cases:
        expected = strict.decode(data.decode("utf-8"))
        got = jsondoc.parse(data)
        assert repr(got) == repr(expected) and type(got) is type(expected), data
    for data in (b'{"a": NaN}', b"[1, 2", b"\x0c{}", b'"\xff"', b"01", b"{} x"):
        assert jsondoc.parse(data) is jsondoc.NOT_JSON, data


def _reference(rec, rules, f, how):
    """What a message shows, the general way: the value masked to bytes, then decoded."""
    from console.messages import jsondoc

    value, changed, doc = masking.mask_value(rec.value, rules)
    headers, header_changed = masking.mask_headers(rec.headers, rules)
    changed += header_changed
    if doc is jsondoc.UNPARSED and (f.path is not None or how in ("auto", "json")):
        doc = jsondoc.parse(value)
    if f.any and not core.passes(f, rec.key, headers, value, doc):
        return None
    key, shown = core.decode(rec.key, how), core.decode(value, how, doc)
    return ShownMessage(
        rec.partition, rec.offset, rec.timestamp, rec.timestamp_type, key.text, key.kind, shown.text,
        shown.kind, shown.schema_id, tuple((n, core.decode(v, "text").text if v is not None else "")
        for n, v in headers), rec.size, tuple(dict.fromkeys(changed)),
    )  # fmt: skip


def test_a_read_with_json_path_rules_only_shows_what_the_general_masking_shows():
    """The browse's usual case (JSON-path rules, JSON shown, no text filter on the value) masks the
    document without writing it back as bytes: every message, filtered or not, is the same."""
    rules_sets = [
        (masking.make_rule("json_path", "$.card.number"),),
        (masking.make_rule("json_path", "$.card.number"), masking.make_rule("json_path", "$.who..name")),
        (masking.make_rule("json_path", "$.card"), masking.make_rule("header", "token")),
    ]
    records = [
        Rec(value=b'{"card": {"number": "4111", "exp": "1/30"}, "who": {"x": {"name": "ann"}}}'),
        Rec(value=b'{"card": "plain", "n": 18446744073709551617}', headers=(("token", b"t"), ("h", None))),
        Rec(value=b'[{"card": 1}]', key=None),
        Rec(value=b"not json \xff", key=b'{"k": 1}'),
        Rec(value=None, headers=(("h", b"\xff"),)),
        Rec(value=b"\x00\x00\x00\x00\x07\x01\x02"),  # the Confluent wire format
        Rec(value=b'{"card": {"number": "***"}}'),  # masked already: no rule named
    ]
    queries = [
        BrowseQuery("newest", None),
        BrowseQuery("newest", None, key_contains="k"),
        BrowseQuery("newest", None, header="token"),
        BrowseQuery("newest", None, json_path="$.card.number=***"),
        BrowseQuery("newest", None, json_path="$.card.number=4111"),
        BrowseQuery("newest", None, json_path="$.who"),
    ]
    compared = 0
    for rules in rules_sets:
        for query in queries:
            f = core.filters_of(query)
            for how in ("auto", "json"):
                prepare = core.Preparer(rules, f, how)
                assert prepare.doc_only
                for rec in records:
                    assert prepare(rec) == _reference(rec, rules, f, how), (rules, query, how, rec)
                    compared += prepare(rec) is not None
    assert compared > 50
    shown = core.Preparer(rules_sets[0], core.filters_of(queries[0]), "auto")(records[0])
    assert hash(shown) == hash(_reference(records[0], rules_sets[0], core.filters_of(queries[0]), "auto"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        shown.value = "4111"
    # any other case takes the general path
    for rules, query, how in (
        (rules_sets[0] + (masking.make_rule("regex", "4111"),), BrowseQuery("newest", None), "auto"),
        (rules_sets[0], BrowseQuery("newest", None, value_contains="card"), "auto"),
        (rules_sets[0], BrowseQuery("newest", None), "text"),
        ((masking.make_rule("header", "token"),), BrowseQuery("newest", None), "auto"),
    ):
        f = core.filters_of(query)
        assert not core.Preparer(rules, f, how).doc_only
        for rec in records:
            assert core.prepare(rec, rules, f, how) == _reference(rec, rules, f, how), (
                rules,
                query,
                how,
                rec,
            )
