"""JSON values of messages, pure: parsed once (strictly), written back pretty or compact, and JSON paths.

A read shows up to 500 values, so the common cases are fast: orjson's parser where it reads a value
as the stdlib does (no integer of 19 digits or more in the bytes: past 64 bits orjson gives a float,
the stdlib the exact integer), else the stdlib's C parser (exact integers of any size; NaN and
Infinity are not JSON), orjson's writer (the stdlib's indenting encoder is pure
Python), and plain paths (``$.a.b``, ``$.a[0]``, ``$.a[*].b``, ``$['a b']``) walked directly; any
other path (``$..a``, filters, slices) goes through jsonpath-ng, whose answers the plain walk
matches (tests/unit/test_messages_core.py holds both to the same matches).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from jsonpath_ng.exceptions import JSONPathError
from jsonpath_ng.ext import parse as parse_json_path


class _NotJson:
    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Any = _NotJson()  # what ``parse`` answers for bytes that are no JSON value
UNPARSED: Any = object()  # a value not parsed yet
MAX_PATH = 500
_START = frozenset(bytes([c]) for c in b'{["-0123456789tfn')


def _not_json(constant: str):
    raise ValueError(f"{constant} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_not_json)
# Digits as "0", every other byte as " ": a run of 19 digits is one of 19 zeros (a C-speed look; a
# regular expression costs ten times orjson's parse of a 1 KB value).
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_NUMBER = b"0" * 19  # an integer orjson may read as a float (past 64 bits)


def parse(data: bytes | None) -> Any:
    """The JSON value of ``data``, or NOT_JSON (only what can start JSON is tried). orjson first when
    its answer is the stdlib's (module docstring); what it refuses (a lone surrogate escaped, a number
    past a double's range, nesting past 1,024) is left to the stdlib, which decides."""
    if data is None or data.lstrip()[:1] not in _START:
        return NOT_JSON
    if _LONG_NUMBER not in data.translate(_DIGITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    try:
        return _DECODER.decode(data.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is one
        return NOT_JSON


def pretty(doc: Any) -> str:
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode("utf-8")
    except orjson.JSONEncodeError:  # an integer past 64 bits
        return json.dumps(doc, indent=2, ensure_ascii=False)


def compact(doc: Any) -> bytes:
    try:
        return orjson.dumps(doc)
    except orjson.JSONEncodeError:
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class PathInvalid(ValueError):
    """The text is not a JSON path (the message says why)."""


_STEP = re.compile(
    r"\.([A-Za-z_][A-Za-z0-9_]*)|\.\*|\[\*\]|\[(-?\d+)\]|\['([^'\\\]]*)'\]|\[\"([^\"\\\]]*)\"\]"
)
_ALL = object()
# Words jsonpath-ng's extended grammar reads as its own (``$.len`` ...): left to it.
_KEYWORDS = frozenset({"len", "sorted", "this", "keys", "where", "wherenot", "str", "sub", "split"})


def _plain_steps(text: str) -> list | None:
    """``$`` then fields, indexes and wildcards, as steps; None for any other path."""
    if not text.startswith("$"):
        return None
    steps, at = [], 1
    while at < len(text):
        m = _STEP.match(text, at)
        if m is None:
            return None
        name, index, quoted, dquoted = m.groups()
        if name is not None and name in _KEYWORDS:
            return None
        if index is not None:
            steps.append(int(index))
        elif name is not None or quoted is not None or dquoted is not None:
            steps.append(name if name is not None else quoted if quoted is not None else dquoted)
        else:
            steps.append(_ALL)
        at = m.end()
    return steps


def _children(node: Any, step: Any) -> list[tuple[Any, Any]]:
    """(container, key) of each child ``step`` selects in ``node``."""
    if step is _ALL:
        if isinstance(node, dict):
            return [(node, k) for k in node]
        return [(node, i) for i in range(len(node))] if isinstance(node, list) else []
    if isinstance(step, int):
        if isinstance(node, list) and -len(node) <= step < len(node):
            return [(node, step)]
        return []
    return [(node, step)] if isinstance(node, dict) and step in node else []


class JsonPath:
    """A checked JSON path: ``find`` its values in a document, ``replace`` them."""

    def __init__(self, text: str) -> None:
        text = text.strip()
        if not text:
            raise PathInvalid("the JSON path is empty")
        if len(text) > MAX_PATH:
            raise PathInvalid(f"the JSON path is longer than {MAX_PATH} characters")
        self.text = text
        self.steps = _plain_steps(text)
        plain = self.steps is not None and all(type(step) is str for step in self.steps)
        self.fields = tuple(self.steps) if plain and self.steps else ()
        try:
            self.parsed = parse_json_path(text)
        except (JSONPathError, Exception) as exc:  # noqa: BLE001 - its lexer and ext parser raise bare Exception
            raise PathInvalid(f"'{text}' is not a JSON path: {exc}") from None

    def _slots(self, doc: Any) -> list[tuple[Any, Any]]:
        if self.fields:  # ``$.a.b``: one dict after another, at most one slot (a masking rule's usual path)
            node = doc
            for name in self.fields[:-1]:
                if not isinstance(node, dict) or name not in node:
                    return []
                node = node[name]
            last = self.fields[-1]
            return [(node, last)] if isinstance(node, dict) and last in node else []
        slots = [(None, doc)]  # (container, key); the root has none
        for step in self.steps:
            slots = [
                child
                for container, key in slots
                for child in _children(doc if container is None else container[key], step)
            ]
        return slots

    def find(self, doc: Any) -> list[Any]:
        """The values the path matches."""
        if self.steps is None:
            return [m.value for m in self.parsed.find(doc)]
        return [doc if c is None else c[k] for c, k in self._slots(doc)]

    def replace(self, doc: Any, value: Any) -> tuple[Any, bool]:
        """The document with each match replaced by ``value``, and whether anything changed."""
        if self.steps is None:
            if all(found == value for found in self.find(doc)):
                return doc, False
            return self.parsed.update(doc, value), True
        changed = False
        for container, key in self._slots(doc):
            if container is None:
                return value, doc != value
            if container[key] != value:
                container[key], changed = value, True
        return doc, changed
