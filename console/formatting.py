"""How the console writes sizes and durations, everywhere (pages, progress text, reports).

Pure Python, no Django: the capacity pipeline's charts use it too; the pages read it through the
``console_format`` template filters. Sizes are binary (1024) and named so ("1.5 KiB", "3.0 MiB").
"""

from __future__ import annotations

UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def human_bytes(n: float | None) -> str:
    """1536 -> '1.5 KiB'; None -> '–' (unknown)."""
    if n is None:
        return "–"
    if type(n) is int and 0 <= n < 1 << 53:  # the common case, ~40% faster (the poll writes 10,000s)
        if n < 1024:
            return f"{n} B"
        value, unit = n / 1024, 1
        while round(value, 1) >= 1024 and unit < len(UNITS) - 1:
            value, unit = value / 1024, unit + 1
        return f"{value:.1f} {UNITS[unit]}"
    try:
        value, unit = float(n), 0
    except OverflowError:  # an integer beyond any float (typed into a form): as it was typed
        return f"{n:,} B"
    # 1023.96 KiB rounds to "1024.0 KiB" at one decimal: that is "1.0 MiB"
    while round(abs(value), 0 if unit == 0 else 1) >= 1024 and unit < len(UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{value:.0f} {UNITS[unit]}" if unit == 0 else f"{value:.1f} {UNITS[unit]}"


def human_count(n: float | None) -> str:
    """1234567 -> '1,234,567'; Long.MAX (Kafka's "no limit") -> 'unlimited'; None -> '–'."""
    if n is None:
        return "–"
    if n == LONG_MAX:
        return "unlimited"
    return f"{n:,}" if isinstance(n, int) else f"{n:,.1f}".removesuffix(".0")


def human_millis(ms: float | None) -> str:
    """604800000 -> '7 d', 1500 -> '1 s 500 ms'; Long.MAX -> 'infinite'; None -> '–'."""
    if ms is None:
        return "–"
    if ms == LONG_MAX:
        return "infinite"
    return config_duration(int(round(ms)))


def lag_level(lag: int | None, threshold: float) -> str:
    """How a lag reads beside the group-lag alert rule's threshold: 'none' (caught up), 'ok' (behind,
    within the threshold) or 'over' (the rule fires above it)."""
    if not lag or lag <= 0:
        return "none"
    return "over" if lag > threshold else "ok"


def human_duration(seconds: float | None) -> str:
    """A duration in seconds as the console writes every duration: 75 -> '1 min 15 s', 4 -> '4 s',
    0.25 -> '250 ms'; whole seconds from a second up, at most two units ('≈' when cut); None -> 'unknown'."""
    if seconds is None:
        return "unknown"
    if seconds == 0:
        return "0 s"
    if abs(seconds) < 1:
        return config_duration(int(round(seconds * 1000)))
    return config_duration(int(round(seconds)) * 1000)


# -- config values ---------------------------------------------------------------------------------
#
# A config page shows Kafka's raw value and, beside it, what it means: ``604800000`` (retention.ms)
# is "7 d", ``1073741824`` (segment.bytes) is "1 GiB". Config sizes use IEC labels (GiB, MiB):
# they are set in powers of 1024 and the label says so. The unit comes from the key's name only
# (``*.ms``, ``*.bytes``, the throttle rates ...); every other key is left raw.

LONG_MAX = 2**63 - 1
IEC_UNITS = (("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))
_MS_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1_000), ("ms", 1))
# Key suffix -> milliseconds per unit of the value.
_DURATION_SUFFIXES = ((".ms", 1), (".seconds", 1_000), (".minutes", 60_000), (".hours", 3_600_000))
_ZERO = {1: "0 ms", 1_000: "0 s", 60_000: "0 min", 3_600_000: "0 h"}  # zero in the key's own unit
_RATE_KEYS = frozenset({"leader.replication.throttled.rate", "follower.replication.throttled.rate"})
_RATE_SUFFIX = ".bytes.per.second"

# Where Kafka gives -1 (or -2) a meaning of its own, per key (with or without the broker's "log." prefix).
_MINUS_ONE = {
    "retention.ms": "infinite",
    "retention.minutes": "infinite",
    "retention.hours": "infinite",
    "retention.bytes": "unlimited",
    "local.retention.ms": "infinite",
    "local.retention.bytes": "unlimited",
    "queued.max.request.bytes": "unlimited",
    "socket.send.buffer.bytes": "OS default",
    "socket.receive.buffer.bytes": "OS default",
}
_MINUS_TWO = {
    "local.retention.ms": "as retention.ms",
    "local.retention.bytes": "as retention.bytes",
}


def _special(name: str, n: int) -> str | None:
    bare = name[4:] if name.startswith("log.") else name
    if n == -1:
        return _MINUS_ONE.get(bare)
    if n == -2:
        return _MINUS_TWO.get(bare)
    return None


def _decimal(n: int, unit: int) -> tuple[str, bool]:
    """``n / unit`` with at most two decimals, and whether that is exact."""
    hundredths, rest = divmod(n * 100, unit)
    if rest * 2 >= unit:
        hundredths += 1
    text = f"{hundredths // 100}.{hundredths % 100:02d}".rstrip("0").rstrip(".")
    return text, rest == 0


def config_bytes(n: int) -> str:
    """1073741824 -> '1 GiB', 1610612736 -> '1.5 GiB', 1048588 -> '≈ 1 MiB', 512 -> '512 B'."""
    sign, n = ("-" if n < 0 else ""), abs(n)
    for label, unit in IEC_UNITS:
        if n >= unit:
            text, exact = _decimal(n, unit)
            return f"{'' if exact else '≈ '}{sign}{text} {label}"
    return f"{sign}{n} B"


def config_duration(ms: int) -> str:
    """604800000 -> '7 d', 5400000 -> '1 h 30 min', 500 -> '500 ms'; at most two units ('≈' when cut)."""
    sign, rest = ("-" if ms < 0 else ""), abs(ms)
    if rest == 0:
        return "0 ms"
    parts: list[str] = []
    for label, unit in _MS_UNITS:
        if rest >= unit:
            count, rest = divmod(rest, unit)
            parts.append(f"{count} {label}")
            if len(parts) == 2:
                break
        elif parts:
            break  # "1 d 0 h 5 min" reads as "1 d ..." — never skip a unit in between
    text = " ".join(parts)
    return f"{'≈ ' if rest else ''}{sign}{text}"


def _kind(name: str) -> tuple[str, int] | None:
    """('duration', ms per unit), ('bytes', 1), ('rate', 1) or None, from the key's name."""
    if name in _RATE_KEYS or name.endswith(_RATE_SUFFIX):
        return "rate", 1
    for suffix, per_unit in _DURATION_SUFFIXES:
        if name.endswith(suffix):
            return "duration", per_unit
    if name.endswith(".bytes"):
        return "bytes", 1
    return None


def human_config_value(name: str, value: str | None) -> str | None:
    """What a config's raw value means, or None when it should be shown raw only.

    ``retention.ms=604800000`` -> '7 d'; ``segment.bytes=1073741824`` -> '1 GiB';
    ``leader.replication.throttled.rate=10485760`` -> '10 MiB/s'; ``retention.ms=-1`` ->
    'infinite'; ``retention.bytes=-1`` -> 'unlimited'; Long.MAX_VALUE (Kafka's "no limit") ->
    'infinite' for a duration, 'unlimited' for a size or rate. A key of no unit: Long.MAX ->
    'unlimited' (``flush.messages``), 10,000 or more grouped ('2,147,483,647'). Non-numeric values,
    lists and small counts give None.
    """
    kind = _kind(name)
    if value is None:
        return None
    try:
        n = int(value.strip())
    except ValueError:
        return None
    if kind is None:  # a count (flush.messages, max.connections): Long.MAX is "no limit", large ones grouped
        return human_count(n) if n == LONG_MAX or abs(n) >= 10_000 else None
    special = _special(name, n)
    if special is not None:
        return special
    what, per_unit = kind
    if n == LONG_MAX:
        return "infinite" if what == "duration" else "unlimited"
    if n < 0:
        return None  # a negative value Kafka gives no documented meaning to: raw only
    if what == "duration":
        if n > LONG_MAX // per_unit:
            return None
        return _ZERO[per_unit] if n == 0 else config_duration(n * per_unit)
    if what == "rate":
        return f"{config_bytes(n)}/s"
    return config_bytes(n)


def config_text(name: str, value: object) -> str:
    """A config's value in a sentence (a request under review, a plan): what it means when that is
    exact ('retention.ms' 604800000 -> '7 d'), the exact value grouped with its rounded meaning
    ('1,048,588 (≈ 1 MiB)'), else the value as given."""
    text = "" if value is None else str(value)
    human = human_config_value(name, text)
    if human is None:
        return text
    if not human.startswith("≈"):
        return human
    return f"{int(text):,} ({human})"
