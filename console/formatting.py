"""How the console writes sizes and durations, everywhere (pages, progress text, reports).

Pure Python, no Django: the capacity pipeline's charts use it too. Sizes are binary (1024) with
the labels Django's ``filesizeformat`` uses on the other pages ("1.5 KB", "3.0 MB").
"""

from __future__ import annotations

UNITS = ("B", "KB", "MB", "GB", "TB", "PB")


def human_bytes(n: float | None) -> str:
    """1536 -> '1.5 KB'; None -> '–' (unknown)."""
    if n is None:
        return "–"
    value, unit = float(n), 0
    while abs(value) >= 1024 and unit < len(UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{value:.0f} {UNITS[unit]}" if unit == 0 else f"{value:.1f} {UNITS[unit]}"


def human_duration(seconds: float | None) -> str:
    """75 -> '1m 15s'; None -> 'unknown'."""
    if seconds is None:
        return "unknown"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {(s % 3600) // 60:02d}m"
