"""Geometry for server-rendered SVG charts (no JavaScript, no CDN): the pages only draw what this returns.

Every text the charts draw is placed from its estimated width (:func:`text_width`, an upper bound
for the common sans-serif fonts), so margins grow with the labels instead of cutting them off; a
label longer than its column is shortened with "…" and the page puts the full text in a tooltip.
:func:`text_boxes` gives the box of every text of a chart, for tests that check they fit.
"""

from __future__ import annotations

from datetime import UTC, datetime

from console.formatting import human_bytes

# Advance widths in em, rounded up from DejaVu Sans (the widest of the usual sans-serif fonts,
# and Chromium's sans-serif on Debian); anything not listed counts as wide.
_NARROW = dict.fromkeys("il.,:;'|!", 0.34) | dict.fromkeys("fjtI()[] /-·", 0.42) | {"r": 0.42}
_WIDE = dict.fromkeys("mwMW%@", 1.0)
_UPPER = 0.8
_OTHER = 0.66  # digits, most lower case letters, + × _ = ~ …
LINE_HEIGHT = 1.2  # em, for vertical room
ELLIPSIS = "…"


def char_width(ch: str) -> float:
    if ch in _NARROW:
        return _NARROW[ch]
    if ch in _WIDE:
        return _WIDE[ch]
    if ch.isupper():
        return _UPPER
    return _OTHER if ch.isascii() or ch in "×…" else 1.0


def text_width(text: str, size: float) -> float:
    """An upper bound of the rendered width of ``text`` at ``size`` px."""
    return round(sum(char_width(c) for c in str(text)) * size, 1)


def fit_text(text: str, max_w: float, size: float) -> str:
    """``text`` if it fits in ``max_w`` px, else its longest prefix that fits with "…" after it."""
    text = str(text)
    if text_width(text, size) <= max_w:
        return text
    room, out = max_w - char_width(ELLIPSIS) * size, []
    for ch in text:
        room -= char_width(ch) * size
        if room < 0:
            break
        out.append(ch)
    return "".join(out).rstrip() + ELLIPSIS


def text_boxes(chart: dict) -> list[tuple[str, float, float, float, float]]:
    """(text, left, top, right, bottom) of every text a chart draws, with the estimated widths."""
    boxes = []
    for t in chart.get("texts", ()):
        w = text_width(t["text"], chart["font"])
        left = {"start": t["x"], "middle": t["x"] - w / 2, "end": t["x"] - w}[t["anchor"]]
        boxes.append((t["text"], left, t["y"] - chart["font"], left + w, t["y"] + chart["font"] * 0.3))
    return boxes


def _when(ms: int | datetime) -> datetime:
    return ms if isinstance(ms, datetime) else datetime.fromtimestamp(ms / 1000, tz=UTC)


def line_chart(
    *series: tuple[str, list[tuple[int | datetime, float]]],
    width: int = 640,
    height: int = 190,
    font: int = 11,
    fmt=human_bytes,
) -> dict:
    """Time series (``(legend, [(time, value)])``, one polyline each) on one y axis.

    The y ticks are the minimum, middle and maximum; the legend (with each series' last value)
    runs along the top, the first and the last time along the bottom.
    """
    series = tuple((name, pts) for name, pts in series if pts)
    if not series:
        return {"empty": True, "width": width, "height": height}
    xs = [_when(t).timestamp() for _, pts in series for t, _ in pts]
    ys = [float(v) for _, pts in series for _, v in pts]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(0.0, min(ys)), max(ys)
    xspan, yspan = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    ticks = [(v, fmt(v)) for v in (y0, (y0 + y1) / 2, y1)]
    first, last = (_when(t).strftime("%Y-%m-%d %H:%M") for t in (x0 * 1000, x1 * 1000))
    legend = [f"{name}: {fmt(float(pts[-1][1]))}" for name, pts in series]
    swatch, gap, edge = 18, 16, 4
    left = edge + max(text_width(label, font) for _, label in ticks) + 6
    right_pad = 8
    # Wide enough for the legend in one row and for both time labels, however long the labels are.
    legend_w = sum(swatch + 4 + text_width(t, font) for t in legend) + gap * (len(legend) - 1)
    width = max(
        width,
        round(left + text_width(first, font) + 24 + text_width(last, font) + right_pad),
        round(edge + legend_w + edge),
    )
    top, bottom = round(font * 2.4), height - round(font * 2.2)
    right = width - right_pad

    def at(x: float, y: float) -> tuple[float, float]:
        return (
            round(left + (x - x0) / xspan * (right - left), 1),
            round(bottom - (y - y0) / yspan * (bottom - top), 1),
        )

    lines, x = [], float(edge)
    for i, ((name, pts), text) in enumerate(zip(series, legend, strict=True)):
        coords = [at(_when(t).timestamp(), float(v)) for t, v in pts]
        lines.append(
            {
                "name": name,
                "index": i,
                "points": " ".join(f"{cx},{cy}" for cx, cy in coords),
                "last_x": coords[-1][0],
                "last_y": coords[-1][1],
                "legend": text,
                "legend_x": round(x, 1),
                "swatch_end": round(x + swatch, 1),
                "legend_text_x": round(x + swatch + 4, 1),
            }
        )
        x += swatch + 4 + text_width(text, font) + gap
    legend_y = round(font * 1.2, 1)
    time_y = height - round(font * 0.6, 1)
    tick_rows = [{"y": at(x0, v)[1], "label": label} for v, label in ticks]
    texts = [
        {"text": t["label"], "x": left - 6, "y": t["y"] + font * 0.35, "anchor": "end"} for t in tick_rows
    ]
    texts += [
        {"text": ln["legend"], "x": ln["legend_text_x"], "y": legend_y, "anchor": "start"} for ln in lines
    ]
    texts += [
        {"text": first, "x": left, "y": time_y, "anchor": "start"},
        {"text": last, "x": right, "y": time_y, "anchor": "end"},
    ]
    return {
        "empty": False,
        "width": width,
        "height": height,
        "font": font,
        "left": left,
        "right": right,
        "top": top,
        "bottom": bottom,
        "series": lines,
        "ticks": tick_rows,
        "tick_x": left - 6,
        "legend_y": legend_y,
        "swatch_y": round(legend_y - font * 0.35, 1),
        "first": first,
        "last": last,
        "time_y": time_y,
        "texts": texts,
    }


def bar_chart(
    items: list[tuple[str, float, str]],
    *,
    width: int = 640,
    bar: int = 18,
    gap: int = 6,
    font: int = 12,
    max_label_w: int = 260,
    min_span: int = 160,
    limit: float | None = None,
) -> dict:
    """Horizontal bars: (label, value, text shown after the bar); ``limit`` draws a capacity line.

    The label column is as wide as the longest label (up to ``max_label_w``; longer labels are
    shortened with "…", the full one is the row's tooltip), the text column as wide as the longest
    text; the bars get the rest, at least ``min_span`` (the chart grows if it must).
    """
    if not items:
        return {"empty": True, "width": width, "height": bar}
    edge, pad = 4, 8
    label_w = min(max_label_w, max(text_width(label, font) for label, _, _ in items))
    text_w = max(text_width(text, font) for _, _, text in items)
    x = edge + label_w + pad
    span = max(min_span, width - x - pad - text_w - edge)
    width = round(x + span + pad + text_w + edge)
    top = max([v for _, v, _ in items] + [limit or 0]) or 1.0
    rows, texts = [], []
    for i, (label, value, text) in enumerate(items):
        y = i * (bar + gap)
        baseline = y + round((bar + font * 0.7) / 2)
        short = fit_text(label, label_w, font)
        rows.append(
            {
                "label": label,
                "short": short,
                "text": text,
                "y": y,
                "text_y": baseline,
                "width": round(max(0.0, value) / top * span, 1),
            }
        )
        texts += [
            {"text": short, "x": x - pad, "y": baseline, "anchor": "end"},
            {"text": text, "x": x + span + pad, "y": baseline, "anchor": "start"},
        ]
    height = len(items) * (bar + gap)
    return {
        "empty": False,
        "width": width,
        "height": height,
        "font": font,
        "bar": bar,
        "x": round(x, 1),
        "label_x": round(x - pad, 1),
        "rows": rows,
        "text_x": round(x + span + pad, 1),
        "limit_x": round(x + (limit or 0) / top * span, 1) if limit else None,
        "texts": texts,
    }
