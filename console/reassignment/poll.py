"""The reassignment's "move" step: one poll cycle per run, about one per second while moving.

A cycle costs one ListPartitionReassignments plus one DescribeLogDirs per involved broker
(never per partition); each broker is asked only about the moving partitions it may host.
Progress goes to ``Reassignment.live`` in one UPDATE; a partition row is written only when its
state changes.
"""

from __future__ import annotations

import logging
import time

from django.db.models import Count, Sum
from django.utils import timezone

from console import operations
from console.clusters.actions import gateway_for
from console.formatting import human_bytes, human_duration
from console.kafka import KafkaOperationError, TopicPartition
from console.models.reassignment import (
    OPEN_PARTITION_STATES,
    PartitionState,
    Reassignment,
    ReassignmentPartition,
)
from console.operations import Wait
from console.reassignment.progress import (
    LiveEntry,
    flatten_logs,
    hosts,
    live_entry,
    rate_and_eta,
    replica_dicts,
)
from console.reassignment.store import live_written_at, partition_rows, write_live

log = logging.getLogger(__name__)

_KEEP = ("live", "operation", "cluster")  # not re-read each cycle (the runner's claimed operation stays)

POLL_INTERVAL_S = 1.0
VERIFY_SETTLE_S = 5.0  # how long a finished partition's metadata may lag before it is "diverged"
VERIFY_RETRY_S = 0.5  # beat's tick; the next cycle is due half an interval after the last one


def poll_once(r: Reassignment) -> Wait | None:
    """One cycle: one ListPartitionReassignments + one DescribeLogDirs per involved broker.

    ``Wait`` while partitions are still moving (the runner runs the next cycle when it is due);
    None once every partition has settled (the runner goes on to remove the throttles).
    """
    # ``live`` (the last cycle's progress of every moving partition) is only rewritten, never
    # read back whole: only its timestamp is needed for the rate.
    r.refresh_from_db(fields=[f.attname for f in Reassignment._meta.concrete_fields if f.name not in _KEEP])
    started = time.monotonic()
    rows = partition_rows(r, [PartitionState.MOVING])
    gw = gateway_for(r.cluster)
    tps = [TopicPartition(x.topic, x.partition) for x in rows]
    listed, logs = {}, {}
    if rows:
        listed = gw.list_partition_reassignments(tps)
        by_broker = hosts((tp, x.original, x.target) for tp, x in zip(tps, rows, strict=True))
        logs = flatten_logs(gw.describe_log_dirs(partitions=by_broker))
    live: dict[tuple[str, int], LiveEntry] = {}
    finished = []
    for tp, x in zip(tps, rows, strict=True):
        entry = live_entry((x.topic, x.partition), x.original, x.target, logs)
        if tp in listed:
            live[(x.topic, x.partition)] = entry
        else:
            finished.append((x, entry))
    _verify(gw, finished)
    _summarise(r, live, started)
    if r.partitions.filter(state__in=OPEN_PARTITION_STATES).exists():
        return Wait(POLL_INTERVAL_S / 2)
    return None


def _verify(gw, finished) -> None:
    """No reassignment in progress is not "reached the target": compare the replicas (else DIVERGED)."""
    if not finished:
        return
    parts = _settled_replicas(gw, [(x.topic, x.partition, list(x.target)) for x, _ in finished])
    updated = []
    for x, entry in finished:
        part = parts.get((x.topic, x.partition))
        row = ReassignmentPartition(
            pk=x.id,
            bytes_total=entry.bytes_total,
            bytes_done=entry.bytes_total,
            replicas=replica_dicts(entry.replicas),
            message="",
        )
        if part is None:
            row.state, row.message, row.bytes_done = (
                PartitionState.DIVERGED,
                "Unknown partition (topic deleted?)",
                0,
            )
        elif list(part.replicas) == list(x.target):
            row.state = PartitionState.DONE
        else:
            row.state, row.bytes_done = PartitionState.DIVERGED, entry.bytes_done
            row.message = (
                f"No reassignment in progress but replicas are {list(part.replicas)}, not {list(x.target)}"
            )
        updated.append(row)
    ReassignmentPartition.objects.bulk_update(
        updated, ["bytes_total", "bytes_done", "replicas", "state", "message"], batch_size=500
    )


def _settled_replicas(gw, wanted: list[tuple[str, int, list[int]]]) -> dict:
    """Each partition's metadata once it shows the target, or the last seen after VERIFY_SETTLE_S.

    The controller drops a finished reassignment from its list before every broker's metadata
    cache shows the new replicas; Metadata answered by a lagging broker must not turn a finished
    move into "diverged". Only mismatching partitions are asked again.
    """
    parts: dict = {}
    pending = wanted
    deadline = time.monotonic() + VERIFY_SETTLE_S
    while pending:
        described = gw.describe_topics(sorted({t for t, _, _ in pending}))
        again = []
        for topic, partition, target in pending:
            md = described.get(topic)
            part = (
                None
                if isinstance(md, KafkaOperationError) or md is None
                else next((p for p in md.partitions if p.id == partition), None)
            )
            parts[(topic, partition)] = part
            if part is None or list(part.replicas) != target:
                again.append((topic, partition, target))
        if not again or time.monotonic() >= deadline:
            break
        pending = again
        time.sleep(VERIFY_RETRY_S)
    return parts


def _summarise(r: Reassignment, live: dict[tuple[str, int], LiveEntry], started: float) -> None:
    """Totals, rate and ETA on the Reassignment and the Operation (what the progress page reads)."""
    settled_rows = r.partitions.exclude(state__in=OPEN_PARTITION_STATES)
    agg = settled_rows.aggregate(total=Sum("bytes_total"), done=Sum("bytes_done"))
    counts = dict(r.partitions.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    total = int(agg["total"] or 0) + sum(e.bytes_total for e in live.values())
    done = int(agg["done"] or 0) + sum(e.bytes_done for e in live.values())
    now = time.time()
    last = live_written_at(r)
    seconds = now - last if last else 0.0
    rate, eta = rate_and_eta(done, r.bytes_done, seconds, total - done, r.rate_bytes_per_s)
    settled = sum(n for s, n in counts.items() if s not in OPEN_PARTITION_STATES)
    write_live(
        r,
        live,
        now,
        bytes_total=total,
        bytes_done=done,
        rate_bytes_per_s=rate,
        partitions_done=counts.get("done", 0),
        polls=r.polls + 1,
        last_poll_at=timezone.now(),
    )
    text = (
        f"{settled}/{r.partitions_total} partitions · {human_bytes(done)} of {human_bytes(total)}"
        f" · {human_bytes(rate)}/s · ETA {human_duration(eta)} · cycle {1000 * (time.monotonic() - started):.0f} ms"
    )
    progress = done / total if total else (settled / r.partitions_total if r.partitions_total else 0.0)
    operations.heartbeat(r.operation, progress=progress, text=text)
