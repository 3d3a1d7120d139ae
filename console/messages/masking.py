"""Masking rules, pure: checked when a rule is added, applied to a message before it leaves the server.

Three kinds: ``json_path`` (jsonpath-ng) replaces each value the path matches in a JSON value with
``***``; ``header`` replaces the value of the headers of that name (case-insensitively: masking more is
the safe side) with ``***``; ``regex`` (RE2 through console/patterns.py, linear time) replaces each
match in the value's text with ``***``. A value that is not UTF-8 is matched as Latin-1, byte for
byte, so a readable secret inside a binary value is masked too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from console.messages import jsondoc
from console.patterns import PatternError, compile_pattern

MASK = "***"
KINDS = ("json_path", "header", "regex")
MAX_EXPRESSION = 500


class RuleInvalid(ValueError):
    """A masking rule (or a JSON path filter) that cannot be applied; the message says why."""


def json_path(expression: str) -> jsondoc.JsonPath:
    """The compiled JSON path, or RuleInvalid naming the parser's complaint."""
    try:
        return jsondoc.JsonPath(expression)
    except jsondoc.PathInvalid as exc:
        raise RuleInvalid(str(exc)) from None


@dataclass(frozen=True)
class Rule:
    """One masking rule as the browser applies it (``compiled`` checked when it was made)."""

    kind: str
    expression: str
    prefix: str = ""
    compiled: Any = None

    @property
    def label(self) -> str:
        """The rule as text, shown with every read it masks and named in each message it changed."""
        where = f"topics '{self.prefix}*'" if self.prefix else "every topic"
        return f"{self.kind} {self.expression} ({where})"

    def applies_to(self, topic: str) -> bool:
        return topic.startswith(self.prefix)


@lru_cache(maxsize=1024)
def make_rule(kind: str, expression: str, prefix: str = "") -> Rule:
    """A checked rule, or RuleInvalid (unknown kind, bad JSON path, bad regex, no header name).
    Kept by its text: every read compiles the rules in force, and a JSON path takes ~1 ms to parse;
    a rule and its compiled form are never changed once made."""
    if kind not in KINDS:
        raise RuleInvalid(f"unknown masking kind '{kind}' (one of {', '.join(KINDS)})")
    if kind == "json_path":
        path = json_path(expression)
        return Rule(kind, path.text, prefix, path)
    if kind == "header":
        name = expression.strip()
        if not name or len(name) > MAX_EXPRESSION:
            raise RuleInvalid("a header rule names the header (1 to 500 characters)")
        return Rule(kind, name, prefix, name.lower())
    if not expression:
        raise RuleInvalid("the regular expression is empty")
    try:
        pattern = compile_pattern(expression)
    except PatternError as exc:
        raise RuleInvalid(f"'{expression}' is not a regular expression RE2 accepts: {exc}") from None
    if pattern.search("") is not None:
        raise RuleInvalid(f"'{expression}' matches the empty text: it would mask between every character")
    return Rule(kind, expression, prefix, pattern)


def rules_for(rules: Iterable[Rule], topic: str) -> tuple[Rule, ...]:
    """The rules in force for a topic: those of every prefix the topic's name starts with."""
    return tuple(r for r in rules if r.applies_to(topic))


def _text(data: bytes) -> tuple[str, str]:
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def mask_value(
    value: bytes | None, rules: Sequence[Rule], doc: Any = jsondoc.UNPARSED
) -> tuple[bytes | None, list[str], Any]:
    """The value with the JSON-path and regex rules applied, the labels of those that changed it, and
    its JSON document as masked (``doc``: the value parsed already, if it was; UNPARSED when the
    masked value must be parsed again)."""
    changed: list[str] = []
    if value is None:
        return None, changed, jsondoc.NOT_JSON
    paths = [r for r in rules if r.kind == "json_path"]
    if paths:
        if doc is jsondoc.UNPARSED:
            doc = jsondoc.parse(value)
        if doc is not jsondoc.NOT_JSON:
            for rule in paths:
                doc, hit = rule.compiled.replace(doc, MASK)
                if hit:
                    changed.append(rule.label)
            if changed:
                value = jsondoc.compact(doc)
    for rule in (r for r in rules if r.kind == "regex"):
        text, encoding = _text(value)
        masked = rule.compiled.sub(MASK, text)
        if masked != text:
            changed.append(rule.label)
            value = masked.encode(encoding)  # Latin-1 back to the same bytes, *** in place
            doc = jsondoc.UNPARSED
    return value, changed, doc


def mask_headers(
    headers: Sequence[tuple[str, bytes | None]], rules: Sequence[Rule]
) -> tuple[tuple[tuple[str, bytes | None], ...], list[str]]:
    """The headers with the header rules applied, and the labels of those that changed them."""
    named = {r.compiled: r for r in rules if r.kind == "header"}
    if not named:
        return tuple(headers), []
    out, changed = [], []
    for name, value in headers:
        rule = named.get(name.lower())
        if rule is None:
            out.append((name, value))
            continue
        out.append((name, MASK.encode()))
        if rule.label not in changed:
            changed.append(rule.label)
    return tuple(out), changed
