"""The message browser's pure part: the limits, the query and its checks, decoding, filters, and one
record made into the message shown (masked first, filtered on what is shown).

No Django, no I/O: ``reads.browse`` feeds it the records the gateway read. A record is anything with
the fields of ``console.kafka.RawRecord`` (partition, offset, timestamp, timestamp_type, key, value,
headers, size).
"""

from __future__ import annotations

import binascii
import json
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.core.exceptions import ValidationError

from console.messages import jsondoc
from console.messages.masking import MASK, Rule, RuleInvalid, json_path, mask_headers, mask_value

MAX_MESSAGES = 500  # messages shown per request
MAX_BYTES = 4 << 20  # bytes read from Kafka per request (keys, values and headers)
TIME_LIMIT_S = 5  # seconds one request may read
MODES = ("offset", "timestamp", "newest", "oldest", "follow")
DECODES = ("auto", "text", "json", "hex")
MAX_FILTER = 500  # characters of one filter
MAX_REASON = 500


class BrowseInvalid(Exception):
    """A browse request that cannot be answered as asked (unknown topic, a partition or offset out of
    range, a mode without its value, a bad filter); the message says what to change."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class BrowseQuery:
    """What to read: where from (``mode`` and its value), how many, the filters and the decoding."""

    mode: str  # "offset" | "timestamp" | "newest" | "oldest" | "follow"
    partition: int | None  # None = every partition (offset mode needs one)
    offset: int | None = None  # mode offset
    timestamp_ms: int | None = None  # mode timestamp
    count: int = 50  # messages wanted, 1..MAX_MESSAGES
    cursor: dict[int, int] | None = None  # mode follow: {partition: next offset} from the last result
    key_contains: str = ""
    header: str = ""  # "name" (present) or "name=value"
    value_contains: str = ""
    json_path: str = ""  # "$.path" (exists) or "$.path=value" (equals; value as JSON, else as text)
    decode: str = "auto"
    unmasked_reason: str = ""  # non-empty = ask for unmasked (needs a grant with unmasked)


@dataclass(frozen=True)
class ShownMessage:
    """One message as shown (already masked)."""

    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: str
    key_kind: str
    value: str
    value_kind: str
    schema_id: int | None
    headers: tuple[tuple[str, str], ...]
    size: int
    masked_by: tuple[str, ...]  # the rules that changed it


@dataclass(frozen=True)
class BrowseResult:
    """A read's answer: the messages, whether they were masked and by which rules, where a follow
    continues, why it stopped before ``count`` (or "") and how many records were read."""

    messages: tuple[ShownMessage, ...]
    masked: bool
    rules: tuple[str, ...]
    cursor: dict[int, int]
    stopped: str
    scanned: int


class Record(Protocol):
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    size: int


def _whole(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


def check_query(q: BrowseQuery) -> None:
    """BrowseInvalid for a query no topic could answer (the topic's bounds are checked by reads)."""
    if q.mode not in MODES:
        raise BrowseInvalid(f"unknown mode '{q.mode}' (one of {', '.join(MODES)})")
    if not 1 <= q.count <= MAX_MESSAGES:
        raise BrowseInvalid(f"count must be 1 to {MAX_MESSAGES} (was {q.count})")
    if q.decode not in DECODES:
        raise BrowseInvalid(f"unknown decoding '{q.decode}' (one of {', '.join(DECODES)})")
    if q.partition is not None and q.partition < 0:
        raise BrowseInvalid(f"partition {q.partition} is out of range: partitions are numbered from 0")
    if q.mode == "offset" and (q.partition is None or q.offset is None):
        raise BrowseInvalid("mode offset needs a partition and an offset")
    if q.mode == "offset" and q.offset is not None and q.offset < 0:
        raise BrowseInvalid(f"offset {q.offset} is negative")
    if q.mode == "timestamp" and q.timestamp_ms is None:
        raise BrowseInvalid("mode timestamp needs a timestamp")
    if q.cursor and any(not _whole(n) for pair in q.cursor.items() for n in pair):
        raise BrowseInvalid("the follow cursor is {partition: offset}, both whole numbers >= 0")
    for name in ("key_contains", "header", "value_contains", "json_path"):
        if len(getattr(q, name)) > MAX_FILTER:
            raise BrowseInvalid(f"the {name.replace('_', ' ')} filter is longer than {MAX_FILTER} characters")
    if len(q.unmasked_reason) > MAX_REASON:
        raise BrowseInvalid(f"the reason is longer than {MAX_REASON} characters")
    filters_of(q)  # a bad JSON path is refused before anything is read


# -- decoding ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decoded:
    text: str
    kind: str  # "null", "json", "text", "hex" or "schema" (Confluent wire format: payload in hex)
    schema_id: int | None = None


def _hex(data: bytes) -> str:
    return binascii.hexlify(data, " ").decode("ascii")


def decode(data: bytes | None, how: str = "auto", doc: Any = jsondoc.UNPARSED) -> Decoded:
    """Bytes as shown: auto = the Confluent wire format (magic byte 0 and a 4-byte schema id) as its
    schema id and the payload in hex, else JSON (pretty) if it parses, text if UTF-8, else hex.
    ``doc``: the bytes' JSON document when it is known already (jsondoc.NOT_JSON: none)."""
    return Decoded(*_decoded(data, how, doc))


def _decoded(data: bytes | None, how: str, doc: Any = jsondoc.UNPARSED) -> tuple[str, str, int | None]:
    """``decode`` as (text, kind, schema id)."""
    if data is None:
        return "", "null", None
    if how == "hex":
        return _hex(data), "hex", None
    if how == "auto" and len(data) >= 5 and data[0] == 0:
        return _hex(data[5:]), "schema", struct.unpack(">i", data[1:5])[0]
    if how in ("auto", "json"):
        if doc is jsondoc.UNPARSED:
            doc = jsondoc.parse(data)
        if doc is not jsondoc.NOT_JSON:
            return jsondoc.pretty(doc), "json", None
    try:
        return data.decode("utf-8"), "text", None
    except UnicodeDecodeError:
        if how == "text":
            return data.decode("utf-8", "replace"), "text", None
        return _hex(data), "hex", None


def _text(data: bytes) -> str:
    """``decode(data, "text").text`` of bytes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


# -- filters ----------------------------------------------------------------------------------------


def _split_equals(text: str) -> tuple[str, str | None]:
    """``path=value`` at the top level (not inside brackets, not part of ==, !=, <=, >=)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "=" and depth == 0 and text[i - 1 : i] not in ("=", "!", "<", ">"):
            if text[i + 1 : i + 2] != "=":
                return text[:i].strip(), text[i + 1 :].strip()
    return text.strip(), None


@dataclass(frozen=True)
class Filters:
    key_contains: str = ""
    header_name: str = ""
    header_value: str | None = None
    value_contains: str = ""
    path: Any = None
    path_value: str | None = None

    @property
    def any(self) -> bool:
        return bool(self.key_contains or self.header_name or self.value_contains or self.path is not None)


def filters_of(q: BrowseQuery) -> Filters:
    """The query's filters, checked (BrowseInvalid for a JSON path that does not parse)."""
    name, wanted = _split_equals(q.header) if q.header else ("", None)
    path, path_value = None, None
    if q.json_path.strip():
        expression, path_value = _split_equals(q.json_path)
        try:
            path = json_path(expression)
        except RuleInvalid as exc:
            raise BrowseInvalid(f"JSON path filter: {exc}") from None
    return Filters(q.key_contains, name, wanted, q.value_contains, path, path_value)


def _equals(found: Any, wanted: str) -> bool:
    try:
        if json.loads(wanted) == found:
            return True
    except ValueError:
        pass
    return isinstance(found, str) and found == wanted


def _header_text(value: bytes | None) -> str:
    return decode(value, "text").text if value is not None else ""


def passes(
    f: Filters,
    key: bytes | None,
    headers: Sequence[tuple[str, bytes | None]],
    value: bytes | None,
    doc: Any = jsondoc.UNPARSED,
) -> bool:
    """Whether a message (as shown: masked when the read is) passes every filter (``doc``: the
    value's JSON document when known already)."""
    if f.key_contains and f.key_contains not in decode(key, "text").text:
        return False
    if f.header_name:
        found = [v for n, v in headers if n == f.header_name]
        if not found or (f.header_value is not None and f.header_value not in map(_header_text, found)):
            return False
    if f.value_contains and f.value_contains not in decode(value, "text").text:
        return False
    if f.path is not None:
        if doc is jsondoc.UNPARSED:
            doc = jsondoc.parse(value)
        matches = [] if doc is jsondoc.NOT_JSON else f.path.find(doc)
        if not matches or (f.path_value is not None and not any(_equals(m, f.path_value) for m in matches)):
            return False
    return True


# -- one record shown -------------------------------------------------------------------------------


def prepare(record: Record, rules: Sequence[Rule] | None, f: Filters, how: str) -> ShownMessage | None:
    """The record as shown (masked by ``rules``; None = an unmasked read), or None when a filter
    drops it. Filters see only the masked message: a filter is no oracle for a masked value."""
    return Preparer(rules, f, how)(record)


class Preparer:
    """``prepare`` for the records of one read: the rules sorted by kind and the decoding chosen once.

    With JSON-path rules alone, a value shown as JSON and no filter on the value's text (a browse's
    usual case), the masked document is only shown: it is not also written back as bytes (what a
    text filter or a regex rule would read), which ``mask_value`` does for the general case."""

    __slots__ = ("rules", "paths", "headers", "filters", "filtered", "how", "parse", "doc_only")

    def __init__(self, rules: Sequence[Rule] | None, f: Filters, how: str) -> None:
        self.rules = tuple(rules or ())
        self.paths = tuple(r for r in self.rules if r.kind == "json_path")
        self.headers = any(r.kind == "header" for r in self.rules)
        self.filters, self.filtered, self.how = f, f.any, how
        self.parse = f.path is not None or how in ("auto", "json")
        regex = any(r.kind == "regex" for r in self.rules)
        self.doc_only = bool(self.paths) and not regex and how in ("auto", "json") and not f.value_contains

    def __call__(self, record: Record) -> ShownMessage | None:
        value, headers, changed, doc = record.value, tuple(record.headers), [], jsondoc.UNPARSED
        rules, f, how = self.rules, self.filters, self.how
        shown_doc = False  # the value is shown as its (masked) document, pretty
        if self.doc_only:
            doc = jsondoc.parse(value)
            if doc is not jsondoc.NOT_JSON:
                for rule in self.paths:
                    doc, hit = rule.compiled.replace(doc, MASK)
                    if hit:
                        changed.append(rule.label)
                shown_doc, value = True, None  # only the masked document is read from here on
        elif rules:
            value, changed, doc = mask_value(value, rules)
        if self.headers:
            headers, header_changed = mask_headers(headers, rules)
            changed += header_changed
        if doc is jsondoc.UNPARSED and self.parse:
            doc = jsondoc.parse(value)  # once, for the JSON-path filter and the JSON shown
        if self.filtered and not passes(f, record.key, headers, value, doc):
            return None
        key_text, key_kind, _ = _decoded(record.key, how)
        text, kind, schema_id = (
            (jsondoc.pretty(doc), "json", None) if shown_doc else _decoded(value, how, doc)
        )
        # A ShownMessage without the frozen dataclass's __init__ (one guarded attribute write per
        # field, for each of up to 500 messages a read): the same instance, its fields in its
        # __dict__, compared, hashed and printed by the dataclass's own methods.
        message = _new(ShownMessage)
        _set(
            message,
            "__dict__",
            {
                "partition": record.partition,
                "offset": record.offset,
                "timestamp": record.timestamp,
                "timestamp_type": record.timestamp_type,
                "key": key_text,
                "key_kind": key_kind,
                "value": text,
                "value_kind": kind,
                "schema_id": schema_id,
                "headers": tuple([(n, "" if v is None else _text(v)) for n, v in headers]),
                "size": record.size,
                "masked_by": tuple(dict.fromkeys(changed)) if changed else (),
            },
        )
        return message


_new = object.__new__
_set = object.__setattr__


def merge(per_partition: Iterable[Sequence[ShownMessage]]) -> list[ShownMessage]:
    """Messages of several partitions in timestamp order (no timestamp first), then partition and offset."""
    everything = [m for ms in per_partition for m in ms]
    return sorted(
        everything, key=lambda m: (m.timestamp if m.timestamp is not None else -1, m.partition, m.offset)
    )


# -- the follow cursor as pages and the API carry it ----------------------------------------------------

_CURSOR = re.compile(r"^\d{1,9}:\d{1,19}(?:,\d{1,9}:\d{1,19})*$")


def parse_cursor(text: str) -> dict[int, int] | None:
    """A follow's cursor as text ("0:12,1:40": partition:next offset; one format for every door);
    None when absent, ValidationError when it is no such list."""
    if not text:
        return None
    if not _CURSOR.match(text):
        raise ValidationError("The cursor is not partition:offset pairs.")
    return {int(p): int(o) for p, o in (pair.split(":") for pair in text.split(","))}


def format_cursor(cursor: dict[int, int]) -> str:
    return ",".join(f"{p}:{o}" for p, o in sorted(cursor.items()))
