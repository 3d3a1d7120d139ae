"""Capture everything the console says during a run, and find secrets in it (issue 31's secret grep).

``Outputs`` collects what a run produced, each under a label naming where it came from: log records (every
logger at DEBUG, the Kafka clients' included), page and API bodies, command-line output, the audit trail and
notification bodies. ``leaks`` looks for each secret's value in them in the forms a careless line could
carry it: as is, base64 (standard and URL-safe, with or without padding), URL-encoded (quote and
quote_plus), hex, and JSON-escaped; a PEM key is also looked for line by line.
"""

from __future__ import annotations

import base64
import json
import logging
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

MIN_PEM_LINE = 24  # shorter PEM lines (a key's last one) could match by chance


@dataclass
class Outputs:
    """What a run produced: (label, text) pairs."""

    items: list[tuple[str, str]] = field(default_factory=list)

    def add(self, label: str, text: str | bytes) -> None:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        self.items.append((label, text))

    def labels(self) -> set[str]:
        return {label.split(":", 1)[0] for label, _ in self.items}


def forms(value: str) -> set[str]:
    """The ways ``value`` could show up in a text."""
    raw = value.encode()
    b64 = base64.b64encode(raw).decode()
    url64 = base64.urlsafe_b64encode(raw).decode()
    found = {
        value,
        b64,
        b64.rstrip("="),
        url64,
        url64.rstrip("="),
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
        raw.hex(),
        json.dumps(value)[1:-1],
    }
    if "-----BEGIN" in value:  # a PEM: its body lines, each enough to rebuild part of the key
        body = [line.strip() for line in value.splitlines() if line.strip() and "-----" not in line]
        found.update(line for line in body if len(line) >= MIN_PEM_LINE)
        found.add("".join(body))
    return {f for f in found if len(f) >= 8}


def leaks(outputs: Outputs, secrets: Mapping[str, str]) -> list[str]:
    """Every (secret, form, where) found: empty when nothing leaked."""
    found = []
    for name, value in secrets.items():
        needles = forms(value)
        for label, text in outputs.items:
            for needle in needles:
                at = text.find(needle)
                if at >= 0:
                    shown = "as is" if needle == value else f"as {needle[:12]}..."
                    before = text[max(0, at - 60) : at].replace("\n", " ")
                    found.append(f"{name} ({shown}) in {label}, after: {before!r}")
                    break
    return found


class _Collector(logging.Handler):
    def __init__(self, outputs: Outputs) -> None:
        super().__init__(level=logging.DEBUG)
        self.outputs = outputs
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("sandbox"):  # the simulated Kafka's own log, not the console's
            return
        try:
            text = self.format(record)
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is kept raw
            text = f"{record.msg!r} {record.args!r}"
        extra = {k: v for k, v in vars(record).items() if k not in _STANDARD}
        self.outputs.add(f"log:{record.name}", f"{text} {extra!r}" if extra else text)


_STANDARD = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}


@contextmanager
def logs_captured(outputs: Outputs) -> Iterator[None]:
    """Every log record at DEBUG and above, from every logger (also those that do not propagate)."""
    handler = _Collector(outputs)
    touched: list[tuple[logging.Logger, int]] = []
    root = logging.getLogger()
    loggers = [root] + [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    for lg in loggers:
        touched.append((lg, lg.level))
        if lg.level > logging.DEBUG or lg is root:
            lg.setLevel(logging.DEBUG)
    non_propagating = [lg for lg in loggers if not lg.propagate and lg is not root]
    for lg in (root, *non_propagating):
        lg.addHandler(handler)
    try:
        yield
    finally:
        for lg in (root, *non_propagating):
            lg.removeHandler(handler)
        for lg, level in touched:
            lg.setLevel(level)


def serialized(rows: Iterable) -> str:
    """Model rows as Django serializes them (every field, JSON)."""
    from django.core import serializers

    return serializers.serialize("json", list(rows))


__all__ = ["Outputs", "forms", "leaks", "logs_captured", "serialized"]
