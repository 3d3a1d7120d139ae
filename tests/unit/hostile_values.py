"""Hypothesis strategies of hostile form values (issue 14): the building blocks of test_hostile_*.

A form is drawn as a list of (field, value) pairs, so a field can be missing, given once or
given several times (a QueryDict list). A value is text, raw bytes (invalid UTF-8, escaped
surrogates) or an ``Upload`` (multipart file). Each field mixes plausible values (so a post gets
past the first check and reaches the deeper ones) with junk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml
from hypothesis import strategies as st


@dataclass(frozen=True)
class Upload:
    """A file posted in a multipart form."""

    name: str
    content: bytes
    content_type: str = "application/octet-stream"


SPECIAL = [
    "",
    " ",
    "0",
    "-0",
    "-1",
    "1.5",
    "1e309",
    "-1e309",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "1_000",
    "0x1F",
    "１２",  # fullwidth digits: int() accepts them
    "٣",
    "²",
    "99999999999999999999999999999999",
    "-9223372036854775809",
    "9223372036854775808",
    "2147483648",
    "None",
    "null",
    "true",
    "[]",
    "{}",
    "\x00",
    "a\x00b",
    "\u202eevil\u202c",
    "\u200b",
    "\ufeff",
    "\ud800",
    "\udfff",
    "😀" * 5,
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "' OR 1=1 --",
    "'; DROP TABLE console_cluster; --",
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "{{ 7*7 }}",
    "{% debug %}",
    "${jndi:ldap://x/a}",
    "../../etc/passwd",
    "%00",
    "%s%s%n",
    "\r\n",
    "a\r\nb",
    "a\nb",
    "\t",
    "User:*",
    "*",
    "-",
    ".",
    "..",
    "__proto__",
    "a" * 250,
    "é" * 300,
]
RAW = [b"\xff\xfe", b"\xed\xa0\x80", b"\xc0\x80", b"abc\xff", b"\x00\x01\x02", b"\xe2\x80"]


def _long() -> st.SearchStrategy[str]:
    sizes = st.sampled_from([256, 1000, 3000, 10_000, 66_000])
    return st.builds(lambda c, n: c * n, st.sampled_from(["x", "9", "é", "\n", "[", "-", ","]), sizes)


JUNK: st.SearchStrategy = st.one_of(
    st.sampled_from(SPECIAL),
    st.text(max_size=30),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    _long(),
    st.lists(st.sampled_from(SPECIAL), min_size=2, max_size=4).map(lambda p: ",".join(p)),
    st.lists(st.sampled_from(SPECIAL), min_size=2, max_size=4).map(lambda p: "\n".join(p)),
    st.sampled_from(RAW),
)


def either(*values) -> st.SearchStrategy:
    """A plausible value: one of these (strings) or junk."""
    return st.one_of(st.sampled_from([str(v) for v in values]), JUNK)


NUMBER = st.one_of(st.integers(-5, 40).map(str), JUNK)


@st.composite
def form(draw, fields: dict[str, st.SearchStrategy], extra: bool = True) -> list[tuple[str, object]]:
    """(field, value) pairs: each field missing, once, or repeated; sometimes unknown fields too."""
    pairs: list[tuple[str, object]] = []
    for name, plausible in fields.items():
        mode = draw(st.integers(0, 9))
        if mode == 0:
            continue
        strategy = st.one_of(plausible, JUNK) if mode < 8 else JUNK
        for _ in range(draw(st.integers(2, 3)) if mode == 9 else 1):
            pairs.append((name, draw(strategy)))
    if extra and draw(st.integers(0, 4)) == 0:
        key = draw(st.sampled_from(["csrfmiddlewaretoken", "__proto__", "x" * 300, "\x00", "a[]", "é"]))
        pairs.append((key, draw(JUNK)))
    return pairs


# -- structured documents (YAML / JSON / CSV) ------------------------------------------------------

SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(SPECIAL[:60]),
    st.text(max_size=12),
)


def document(keys: list[str]) -> st.SearchStrategy:
    """Nested data whose mappings mostly use the expected keys (so the shapes get read)."""
    key = st.one_of(st.sampled_from(keys), st.text(max_size=6))
    return st.recursive(
        SCALAR,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(key, inner, max_size=6),
        max_leaves=25,
    )


def _dump_yaml(value) -> str:
    try:
        return yaml.safe_dump(value, allow_unicode=True, default_flow_style=None)
    except Exception:  # noqa: BLE001 - a value PyYAML will not write: fall back to JSON
        return json.dumps(value, default=str)


MUTATIONS = [
    lambda t: t,
    lambda t: t[: len(t) // 2],
    lambda t: "- &a " + t + "\n- *a\n",
    lambda t: "x: &a [1]\ny: *a\n" + t,
    lambda t: t.replace("\n", "\r\n"),
    lambda t: t.replace(" ", "\t", 1),
    lambda t: "!!python/object/apply:os.system ['true']\n" + t,
    lambda t: "%YAML 1.1\n---\n" + t + "\n---\n" + t,
    lambda t: "[" * 25 + t + "]" * 25,
    lambda t: "- " + "[" * 60 + t,
    lambda t: '{"a":' * 30 + "1" + "}" * 30,
    lambda t: t + "\x00\x07",
    lambda t: "\ufeff" + t,
    lambda t: t + "\n" + "a: b\n" * 3,
    lambda t: t.replace(":", ": : ", 1),
    lambda t: t + "\n" + "x" * 5000,
]


@st.composite
def text_document(draw, keys: list[str], wrap: st.SearchStrategy | None = None) -> str:
    """A document rendered as YAML, JSON or CSV-ish text, then perhaps broken."""
    value = draw(document(keys))
    if wrap is not None:
        value = draw(wrap(value))
    fmt = draw(st.sampled_from(["yaml", "json", "csv", "raw"]))
    if fmt == "yaml":
        text = _dump_yaml(value)
    elif fmt == "json":
        text = json.dumps(value, allow_nan=True, default=str)
    elif fmt == "csv":
        rows = draw(st.lists(st.lists(JUNK.filter(lambda v: isinstance(v, str)), max_size=5), max_size=5))
        text = "\n".join([",".join(keys[:5])] + [",".join(r) for r in rows])
    else:
        text = draw(st.text(alphabet="[]{}:,-&*!|>?'\"#%@`\\ \t\nax0é\x00\r", max_size=200))
    return draw(st.sampled_from(MUTATIONS))(text)


def as_upload(
    text_strategy: st.SearchStrategy[str], names=("a.yaml", "a.json", "a.csv", "a.txt", "a.exe", "")
):
    """The text as a file with some name, or a binary file."""
    binary = st.binary(max_size=300).map(lambda b: Upload("junk.bin", b))
    utf16 = text_strategy.map(lambda t: Upload("a.yaml", t.encode("utf-16")))
    named = st.builds(
        lambda t, n: Upload(n or "noname", t.encode("utf-8", "surrogatepass")),
        text_strategy,
        st.sampled_from(names),
    )
    return st.one_of(named, binary, utf16)
