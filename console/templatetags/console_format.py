"""Human values on every page: ``{% load console_format %}`` then ``{{ n|size }}``, ``{{ ms|millis }}``.

Each filter reads ``console.formatting`` (the one module that decides how a value reads) and puts the
raw value in a ``title`` attribute, so hovering shows what Kafka said (``1073741824 bytes`` behind
"1.0 GiB"); a value that reads the same raw is shown bare. The API keeps raw values: these filters
are for templates only. A value that is not a number (``None``, "", text) is shown as it is ("–" for
nothing at all), never as an error.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from console import formatting

register = template.Library()

Number = int | float


def _number(value: object) -> Number | None:
    """``value`` as an int (or a float when it has a fraction); None when it is not a number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return value
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def _raw_text(value: object) -> str:
    return "–" if value is None else str(value)


def _shown(text: str, raw: object, unit: str) -> SafeString:
    """``text``, with the raw value (and its unit) on hover when the two differ."""
    if text in (str(raw), f"{raw} {unit}"):  # reads as it is: nothing to hover for
        return format_html("{}", text)
    return format_html('<span class="hv" title="{}">{}</span>', f"{raw} {unit}".strip(), text)


def _filter(human, unit: str):
    def apply(value: object) -> SafeString:
        n = _number(value)
        if n is None:
            return format_html("{}", _raw_text(value))
        return _shown(human(n), n, unit)

    return apply


@register.filter(is_safe=True)
def size(value: object) -> SafeString:
    """Bytes with binary units named as such: 1073741824 -> '1.0 GiB'."""
    return _filter(formatting.human_bytes, "bytes")(value)


@register.filter(is_safe=True)
def rate(value: object) -> SafeString:
    """Bytes per second: 10485760 -> '10.0 MiB/s'."""
    return _filter(lambda n: f"{formatting.human_bytes(n)}/s", "bytes/s")(value)


def _human_epoch_ms(ms: float | None) -> str:
    """A time Kafka gives as milliseconds since the epoch, in UTC: 1795811717288 -> '2026-11-27 20:35:17 UTC';
    a negative one (Kafka's "none") -> '–'."""
    if ms is None or ms < 0:
        return "–"
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return str(int(ms))


@register.filter(is_safe=True)
def epoch_ms(value: object) -> SafeString:
    """Milliseconds since the epoch as a UTC time: 1795811717288 -> '2026-11-27 20:35:17 UTC'."""
    return _filter(_human_epoch_ms, "ms since the epoch")(value)


@register.filter(is_safe=True)
def millis(value: object) -> SafeString:
    """A duration in milliseconds: 604800000 -> '7 d'; Long.MAX -> 'infinite'."""
    return _filter(formatting.human_millis, "ms")(value)


@register.filter(is_safe=True)
def seconds(value: object) -> SafeString:
    """A duration in seconds: 75 -> '1m 15s'."""
    return _filter(formatting.human_duration, "s")(value)


@register.filter(is_safe=True)
def count(value: object) -> SafeString:
    """A count grouped by thousands: 1234567 -> '1,234,567'; Long.MAX -> 'unlimited'."""
    return _filter(formatting.human_count, "")(value)


@register.filter(is_safe=True)
def config(value: object, name: str) -> SafeString:
    """A config's value as it reads, by the key's name (``console.formatting.human_config_value``):
    ``{{ value|config:"retention.ms" }}`` -> '7 d'; a value of no known meaning is shown raw."""
    text = None if value is None else formatting.human_config_value(name, str(value))
    if text is None:
        return format_html("{}", _raw_text(value))
    return _shown(text, value, "")


@register.filter(is_safe=True)
def with_meaning(value: object, name: str) -> SafeString:
    """A recorded value kept exact, its meaning beside it: the audit trail's before/after of a config
    (``"1048588"`` for ``max.message.bytes`` -> ``"1048588" (≈ 1 MiB)``). ``value`` may be JSON text, as
    the audit's diff holds it; a value of no known meaning is shown as it is."""
    if value is None:
        return format_html("{}", "—")
    text = str(value)
    try:
        inner = json.loads(text)
    except ValueError:
        inner = text
    scalar = inner if isinstance(inner, str | int) and not isinstance(inner, bool) else None
    meaning = None if scalar is None else formatting.human_config_value(name, str(scalar))
    if meaning is None:
        return format_html("{}", text)
    return format_html('<span class="raw">{}</span> <span class="muted">({})</span>', text, meaning)


@register.filter
def lag_level(value: object, threshold: object) -> str:
    """'none', 'ok' or 'over' for a lag beside the group-lag rule's threshold (a CSS class suffix)."""
    n, limit = _number(value), _number(threshold)
    if n is None or limit is None:
        return "none"
    return formatting.lag_level(int(n), float(limit))
