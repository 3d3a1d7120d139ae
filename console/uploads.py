"""The one bounded parser for uploaded and pasted text: YAML, JSON, CSV (pure: stdlib, PyYAML, settings).

Every topic batch, ACL batch, reassignment plan and pasted JSON setting is read here first, so
one set of limits holds everywhere:

* size: at most ``settings.UPLOAD_MAX_BYTES`` of UTF-8, checked before anything is parsed;
* depth: at most ``MAX_DEPTH`` nested collections. YAML is checked on the event stream as the
  composer takes each event, before it builds anything from it (the composer and constructor
  recurse once per level, and libyaml's C composer crashed the process on a 200 KB ``- [[[[…``); JSON is
  pre-scanned for brackets outside strings before ``json.loads`` recurses;
* no YAML anchors or aliases (32 KB of nested aliases expand to billions of nodes);
* YAML events come from libyaml's scanner and parser (state machines, one event at a time); the
  nodes and values from PyYAML's Python composer and safe constructor, never libyaml's composer
  or any other constructor. A raw surrogate is refused before libyaml reads the text as UTF-8.

Every refusal and every syntax error is one ``UploadError(message, line, column)``, 1-based.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from itertools import accumulate

import yaml
from django.conf import settings
from yaml import composer, constructor, cyaml, resolver

from console.formatting import human_bytes

MAX_DEPTH = 20  # the deepest real shape (a topic's assignment in a mapping) is 4 levels
ANCHORS_REFUSED = (
    "YAML anchors and aliases (&name, *name) are not allowed; "
    'quote a value that starts with & or *, e.g. host: "*"'
)


LONE_SURROGATE = (
    "a string holds an unpaired surrogate escape (\\ud800-\\udfff alone): "
    "it is not a character and cannot be stored or shown"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


class UploadError(ValueError):
    """Text that cannot be used, with where (1-based). ``kind``: size, depth, anchor or syntax."""

    def __init__(self, message: str, line: int = 1, column: int = 1, *, kind: str = "syntax") -> None:
        self.message, self.line, self.column, self.kind = message, line, column, kind
        super().__init__(f"line {line}, column {column}: {message}")


def max_bytes() -> int:
    return int(settings.UPLOAD_MAX_BYTES)


def check_size(text: str, limit: int | None = None) -> None:
    """Refuse text over ``limit`` (default ``UPLOAD_MAX_BYTES``) UTF-8 bytes before any parser sees it."""
    limit = limit or max_bytes()
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise UploadError(
            f"the text is {size:,} bytes; at most {limit:,} bytes ({human_bytes(limit)}) are accepted",
            kind="size",
        )


def _position(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _too_deep(line: int, column: int) -> UploadError:
    return UploadError(f"nested deeper than {MAX_DEPTH} levels", line, column, kind="depth")


# -- YAML ----------------------------------------------------------------------------------------


Composer, CParser = composer.Composer, cyaml.CParser


class _Loader(Composer, CParser, constructor.SafeConstructor, resolver.Resolver):
    """libyaml's scanner and parser (C) for the events, PyYAML's Python composer and safe
    constructor for the nodes and values; each event is vetted as it is taken, before use.

    libyaml's scanner and parser are state machines with heap stacks (no recursion) that produce
    one event at a time (reading ahead at most what a possible simple key needs, which from
    libyaml 0.2.6 stops at 1,000 levels: ``_yaml``), so vetting events bounds the composer's and
    constructor's recursion at ``MAX_DEPTH`` levels. libyaml's own composer (``CParser``'s
    ``get_node``/``get_single_node``, recursive in C) is never used: ``Composer`` comes first.
    The events are a tenth of the pure-Python scanner's and parser's cost.
    """

    def __init__(self, stream: str) -> None:
        CParser.__init__(self, stream)
        Composer.__init__(self)
        constructor.SafeConstructor.__init__(self)
        resolver.Resolver.__init__(self)
        self.nesting = 0

    def get_event(self) -> yaml.Event | None:
        """The next event, vetted. The composer only peeks at an event before taking it with this
        (an anchor's name, a node's kind): every event is vetted before anything is built from it,
        and a collection's start before the composer recurses into it."""
        return _vetted(self, CParser.get_event(self))


def _vetted(loader, event: yaml.Event | None) -> yaml.Event | None:
    """``event`` once it passes: no anchor or alias, at most ``MAX_DEPTH`` nested collections."""
    if isinstance(event, yaml.NodeEvent) and (isinstance(event, yaml.AliasEvent) or event.anchor is not None):
        mark = event.start_mark
        raise UploadError(ANCHORS_REFUSED, mark.line + 1, mark.column + 1, kind="anchor")
    if isinstance(event, yaml.CollectionStartEvent):
        loader.nesting += 1
        if loader.nesting > MAX_DEPTH:
            raise _too_deep(event.start_mark.line + 1, event.start_mark.column + 1)
    elif isinstance(event, yaml.CollectionEndEvent):
        loader.nesting -= 1
    return event


class _PureLoader(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader, each event vetted as it is produced: only for a text
    libyaml refuses as nested too deep for itself (see ``_yaml``)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.nesting = 0

    def _vet(self) -> None:
        if self.current_event is None and self.state:
            self.current_event = _vetted(self, self.state())

    def check_event(self, *choices: type) -> bool:
        self._vet()
        return super().check_event(*choices)

    def peek_event(self) -> yaml.Event | None:
        self._vet()
        return super().peek_event()

    def get_event(self) -> yaml.Event | None:
        self._vet()
        return super().get_event()


def _yaml(text: str, build: Callable[[_Loader], object]) -> object:
    check_size(text)
    surrogate = _SURROGATE.search(text)  # not UTF-8: libyaml reads the text as UTF-8 bytes
    if surrogate is not None:
        raise UploadError(
            f"unacceptable character #x{ord(surrogate.group()):04x}: a lone surrogate is not a character",
            *_position(text, surrogate.start()),
        )
    try:
        return _parse(_Loader, text, build)
    except _LibyamlTooDeep:
        # libyaml >= 0.2.6 stops at its own 1,000 levels while it scans ahead in a flow collection,
        # before it hands over a first event: the vetted pure-Python parser finds the level too
        # many (it reads no further than that, so this costs little).
        return _parse(_PureLoader, text, build)


class _LibyamlTooDeep(Exception):
    pass


def _parse(loader_class: type, text: str, build: Callable) -> object:
    loader = None
    try:
        loader = loader_class(text)
        return build(loader)
    except UploadError:
        raise
    except yaml.MarkedYAMLError as exc:
        if loader_class is _Loader and exc.problem == "exceeded maximum nesting depth":
            raise _LibyamlTooDeep from None
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        lines = text.count("\n") + 1
        if line > lines:  # libyaml puts the end of a text without a final newline on a line after it
            line, col = lines, len(text) - text.rfind("\n")
        raise UploadError(exc.problem or exc.context or "not valid YAML", line, col) from None
    except yaml.reader.ReaderError as exc:  # libyaml counts its position in UTF-8 bytes
        offset = exc.position
        if loader_class is _Loader:
            offset = len(text.encode("utf-8")[:offset].decode("utf-8", "ignore"))
        raise UploadError(
            f"unacceptable character #x{exc.character:04x}: {exc.reason}", *_position(text, offset)
        ) from None
    except yaml.YAMLError as exc:
        raise UploadError(str(exc)[:200]) from None
    except RecursionError:  # cannot happen below MAX_DEPTH; kept as a last line of defence
        raise _too_deep(1, 1) from None
    except (ValueError, OverflowError) as exc:  # a constructor's int()/date() on a hostile scalar
        raise UploadError(f"a value cannot be read: {str(exc)[:200]}") from None
    finally:
        if loader is not None:
            loader.dispose()


def compose_yaml(text: str) -> yaml.Node | None:
    """The YAML document as PyYAML nodes (with their marks); None for an empty document."""
    return _yaml(text, lambda loader: loader.get_single_node())


def load_yaml(text: str) -> object:
    """The YAML document as plain Python data (safe tags only)."""
    return _yaml(text, lambda loader: loader.get_single_data())


# -- JSON ----------------------------------------------------------------------------------------

# A JSON string (escapes included) or one bracket: brackets inside strings are skipped whole.
_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


# The same strings alone, and what is not a bracket: the fast pass below removes both (in C).
_JSON_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
# The same for a text without a backslash, as UTF-8 bytes (any other byte, a lone quote too, is 0).
_NOT_QUOTE_OR_BRACKET = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_PLAIN_STRINGS = re.compile(rb'"[^"]*"')
_BYTE_STEP = [0] * 256
_BYTE_STEP[ord("[")] = _BYTE_STEP[ord("{")] = 1
_BYTE_STEP[ord("]")] = _BYTE_STEP[ord("}")] = -1


def _check_json_depth(text: str) -> None:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    # Fast pass: the deepest nesting of the brackets left once strings and everything else are
    # removed (the strings are matched exactly where the scan below matches them); only a text
    # nested too deep is scanned again, token by token, for the position to report.
    if "\\" not in text:
        # No escapes (a plan file): a string runs from a quote to the next one, so only the quotes
        # and brackets are kept (bytes.translate) before the strings go; a third of the time.
        kept = text.encode("utf-8", "surrogatepass").translate(None, _NOT_QUOTE_OR_BRACKET)
        deepest = max(accumulate(map(_BYTE_STEP.__getitem__, _PLAIN_STRINGS.sub(b"", kept))), default=0)
    else:
        brackets = _NOT_BRACKETS.sub("", _JSON_STRINGS.sub("", text))
        deepest = max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)
    if deepest <= MAX_DEPTH:
        return
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _too_deep(*_position(text, match.start()))
        elif char in "]}":
            depth -= 1


# A \\uXXXX escape of a surrogate, and whether a low one follows it (a valid pair).
_JSON_SURROGATE = re.compile(
    r"(?<!\\)((?:\\\\)*)\\u([dD][89a-fA-F][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
)


def _check_json_surrogates(text: str) -> None:
    """Refuse a \\uD800-\\uDFFF escape that is not half of a pair (json.loads keeps it as is)."""
    if "\\u" not in text:
        return
    for match in _JSON_SURROGATE.finditer(text):
        high = int(match.group(2), 16) < 0xDC00
        if not (high and match.group(3)):
            raise UploadError(LONE_SURROGATE, *_position(text, match.start(2) - 2))


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def load_json(text: str, *, limit: int | None = None, allow_nan: bool = True) -> object:
    """Strict JSON as plain Python data (``limit``: a size bound other than UPLOAD_MAX_BYTES;
    ``allow_nan=False``: NaN, Infinity and -Infinity, which JSON does not have, are refused too)."""
    check_size(text, limit)
    _check_json_depth(text)
    _check_json_surrogates(text)
    try:
        return json.loads(text, parse_constant=None if allow_nan else _no_constant)
    except json.JSONDecodeError as exc:
        raise UploadError(exc.msg, exc.lineno, exc.colno) from None
    except RecursionError:  # cannot happen below MAX_DEPTH; kept as a last line of defence
        raise _too_deep(1, 1) from None
    except ValueError as exc:  # e.g. an integer longer than Python's int-string limit
        raise UploadError(f"a value cannot be read: {str(exc)[:200]}") from None


# -- CSV -----------------------------------------------------------------------------------------


def csv_rows(text: str) -> list[tuple[int, list[str]]]:
    """Every CSV row with the line it ends on (1-based)."""
    check_size(text)
    reader = csv.reader(io.StringIO(text))
    try:
        return [(reader.line_num, row) for row in reader]
    except csv.Error as exc:
        raise UploadError(str(exc), reader.line_num or 1, 1) from None
