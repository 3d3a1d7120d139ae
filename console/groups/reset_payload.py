"""A consumer group offset reset's stored payload (a ``group.offsets.reset`` request's, a held
reset's): the reset spec, the attached dry run, its digest, and how the group as it is now
differs from the reviewed dry run (no I/O here).

The payload stored with a request::

    {"group": "team-a.billing",
     "reset": {"mode": "shift-by", "scope": "all-topics", "topic": "", "partitions": [],
               "value": -35, "file_offsets": [], "command": "--shift-by -35 --all-topics"},
     "dry_run": {"columns": [...COLUMNS], "rows": [[topic, partition, current, new, lag_before,
                 lag_after, log_start, log_end, note], ...], "partitions": 2, "changed": 2,
                 "lag_before": 100, "lag_after": 165, "members": ""},
     "plan_sha256": "…"}

The digest is the groups area's: SHA-256 of the sorted ``[topic, partition, new offset]`` rows as
compact JSON, so it equals the ``plan_sha256`` of the ``group.offsets.reset`` event that runs it.
The worker runs exactly the reviewed new offsets (a from-file spec built from the rows).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from console.groups.core import MODES, SCOPES, ResetPlan, ResetPlanError, ResetSpec

COLUMNS = ("topic", "partition", "current", "new", "lag_before", "lag_after", "log_start", "log_end", "note")
MAX_PARTITIONS = 10_000  # a request names every partition in its payload and its audit events
MAX_GROUP_ID = 249  # the request's resource is "group:<id>" (300 characters at most)


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ResetPlanError([f"{what} must be a whole number"])
    text = str(value).strip()
    body = text[1:] if text[:1] == "-" else text
    if not (body.isascii() and body.isdigit() and len(body) <= 19):
        raise ResetPlanError([f"{what} must be a whole number"])
    return int(text)


def spec_to_dict(spec: ResetSpec) -> dict[str, Any]:
    """A reset spec as JSON (the request's ``reset``), with kafka-consumer-groups' words."""
    data: dict[str, Any] = {
        "mode": spec.mode,
        "scope": spec.scope,
        "topic": spec.topic,
        "partitions": list(spec.partitions),
        "value": spec.value,
        "file_offsets": [[t, p, o] for (t, p), o in sorted(spec.file_offsets.items())],
        "command": spec.describe(),
    }
    if spec.mode == "to-datetime" and spec.value is not None:
        try:
            when = datetime.fromtimestamp(spec.value / 1000, tz=UTC)
            data["time"] = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        except (OverflowError, OSError, ValueError):
            pass
    return data


def spec_from_dict(data: Any) -> ResetSpec:
    """The reset spec of a submitted payload; ResetPlanError naming what is wrong."""
    if not isinstance(data, Mapping):
        raise ResetPlanError(["say how to reset: mode, scope and value"])
    mode, scope = str(data.get("mode") or ""), str(data.get("scope") or "all-topics")
    if mode not in MODES:
        raise ResetPlanError([f"unknown reset mode '{mode[:40]}': use one of {', '.join(MODES)}"])
    if scope not in SCOPES:
        raise ResetPlanError([f"unknown scope '{scope[:40]}': use one of {', '.join(SCOPES)}"])
    value = data.get("value")
    value = None if value is None or value == "" else _whole(value, "the value")
    raw_partitions = data.get("partitions") or []
    if not isinstance(raw_partitions, list | tuple) or len(raw_partitions) > MAX_PARTITIONS:
        raise ResetPlanError([f"list at most {MAX_PARTITIONS} partitions"])
    partitions = tuple(_whole(p, "a partition") for p in raw_partitions)
    raw_file = data.get("file_offsets") or []
    if not isinstance(raw_file, list | tuple) or len(raw_file) > MAX_PARTITIONS:
        raise ResetPlanError([f"a reset request names at most {MAX_PARTITIONS} partitions"])
    file_offsets: dict[tuple[str, int], int] = {}
    for row in raw_file:
        if not isinstance(row, list | tuple) or len(row) != 3 or not str(row[0]).strip():
            raise ResetPlanError(["each file line is [topic, partition, offset]"])
        file_offsets[(str(row[0]).strip(), _whole(row[1], "a partition"))] = _whole(row[2], "an offset")
    topic = str(data.get("topic") or "").strip()
    return ResetSpec(mode, scope, topic, partitions, value, file_offsets)


def named_topics(spec: ResetSpec) -> list[str]:
    """The topics a spec names before it is planned (its topic, or the file's)."""
    if spec.mode == "from-file":
        return sorted({t for t, _ in spec.file_offsets})
    return [spec.topic] if spec.scope != "all-topics" and spec.topic else []


def digest(rows) -> str:
    """SHA-256 of the plan's ``[topic, partition, new]`` rows (as the groups area's audit)."""
    pairs = sorted([str(r[0]), int(r[1]), int(r[3])] for r in rows)
    return hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()


def dry_run(plan: ResetPlan, members: str = "") -> dict[str, Any]:
    """The attached dry run: per partition current → new, lag before → after, the log's bounds."""
    rows = [
        [r.topic, r.partition, r.current, r.new, r.lag_before, r.lag_after, r.log_start, r.log_end, r.note]
        for r in plan.rows
    ]
    return {
        "columns": list(COLUMNS),
        "rows": rows,
        "partitions": len(rows),
        "changed": plan.changed,
        "lag_before": plan.lag_before,
        "lag_after": plan.lag_after,
        "members": members,
    }


def reviewed_rows(payload: Mapping[str, Any]) -> list[list]:
    """The attached dry run's rows; ResetPlanError when the payload has none or they are damaged."""
    rows = (payload.get("dry_run") or {}).get("rows") if isinstance(payload.get("dry_run"), Mapping) else None
    if not isinstance(rows, list) or not rows:
        raise ResetPlanError(["the request has no dry run attached"])
    try:
        ok = all(len(r) == len(COLUMNS) and isinstance(r[0], str) for r in rows)
        if ok and digest(rows) == payload.get("plan_sha256"):
            return rows
    except (TypeError, ValueError):
        pass
    raise ResetPlanError(["the attached dry run does not match its SHA-256 digest"])


def reviewed_spec(rows: list[list]) -> ResetSpec:
    """Exactly the reviewed new offsets, as a from-file reset."""
    return ResetSpec("from-file", file_offsets={(r[0], int(r[1])): int(r[3]) for r in rows})


def _at(tp: tuple[str, int]) -> str:
    return f"{tp[0]}-{tp[1]}"


def drift(
    rows: list[list], plan: ResetPlan, *, earlier_attempt: bool = False, committed: bool = True
) -> list[str]:
    """How the group as it is now (``plan``: the reviewed offsets planned again) departs from the
    review: a committed offset moved (unless ``committed`` is False: compared elsewhere), or a
    reviewed offset would now be clamped to the log. After an earlier attempt a partition may also
    already hold its reviewed offset."""
    now = {(r.topic, r.partition): r for r in plan.rows}
    moved, clamped = [], []
    for topic, partition, current, new, *_ in rows:
        row = now.get((topic, int(partition)))
        if row is None:
            clamped.append(f"{_at((topic, partition))} is not in the plan any more")
            continue
        if committed and row.current != current and not (earlier_attempt and row.current == new):
            moved.append(
                f"{_at((topic, partition))} {'none' if current is None else current} → "
                f"{'none' if row.current is None else row.current}"
            )
        if row.new != new:
            clamped.append(f"{_at((topic, partition))}: {row.note or f'{new} would become {row.new}'}")
    out = []
    if moved:
        more = f" and {len(moved) - 10} more" if len(moved) > 10 else ""
        out.append(f"the group's committed offsets moved since the dry run ({', '.join(moved[:10])}{more})")
    if clamped:
        more = f" and {len(clamped) - 10} more" if len(clamped) > 10 else ""
        out.append(f"the log moved so the reviewed offsets would not apply ({'; '.join(clamped[:10])}{more})")
    return out
