"""The reassignment's "move" step: one poll cycle per run, about one per second while moving.

A cycle costs one ListPartitionReassignments plus one DescribeLogDirs per involved broker
(never per partition); each broker is asked only about the moving partitions it may host.
While a replica is level with its leader it also reads the ISR of that partition's topic,
because only the ISR says "In sync", while the log dirs are read: a Metadata request of the
topics sent with them, or librdkafka's whole-cluster Metadata when those topics hold most of the
cluster's partitions (the gateway chooses; the same answer either way). Every
OFFSETS_EVERY_S it reads the leaders' earliest and latest offsets for the "~N messages" estimates
(one ListOffsets per leader and spec, all in flight together; the leaders from that same
Metadata, then asked about every moving partition's topic).
Progress goes to ``Reassignment.live`` in one UPDATE; a partition row is written only when its
state changes. The requests of a cycle are built once per moving set (``_plan``: the gateway's
``reassign_reads.PollPlan``, their bodies encoded once; the ListPartitionReassignments answer
read from its bytes, and neither it nor the ISR's Metadata read again while their bytes are
those of the last cycle), with the partitions' ``live`` keys.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db.models import Count, Sum
from django.utils import timezone

from console import collector, operations
from console.clusters.actions import gateway_for
from console.formatting import human_bytes, human_duration, human_millis
from console.kafka import KafkaOperationError, TopicPartition
from console.models.reassignment import (
    OPEN_PARTITION_STATES,
    PartitionState,
    Reassignment,
    ReassignmentPartition,
)
from console.operations import Wait
from console.reassignment import store
from console.reassignment.progress import (
    LiveEntry,
    at_least,
    eta_seconds,
    hosts,
    live_entry,
    mark_in_sync,
    rate_window,
    replica_dicts,
    shown_entry,
    smoothed_rate,
)
from console.reassignment.store import Row, known_rows, write_live

log = logging.getLogger(__name__)

_KEEP = (
    "live",
    "offsets",
    "operation",
    "cluster",
)  # not re-read each cycle (the runner's claimed operation stays)

POLL_INTERVAL_S = 1.0
OFFSETS_EVERY_S = 10.0  # how often the leaders' offsets (for the message estimates) are re-read
VERIFY_SETTLE_S = 5.0  # how long a finished partition's metadata may lag before it is "diverged"
VERIFY_RETRY_S = 0.5  # beat's tick; the next cycle is due half an interval after the last one


def poll_once(r: Reassignment, *, fresh: bool = False) -> Wait | None:
    """One cycle: one ListPartitionReassignments + one DescribeLogDirs per involved broker.

    ``Wait`` while partitions are still moving (the runner runs the next cycle when it is due);
    None once every partition has settled (the runner goes on to remove the throttles).
    A Kafka that cannot be asked raises (the runner keeps the move running in "lost contact");
    ``fresh`` (the first cycle after that) forgets the rate samples and the cached offsets, so
    everything shown is recomputed from what Kafka answers now.
    """
    if fresh:
        _OFFSETS.pop(r.pk, None)
        _WAITING.pop(r.pk, None)
        _PLANS.pop((r.pk, r.operation.created_at), None)
        Reassignment.objects.filter(pk=r.pk).update(rate_samples=[])
        r.rate_samples = []
    # The cycle's objects (10,000s of rows, answers and entries) hold no reference cycles: the
    # cyclic collector is paused while they exist, else its young collections promote them and
    # a full collection walks them every cycle (measured: ~0.2 s of a 1 s cycle at 10,000
    # partitions). Everything is freed by reference counting as before.
    with collector.paused():
        return _poll(r)


def _poll(r: Reassignment) -> Wait | None:
    # ``live`` (the last cycle's progress of every moving partition) is only rewritten, never
    # read back whole: only its timestamp is needed for the rate.
    r.refresh_from_db(fields=[f.attname for f in Reassignment._meta.concrete_fields if f.name not in _KEEP])
    started = time.monotonic()
    held_key = (r.pk, r.operation.created_at)
    rows = known_rows(r, [PartitionState.MOVING], _ROWS.setdefault(held_key, {}))
    gw = gateway_for(r.cluster)
    listed, logs, isr = set(), {}, {}
    offsets = _fresh_offsets(r) if rows else {}
    tps, plan, live_keys = _plan(held_key, gw, rows)
    if rows:
        # The ISR (for "In sync") of the topics likely to have replicas level with their leader,
        # and on an offsets cycle the leaders of every moving partition, read with the log dirs
        # and the reassignments in progress (one flight; the requests built once per moving set).
        wanted = _isr_topics(r, rows) if offsets is not None else {x.topic for x in rows}
        listed, held, isr = gw.reassignment_poll_reads(plan, wanted)
        # a broker that did not answer: None (its replicas are "Broker not reachable")
        logs = {b: None if isinstance(v, KafkaOperationError) else v for b, v in held.items()}
        if offsets is None:
            offsets = _leader_offsets(r, gw, tps, isr)
    shown = _shown_percents(r)
    live: dict[tuple[str, int], LiveEntry] = {}
    finished = []
    waiting = []  # moving partitions with a replica level with the leader (the ISR says "In sync")
    for key, x in zip(tps, rows, strict=True):
        if key in listed:
            entry, level = shown_entry(key, x.original, x.target, logs, offsets, shown.get(key, 0))
            live[key] = entry
            shown[key] = entry.percent
            if level:
                waiting.append(key)
        else:
            finished.append((x, live_entry(key, x.original, x.target, logs, offsets)))
    _in_sync(r, gw, live, waiting, isr)
    _verify(gw, finished)
    _summarise(r, live, started, live_keys)
    if r.partitions.filter(state__in=OPEN_PARTITION_STATES).exists():
        return Wait(POLL_INTERVAL_S / 2)
    _SHOWN.pop((r.pk, r.operation.created_at), None)
    _OFFSETS.pop(r.pk, None)
    _WAITING.pop(r.pk, None)
    _ROWS.pop((r.pk, r.operation.created_at), None)
    _PLANS.pop((r.pk, r.operation.created_at), None)
    return None


def _plan(key, gw, rows) -> tuple[list[tuple[str, int]], object, dict[tuple[str, int], str]]:
    """(the moving partitions, the gateway's ``PollPlan`` of their requests, their ``live`` keys),
    built once per moving set (the same rows as the last cycle: the same requests)."""
    ids = [x.id for x in rows]
    kept = _PLANS.get(key)
    if kept is not None and kept[0] == ids:
        return kept[1], kept[2], kept[3]
    tps = [(x.topic, x.partition) for x in rows]
    by_broker = hosts((tp, x.original, x.target) for tp, x in zip(tps, rows, strict=True))
    plan = gw.reassignment_poll_plan(tps, by_broker, _partitions_of(tps)) if rows else None
    live_keys = {tp: store.live_key(*tp) for tp in tps}
    _PLANS[key] = (ids, tps, plan, live_keys)
    return tps, plan, live_keys


def _verify(gw, finished) -> None:
    """No reassignment in progress is not "reached the target": compare the replicas (else DIVERGED)."""
    if not finished:
        return
    parts = _settled_replicas(gw, [(x.topic, x.partition, list(x.target)) for x, _ in finished])
    updated = []
    for x, entry in finished:
        part = parts.get((x.topic, x.partition))
        if part is not None:
            mark_in_sync(entry.replicas, part.isr)
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
    store.update_rows(updated, ["bytes_total", "bytes_done", "replicas", "state", "message"])


def kafka_verify(cluster, targets: dict[tuple[str, int], list[int]]) -> dict[tuple[str, int], dict]:
    """What Kafka's ``kafka-reassign-partitions --verify`` reads, per partition, now: ``{"kafka":
    "in progress" | "completed" | "diverged" | "missing", "replicas": [...] | None}``.

    One ListPartitionReassignments of the partitions and one Metadata of their topics; raises
    ``KafkaOperationError`` when Kafka cannot be asked (the caller says so; never a guess)."""
    gw = gateway_for(cluster)
    moving = gw.list_partition_reassignments([TopicPartition(t, p) for t, p in targets])
    described = gw.describe_topics(sorted({t for t, _ in targets}))
    out: dict[tuple[str, int], dict] = {}
    for (topic, partition), target in targets.items():
        md = described.get(topic)
        if isinstance(md, KafkaOperationError) and md.name != "UNKNOWN_TOPIC_OR_PARTITION":
            raise md
        part = (
            None
            if md is None or isinstance(md, KafkaOperationError)
            else next((p for p in md.partitions if p.id == partition), None)
        )
        replicas = list(part.replicas) if part is not None else None
        if TopicPartition(topic, partition) in moving:
            verdict = "in progress"
        elif replicas is None:
            verdict = "missing"
        else:
            verdict = "completed" if replicas == list(target) else "diverged"
        out[(topic, partition)] = {"kafka": verdict, "replicas": replicas}
    return out


def _settled_replicas(gw, wanted: list[tuple[str, int, list[int]]]) -> dict:
    """Each partition's metadata once it shows the target with every target replica in the ISR, or
    the last seen after VERIFY_SETTLE_S.

    The controller drops a finished reassignment from its list before every broker's metadata
    cache shows the new replicas; Metadata answered by a lagging broker must not turn a finished
    move into "diverged". Nor into "Caught up, joining ISR": while a replica is only being added,
    Metadata's replicas already equal the target (they list the adding replica), so a lagging
    broker can show the target with the old ISR; Kafka completes a reassignment only once every
    target replica is in the ISR. Only partitions not yet seen so are asked again.
    """
    parts: dict = {}
    pending = wanted
    deadline = time.monotonic() + VERIFY_SETTLE_S
    while pending:
        described = gw.describe_topics(sorted({t for t, _, _ in pending}))
        again = []
        for topic, partition, target in pending:
            md = described.get(topic)
            if isinstance(md, KafkaOperationError) and md.name != "UNKNOWN_TOPIC_OR_PARTITION":
                raise md  # not an answer about the topic: Kafka could not be asked (lost contact)
            part = (
                None
                if isinstance(md, KafkaOperationError) or md is None
                else next((p for p in md.partitions if p.id == partition), None)
            )
            parts[(topic, partition)] = part
            if part is None or list(part.replicas) != target or not set(target) <= set(part.isr):
                again.append((topic, partition, target))
        if not again or time.monotonic() >= deadline:
            break
        pending = again
        time.sleep(VERIFY_RETRY_S)
    return parts


def _fresh_offsets(r: Reassignment) -> dict[tuple[str, int], list[int]] | None:
    """The moving partitions' [log start, log end] offsets read less than OFFSETS_EVERY_S ago, or
    None when they are due again.

    Kept in ``Reassignment.offsets`` (the next cycle may run in another worker) and in this
    process (the same cycle's value is not parsed again).
    """
    at = store.offsets_read_at(r)
    if at is None or time.time() - at >= OFFSETS_EVERY_S:
        return None
    cached = _OFFSETS.get(r.pk)
    if cached is None or cached[0] != at:
        cached = _OFFSETS[r.pk] = (at, store.read_offsets(r))
    return cached[1]


def _leader_offsets(r: Reassignment, gw, tps: list[tuple[str, int]], isr) -> dict[tuple[str, int], list[int]]:
    """Read the moving partitions' [log start, log end] offsets: earliest and latest ListOffsets
    per leader, all in flight together, the leaders from this cycle's Metadata (``isr``).

    Unreadable offsets (no brokers in controller mode, a timeout) leave the last ones, or none:
    the estimates are then not shown; they are tried again after OFFSETS_EVERY_S, not every cycle.
    """
    now = time.time()
    by_leader: dict[int, dict[str, list[int]]] = {}
    try:
        if isinstance(isr, KafkaOperationError):
            raise isr
        for topic, partition in tps:
            parts = isr.get(topic)
            found = parts.get(partition) if isinstance(parts, dict) else None
            if found is not None and found[0] >= 0:
                by_leader.setdefault(found[0], {}).setdefault(topic, []).append(partition)
        (starts, _), (ends, _) = gw.offsets_by_leader(by_leader, ("earliest", "latest"))
    except KafkaOperationError as err:
        log.info("reassignment %s: leader offsets unreadable this cycle: %s", r.pk, err)
        cached = _OFFSETS.get(r.pk)
        kept = cached[1] if cached else {}
        store.write_offsets(r, kept, now)
        _OFFSETS[r.pk] = (now, kept)
        return kept
    found = {key: [start, ends[key]] for key, start in starts.items() if key in ends}
    store.write_offsets(r, found, now)
    _OFFSETS[r.pk] = (now, found)
    return found


_OFFSETS: dict[int, tuple[float, dict]] = {}  # reassignment id -> (read at, offsets), this process
_WAITING: dict[
    int, set[str]
] = {}  # reassignment id -> topics with a replica level with its leader last cycle
# (reassignment id, its operation's creation time) -> {row id: row} of the partition rows read so
# far (never rewritten), this process
_ROWS: dict[tuple[int, object], dict[int, Row]] = {}
# (reassignment id, its operation's creation time) -> (the moving row ids, their partitions, the
# requests of a cycle of them, their ``live`` keys), this process: rebuilt when the moving set changes
_PLANS: dict[tuple[int, object], tuple[list[int], list[tuple[str, int]], object, dict]] = {}
# (reassignment id, its operation's creation time) -> partition bars shown, this process
_SHOWN: dict[tuple[int, object], dict[tuple[str, int], int]] = {}


def _shown_percents(r: Reassignment) -> dict[tuple[str, int], int]:
    """Each moving partition's highest percentage shown so far: the per-partition bars never go back.

    Kept in this process; a worker that has not polled this reassignment before reads the last
    cycle's ``live`` once (the entries carry their shown percentage).
    """
    key = (r.pk, r.operation.created_at)
    shown = _SHOWN.get(key)
    if shown is None:
        shown = _SHOWN[key] = store.live_percents(r)
    return shown


def _isr_topics(r: Reassignment, rows) -> set[str]:
    """Topics whose ISR this cycle will likely need: those with a replica level with its leader in
    the last cycle; before any cycle in this process, those where a replica stays (an in-sync
    follower usually is level with its leader). A wrong guess costs a second request, not a
    wrong state (``_in_sync`` reads whatever is missing)."""
    last = _WAITING.get(r.pk)
    if last is not None:
        return last
    return {x.topic for x in rows if not set(x.original).isdisjoint(x.target)}


def _partitions_of(keys) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for topic, partition in keys:
        out.setdefault(topic, set()).add(partition)
    return out


def _in_sync(r: Reassignment, gw, live: dict[tuple[str, int], LiveEntry], waiting: list, isr) -> None:
    """Caught-up replicas of moving partitions (``waiting``: those with a replica level with the
    leader) become "In sync" only once Kafka lists them in the ISR, from this cycle's Metadata
    (``isr``, read with the log dirs; missing topics read now)."""
    topics = {t for t, _ in waiting}
    _WAITING[r.pk] = topics
    if not waiting:
        return
    if isinstance(isr, KafkaOperationError):
        log.info("ISR unreadable this cycle: %s", isr)
        return
    missing = topics.difference(isr)
    if missing:
        try:
            more = gw.partition_isr(missing, _partitions_of(live))
            if isinstance(more, KafkaOperationError):
                raise more
        except KafkaOperationError as err:
            log.info("ISR unreadable this cycle: %s", err)
        else:
            isr = {**isr, **more}
    for topic, partition in waiting:
        parts = isr.get(topic)
        found = parts.get(partition) if isinstance(parts, dict) else None
        if found is not None:
            mark_in_sync(live[(topic, partition)].replicas, found[1])


def _summarise(
    r: Reassignment,
    live: dict[tuple[str, int], LiveEntry],
    started: float,
    live_keys: dict[tuple[str, int], str] | None = None,
) -> None:
    """Totals, smoothed rate and ETA on the Reassignment and the Operation (what the progress page reads)."""
    settled_rows = r.partitions.exclude(state__in=OPEN_PARTITION_STATES)
    agg = settled_rows.aggregate(total=Sum("bytes_total"), done=Sum("bytes_done"))
    counts = dict(r.partitions.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    total = int(agg["total"] or 0) + sum(e.bytes_total for e in live.values())
    done = int(agg["done"] or 0) + sum(e.bytes_done for e in live.values())
    now = time.time()
    samples, rate = smoothed_rate(
        r.rate_samples or [], now, done, rate_window(settings.REASSIGN_RATE_WINDOW_S)
    )
    eta = eta_seconds(total - done, rate)
    settled = sum(n for s, n in counts.items() if s not in OPEN_PARTITION_STATES)
    partitions_done = counts.get("done", 0)
    if total:
        percent = round(100 * done / total)
    else:
        percent = 100 if r.partitions_total and partitions_done >= r.partitions_total else 0
    write_live(
        r,
        live,
        now,
        bytes_total=total,
        bytes_done=done,
        rate_bytes_per_s=rate or 0.0,
        rate_samples=samples,
        percent_high=at_least(r.percent_high, percent),
        partitions_done=partitions_done,
        polls=r.polls + 1,
        last_poll_at=timezone.now(),
        keys=live_keys,
    )
    rate_text = f"{human_bytes(rate)}/s" if rate is not None else "measuring rate"
    text = (
        f"{settled}/{r.partitions_total} partitions · {human_bytes(done)} of {human_bytes(total)}"
        f" · {rate_text} · ETA {human_duration(eta)} · cycle {human_millis(1000 * (time.monotonic() - started))}"
    )
    if r.paced:
        queued = counts.get(PartitionState.PENDING, 0)
        text += f" · paused ({queued} queued)" if r.paused else f" · {queued} queued"
    progress = done / total if total else (settled / r.partitions_total if r.partitions_total else 0.0)
    operations.heartbeat(r.operation, progress=max(progress, r.percent_high / 100), text=text)
