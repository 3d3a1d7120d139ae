"""Reading messages: ``browse`` (authorised, bounded, masked, audited) and the data-access listing.

``browse`` checks the grant (and, for an unmasked read, the grant's ``unmasked`` and a reason), the
query, then the topic's bounds; it reads forward with the gateway's consumer Fetch (no group, nothing
committed) until it has ``count`` messages that pass the filters, MAX_BYTES were read, TIME_LIMIT_S
passed or the high watermark was reached, and says which in ``stopped``. Every record is masked by the
rules in force before a filter sees it. Each read that shows messages (and every read that is not a
follow poll) is one ``messages.read`` event: offsets and counts, never a value; a refused read is one
event with outcome "refused" (as every refusal in the audit trail).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction
from django.http import Http404

from console import access
from console.audit import store as audit
from console.audit.outcomes import AuditUnavailable
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.messages import audit_names, core, grants, store
from console.messages.core import (
    MAX_BYTES,
    MAX_MESSAGES,
    TIME_LIMIT_S,
    BrowseInvalid,
    BrowseQuery,
    BrowseResult,
)
from console.models import Cluster

STALLS = 3  # rounds in a row in which Kafka gave nothing before the high watermark: stop
STOPPED_BYTES = f"{MAX_BYTES >> 20} MiB read"
STOPPED_TIME = f"{TIME_LIMIT_S} s"
STOPPED_COUNT = f"limit of {MAX_MESSAGES} messages"
STOPPED_END = "reached the high watermark"
STOPPED_START = "reached the log start"
STOPPED_STALLED = "Kafka returned nothing more before the high watermark"


@dataclass
class _Scan:
    """What one browse read: the shown messages and the position per partition, the limits spent."""

    deadline: float
    shown: dict[int, list[core.ShownMessage]] = field(default_factory=dict)
    position: dict[int, int] = field(default_factory=dict)
    ranges: dict[int, list[int]] = field(default_factory=dict)  # partition: [first, last] offset read
    scanned: int = 0
    bytes: int = 0
    stopped: str = ""

    def out_of_budget(self) -> bool:
        if self.bytes >= MAX_BYTES:
            self.stopped = STOPPED_BYTES
        elif time.monotonic() >= self.deadline:
            self.stopped = STOPPED_TIME
        return bool(self.stopped)


def browse(
    *, actor, cluster: Cluster, topic: str, query: BrowseQuery, source_ip: str | None = None
) -> BrowseResult:
    """The topic's messages as ``query`` asks, masked unless an unmasked read is allowed (see module)."""
    unmasked = query.unmasked_reason != ""
    try:
        if unmasked:
            grants.require_unmasked(actor, cluster, topic, query.unmasked_reason)
        else:
            grants.require(actor, cluster, topic, grants.DATA_READ)
    except PermissionDenied as exc:
        _audit_denied(actor, cluster, topic, query, exc, source_ip)
        raise
    core.check_query(query)
    filters = core.filters_of(query)
    rules = () if unmasked else store.rules_in_force(cluster, topic)
    gw = gateway_for(cluster)
    scan = _Scan(deadline=time.monotonic() + TIME_LIMIT_S)
    bounds = _bounds(gw, cluster, topic, query)
    starts = _starts(gw, topic, query, bounds)
    read = _Reader(gw, topic, None if unmasked else rules, filters, query.decode, scan)
    if query.mode == "newest":
        messages, cursor = read.newest(bounds, query.count)
    else:
        messages, cursor = read.forward(starts, {p: hw for p, (_, hw) in bounds.items()}, query.count)
    if not scan.stopped:
        scan.stopped = _why_short(query, len(messages))
    result = BrowseResult(
        messages=tuple(messages),
        masked=not unmasked,
        rules=tuple(r.label for r in rules),
        cursor=cursor,
        stopped=scan.stopped,
        scanned=scan.scanned,
    )
    if messages or query.mode != "follow":  # a follow poll that showed nothing read nothing
        _audit_read(actor, cluster, topic, query, result, scan, sorted(bounds), source_ip)
    return result


def _why_short(query: BrowseQuery, shown: int) -> str:
    if shown >= query.count:
        return STOPPED_COUNT if query.count == MAX_MESSAGES else ""
    if query.mode == "follow":
        return ""
    return STOPPED_START if query.mode == "newest" else STOPPED_END


# -- where to read ----------------------------------------------------------------------------------


def _bounds(gw, cluster: Cluster, topic: str, query: BrowseQuery) -> dict[int, tuple[int, int | None]]:
    """(log start, high watermark) of the partitions the query reads. A read from the oldest message
    asks for the log starts alone: its high watermarks (None here) come with its first Fetch answers."""
    try:
        every = gw.log_starts(topic) if query.mode == "oldest" else gw.partition_bounds(topic)
    except KafkaOperationError as exc:
        if exc.name == "UNKNOWN_TOPIC_OR_PARTITION":
            # not found, as every door answers an unknown topic elsewhere (404, exit NOT_FOUND)
            raise Http404(f"There is no topic '{topic}' on cluster '{cluster.name}'.") from None
        raise
    wanted = sorted(every) if query.partition is None else [query.partition]
    if query.partition is not None and query.partition not in every:
        raise BrowseInvalid(
            f"partition {query.partition} is out of range: topic '{topic}' has partitions 0 to {len(every) - 1}"
        )
    if query.mode == "follow" and query.cursor and query.partition is None:
        for p in query.cursor:
            if p not in every:
                raise BrowseInvalid(
                    f"the follow cursor names partition {p}, which topic '{topic}' does not have"
                )
    out = {}
    for p in wanted:
        bound = every[p]
        if isinstance(bound, KafkaOperationError):
            raise bound
        out[p] = (bound, None) if query.mode == "oldest" else bound
    return out


def _check_offset(p: int, offset: int, bound: tuple[int, int], what: str = "offset") -> None:
    start, hw = bound
    if offset < start:
        raise BrowseInvalid(
            f"{what} {offset} is below the log start {start} of partition {p}: the oldest message there is at {start}"
        )
    if offset > hw:
        newest = f"the newest message there is at {hw - 1}" if hw > start else "it holds no message"
        raise BrowseInvalid(f"{what} {offset} is above the high watermark {hw} of partition {p}: {newest}")


def _starts(gw, topic: str, query: BrowseQuery, bounds: Mapping[int, tuple[int, int]]) -> dict[int, int]:
    """Where each partition's forward read starts (newest reads its own windows)."""
    if query.mode == "offset":
        [(p, bound)] = bounds.items()
        _check_offset(p, query.offset, bound)
        return {p: query.offset}
    if query.mode == "oldest":
        return {p: start for p, (start, _) in bounds.items()}
    if query.mode == "timestamp":
        found = gw.offsets_for_time(topic, list(bounds), query.timestamp_ms)
        starts = {}
        for p, (_, hw) in bounds.items():
            offset = found.get(p)
            if isinstance(offset, KafkaOperationError):
                raise offset
            starts[p] = hw if offset is None else offset
        return starts
    if query.mode == "follow":
        starts = {}
        for p, (start, hw) in bounds.items():
            at = (query.cursor or {}).get(p, hw)
            if at > hw:
                _check_offset(p, at, (start, hw), "the follow cursor's offset")
            starts[p] = max(at, start)  # retention removed what the cursor pointed at: go on from the start
        return starts
    return {p: hw for p, (_, hw) in bounds.items()}


# -- reading ----------------------------------------------------------------------------------------


class _Reader:
    """Forward reads of windows of partitions, masked and filtered record by record."""

    def __init__(self, gw, topic: str, rules, filters: core.Filters, decode: str, scan: _Scan) -> None:
        self.gw, self.topic, self.filters, self.scan = gw, topic, filters, scan
        self.prepare = core.Preparer(rules, filters, decode)

    def forward(
        self, starts: Mapping[int, int], ends: Mapping[int, int | None], count: int
    ) -> tuple[list[core.ShownMessage], dict[int, int]]:
        """Up to ``count`` messages per partition from ``starts``, merged by time and cut to ``count``;
        the cursor continues after the last one kept (a message cut off is read again). An end of
        None: the high watermark of the partition's first Fetch answer."""
        shown = self._read(dict(starts), dict(ends), count)
        merged = core.merge(shown.values())
        kept, cut = merged[:count], merged[count:]
        cursor = dict(self.scan.position)
        for m in cut:
            cursor[m.partition] = min(cursor[m.partition], m.offset)
        return kept, cursor

    def newest(
        self, bounds: Mapping[int, tuple[int, int]], count: int
    ) -> tuple[list[core.ShownMessage], dict[int, int]]:
        """The last ``count`` messages (that pass the filters): windows read backwards from the high
        watermarks until enough passed or a limit or the log start was reached; newest last."""
        found: dict[int, list[core.ShownMessage]] = {p: [] for p in bounds}
        ends = {p: hw for p, (_, hw) in bounds.items()}
        step = MAX_MESSAGES if self.filters.any else count
        while True:
            starts = {p: max(bounds[p][0], end - step) for p, end in ends.items() if end > bounds[p][0]}
            if not starts:
                break
            window = self._read(dict(starts), {p: ends[p] for p in starts}, step)
            for p, messages in window.items():
                found[p] = messages + found[p]
                ends[p] = starts[p]
            if sum(len(ms) for ms in found.values()) >= count or self.scan.stopped or not self.filters.any:
                break
        merged = core.merge(found.values())
        return merged[-count:], {p: hw for p, (_, hw) in bounds.items()}

    def _read(
        self, positions: dict[int, int], ends: dict[int, int | None], need: int
    ) -> dict[int, list[core.ShownMessage]]:
        shown: dict[int, list[core.ShownMessage]] = {p: [] for p in positions}
        stalls = 0
        while True:
            active = {
                p: at
                for p, at in positions.items()
                if (ends[p] is None or at < ends[p]) and len(shown[p]) < need
            }
            if not active or self.scan.out_of_budget():
                break
            wanted = max(
                min(need if ends[p] is None else ends[p] - at, need - len(shown[p]))
                for p, at in active.items()
            )
            reads = self.gw.read_records(
                self.topic,
                active,
                max_records=MAX_MESSAGES if self.filters.any else wanted,
                max_bytes=MAX_BYTES - self.scan.bytes,
                deadline_s=self.scan.deadline,
            )
            moved = False
            for p, part in reads.items():
                if ends[p] is None and part.error is None:
                    ends[p] = part.high_watermark  # the end this read keeps to, as a bound read first would
                before = positions[p]
                positions[p] = self._take(p, part, positions[p], ends[p], need, shown[p])
                moved |= positions[p] != before
            stalls = 0 if moved else stalls + 1
            if stalls >= STALLS:
                self.scan.stopped = STOPPED_STALLED
                break
        self.scan.position.update(
            {p: at if ends[p] is None else min(at, ends[p]) for p, at in positions.items()}
        )
        return shown

    def _take(self, p: int, part, at: int, end: int, need: int, shown: list) -> int:
        """Mask, filter and keep one partition's records; where its read continues."""
        if part.error is not None:
            if part.error.name == "OFFSET_OUT_OF_RANGE" and part.log_start >= 0 and at < part.log_start:
                raise BrowseInvalid(
                    f"offset {at} is below the log start {part.log_start} of partition {p}: "
                    f"the oldest message there is at {part.log_start} (retention removed the rest while reading)"
                )
            raise part.error
        records, prepare, scan = part.records, self.prepare, self.scan
        stop = None
        read = 0
        for record in records:
            if record.offset >= end or len(shown) >= need:
                stop = record.offset
                break
            read += 1
            message = prepare(record)
            if message is not None:
                shown.append(message)
        if read:
            taken = records[:read]
            scan.scanned += read
            scan.bytes += sum(r.size for r in taken)
            low, high = min(r.offset for r in taken), max(r.offset for r in taken)
            seen = scan.ranges.setdefault(p, [low, high])
            seen[0], seen[1] = min(seen[0], low), max(seen[1], high)
        return max(at, part.next_offset) if stop is None else stop


# -- the audit trail --------------------------------------------------------------------------------


def _filters_used(query: BrowseQuery) -> list[str]:
    """Which filters the read used (not what they held: a typed value is no business of the trail)."""
    used = {"key": query.key_contains, "header": query.header, "value": query.value_contains}
    used["json_path"] = query.json_path
    return [name for name, text in used.items() if text]


def _write(**event) -> None:
    try:
        with transaction.atomic():
            audit.record(**event)
    except DatabaseError as exc:
        raise AuditUnavailable(
            f"The audit trail could not be written ({exc}), so the messages are not shown. "
            "Try again when the console's database is available."
        ) from exc


def _shown_ranges(messages) -> dict[str, str]:
    offsets: dict[int, list[int]] = {}  # per partition (up to 500 messages: one append each)
    for m in messages:
        seen = offsets.get(m.partition)
        if seen is None:
            offsets[m.partition] = [m.offset]
        else:
            seen.append(m.offset)
    return {str(p): f"{min(o)}..{max(o)}" for p, o in sorted(offsets.items())}


def _audit_read(
    actor, cluster, topic, query, result: BrowseResult, scan: _Scan, partitions, source_ip
) -> None:
    _write(
        actor=actor,
        action=audit_names.MESSAGES_READ,
        cluster=cluster,
        targets=[f"topic:{topic}"],
        params={
            "mode": query.mode,
            "partitions": partitions,
            "offsets": _shown_ranges(result.messages),  # what was shown, per partition
            "read": {str(p): f"{a}..{b}" for p, (a, b) in sorted(scan.ranges.items())},
            "shown": len(result.messages),
            "scanned": result.scanned,
            "masked": result.masked,
            "rules": list(result.rules),
            "reason": query.unmasked_reason,
            "filters": _filters_used(query),
            "stopped": result.stopped,
        },
        outcome="success",
        source_ip=source_ip,
    )


def _audit_denied(actor, cluster, topic, query, exc, source_ip) -> None:
    _write(
        actor=actor,
        action=audit_names.MESSAGES_READ,
        cluster=cluster,
        targets=[f"topic:{topic}"],
        params={
            "mode": query.mode,
            "partitions": [] if query.partition is None else [query.partition],
            "masked": query.unmasked_reason == "",
            "reason": query.unmasked_reason,
            "refused": str(exc),
        },
        outcome="refused",
        source_ip=source_ip,
    )


# -- data access ------------------------------------------------------------------------------------


def data_access(*, actor, cluster: Cluster) -> tuple[list[dict], list[dict]]:
    """The cluster's data grants and masking rules, described, for its admins."""
    access.require(actor, cluster, access.ADMINISTER)
    return store.grants_of(cluster), store.rules_of(cluster)
