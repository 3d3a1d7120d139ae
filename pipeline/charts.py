"""Geometry for server-rendered SVG charts (no JavaScript, no CDN): the pages only draw what this returns."""

from __future__ import annotations

from datetime import UTC, datetime

from console.formatting import human_bytes


def _when(ms: int | datetime) -> datetime:
    return ms if isinstance(ms, datetime) else datetime.fromtimestamp(ms / 1000, tz=UTC)


def line_chart(
    points: list[tuple[datetime, float]],
    *,
    width: int = 640,
    height: int = 180,
    pad: int = 40,
    fmt=human_bytes,
) -> dict:
    """A time series as an SVG polyline with y ticks (min, middle, max) and the first/last time."""
    if not points:
        return {"empty": True, "width": width, "height": height}
    xs = [_when(t).timestamp() for t, _ in points]
    ys = [float(v) for _, v in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(0.0, min(ys)), max(ys)
    xspan, yspan = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    inner_w, inner_h = width - 2 * pad, height - 2 * pad

    def at(x: float, y: float) -> tuple[float, float]:
        return round(pad + (x - x0) / xspan * inner_w, 1), round(height - pad - (y - y0) / yspan * inner_h, 1)

    coords = [at(x, y) for x, y in zip(xs, ys, strict=True)]
    ticks = [{"y": at(x0, v)[1], "label": fmt(v)} for v in (y0, (y0 + y1) / 2, y1)]
    return {
        "empty": False,
        "width": width,
        "height": height,
        "pad": pad,
        "right": width - pad,
        "bottom": height - pad,
        "points": " ".join(f"{x},{y}" for x, y in coords),
        "ticks": ticks,
        "first": _when(points[0][0]).strftime("%Y-%m-%d %H:%M"),
        "last": _when(points[-1][0]).strftime("%Y-%m-%d %H:%M"),
        "last_value": fmt(ys[-1]),
        "last_x": coords[-1][0],
        "last_y": coords[-1][1],
    }


def bar_chart(
    items: list[tuple[str, float, str]],
    *,
    width: int = 640,
    bar: int = 18,
    gap: int = 6,
    label_w: int = 200,
    limit: float | None = None,
) -> dict:
    """Horizontal bars: (label, value, text shown after the bar); ``limit`` draws a capacity line."""
    if not items:
        return {"empty": True, "width": width, "height": bar}
    top = max([v for _, v, _ in items] + [limit or 0]) or 1.0
    span = width - label_w - 120
    rows = []
    for i, (label, value, text) in enumerate(items):
        rows.append(
            {
                "label": label,
                "text": text,
                "y": i * (bar + gap),
                "text_y": i * (bar + gap) + bar - 5,
                "width": round(max(0.0, value) / top * span, 1),
            }
        )
    height = len(items) * (bar + gap)
    return {
        "empty": False,
        "width": width,
        "height": height,
        "bar": bar,
        "x": label_w,
        "rows": rows,
        "text_x": label_w + span + 8,
        "limit_x": round(label_w + (limit or 0) / top * span, 1) if limit else None,
    }
