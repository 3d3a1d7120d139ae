"""Topic reads: the list (one cached metadata fetch + one configs batch per page) and the detail page."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import NamedTuple

from console import access, patterns
from console.clusters.actions import gateway_for
from console.kafka import ConfigResource, KafkaOperationError
from console.models import AuditEvent, AuditTarget
from console.telemetry import sizes as telemetry_sizes
from console.telemetry.sizes import PartitionSize, SnapshotSizes, TopicSize
from console.topics import cache as metadata_cache
from console.topics import search as topic_search
from console.topics.cache import TopicRow
from console.topics.list_configs import LIST_CONFIG_KEYS, ConfigPrefetch, list_configs

SORT_KEYS = ("name", "partitions", "replication_factor", "under_replicated", "offline")
DEFAULT_PER_PAGE = 50
MAX_PER_PAGE = 500


def target(name: str) -> str:
    """How a topic is named in the audit trail's targets and outcomes."""
    return f"topic:{name}"


# -- list ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicListItem:
    row: TopicRow
    cleanup_policy: str | None = None
    retention_ms: str | None = None
    under_min_isr: int | None = None  # None when min.insync.replicas is unknown
    size: TopicSize | None = None  # from the latest telemetry snapshot; None when not in it

    @property
    def size_bytes(self) -> int | None:
        return self.size.bytes if self.size is not None and self.size.known else None


def snapshot_sizes(cluster) -> SnapshotSizes:
    """Topic sizes from the cluster's latest telemetry snapshot (cached per snapshot file)."""
    return telemetry_sizes.latest_sizes(cluster.name)


@dataclass(frozen=True)
class TopicPage:
    """One page of the topic list and how it was produced."""

    items: list[TopicListItem]
    total: int  # topics matching the search and filters
    page: int
    pages: int
    per_page: int
    fetched_at: float  # when the metadata was read from Kafka (epoch seconds)
    age_s: float
    cluster_topics: int
    query_error: str = ""
    sizes: SnapshotSizes = field(default_factory=SnapshotSizes)  # "as of" its ts


def list_topics(
    *,
    actor,
    cluster,
    query: str = "",
    regex: bool = False,
    include_internal: bool = False,
    unhealthy_only: bool = False,
    sort: str = "name",
    descending: bool = False,
    page: int = 1,
    per_page: int = DEFAULT_PER_PAGE,
    refresh: bool = False,
) -> TopicPage:
    """A filtered, sorted page of topics from one (cached) metadata fetch plus one configs batch.

    Raises KafkaOperationError when the metadata cannot be read.
    """
    access.require(actor, cluster, access.VIEW)
    sort = sort if sort in SORT_KEYS else "name"
    per_page = max(1, min(MAX_PER_PAGE, per_page))
    prefetch = None
    if page == 1 and sort == "name" and not (query or descending or unhealthy_only):
        if refresh or metadata_cache.peek(cluster) is None:  # a fetch: its first names are this page
            prefetch = ConfigPrefetch(cluster, per_page)
    try:
        snap = metadata_cache.get_snapshot(cluster, refresh=refresh, on_names=prefetch and prefetch.start)
    finally:
        if prefetch is not None:
            prefetch.join()
    if prefetch is not None:
        metadata_cache.remember_configs(snap, prefetch.got)
    query_error = ""
    matching = None  # names matching the search (None: no search)
    if query:
        try:
            matching = topic_search.matching_names(snap.search_index(), query, regex)
        except patterns.PatternError as exc:
            matching, query_error = [], f"The regular expression is not valid: {exc}"
    if sort == "name" and not unhealthy_only:
        # By name needs no partition counts: filter the sorted names, count only the page's rows.
        if matching is None:
            names = snap.names if include_internal else snap.public_names
        else:
            internal = snap.internal_names
            names = (
                matching if include_internal or not internal else [n for n in matching if n not in internal]
            )
        if descending:
            names = names[::-1]
        total = len(names)
        pages = max(1, -(-total // per_page))
        page = max(1, min(page, pages))
        chunk = [snap.row(n) for n in names[(page - 1) * per_page : page * per_page]]
    else:
        rows = snap.sorted_rows(sort)
        wanted = None if matching is None else set(matching)
        if descending:
            rows = rows[::-1]
        selected = [
            r
            for r in rows
            if (include_internal or not r.internal)
            and (not unhealthy_only or r.unhealthy)
            and (wanted is None or r.name in wanted)
        ]
        total = len(selected)
        pages = max(1, -(-total // per_page))
        page = max(1, min(page, pages))
        chunk = selected[(page - 1) * per_page : page * per_page]
    sizes = snapshot_sizes(cluster)
    return TopicPage(
        items=_with_configs(cluster, snap, chunk, sizes),
        total=total,
        page=page,
        pages=pages,
        per_page=per_page,
        fetched_at=snap.fetched_at,
        age_s=snap.age_s,
        cluster_topics=len(snap.names),
        query_error=query_error,
        sizes=sizes,
    )


def _with_configs(cluster, snap, rows: list[TopicRow], sizes: SnapshotSizes) -> list[TopicListItem]:
    """Cleanup policy, retention and min ISR of one page's topics: one batched DescribeConfigs."""
    known, missing = metadata_cache.cached_configs(snap, [r.name for r in rows])
    if missing:
        try:
            got = gateway_for(cluster).describe_configs(
                [ConfigResource("TOPIC", n) for n in missing],
                include_documentation=False,
                keys=list(LIST_CONFIG_KEYS),
            )
        except KafkaOperationError:
            got = {}  # the list still shows; these columns say "unknown"
        fetched = list_configs(got)
        metadata_cache.remember_configs(snap, fetched)
        known.update(fetched)
    items = []
    for r in rows:
        cfg = known.get(r.name)
        under_min = None
        if cfg is not None:
            try:
                min_isr = int(cfg.get("min.insync.replicas") or 1)
                under_min = sum(1 for size in r.isr_sizes if size < min_isr)
            except ValueError:
                under_min = None
        items.append(
            TopicListItem(
                r,
                cfg.get("cleanup.policy") if cfg else None,
                cfg.get("retention.ms") if cfg else None,
                under_min,
                sizes.topic(r.name),
            )
        )
    return items


# -- detail --------------------------------------------------------------------------------------


class PartitionRow(NamedTuple):
    """One partition on the topic page (a named tuple: a 1,000-partition page builds 1,000)."""

    id: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    start_offset: int | None
    end_offset: int | None

    @property
    def offline(self) -> bool:
        return self.leader < 0

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    @property
    def leader_not_preferred(self) -> bool:
        return bool(self.replicas) and self.leader >= 0 and self.leader != self.replicas[0]

    @property
    def messages(self) -> int | None:
        if self.start_offset is None or self.end_offset is None:
            return None
        return max(0, self.end_offset - self.start_offset)


@dataclass(frozen=True)
class TopicDetail:
    name: str
    topic_id: str | None
    internal: bool
    partitions: list[PartitionRow]
    configs: list  # ConfigEntry, overrides first
    configs_error: KafkaOperationError | None
    offsets_error: KafkaOperationError | None
    events: list[EventRow] = field(default_factory=list)
    sizes: SnapshotSizes = field(default_factory=SnapshotSizes)  # the latest telemetry snapshot

    @property
    def size(self) -> TopicSize | None:
        """The topic's size in the latest snapshot (None: no snapshot yet, or created since)."""
        return self.sizes.topic(self.name)

    @cached_property
    def partition_sizes(self) -> dict[int, PartitionSize]:
        return self.sizes.partitions(self.name)

    @property
    def disk_bytes(self) -> int | None:
        """Every replica's bytes in the snapshot (None when the snapshot does not have the topic)."""
        parts = self.partition_sizes
        return sum(p.disk_bytes for p in parts.values()) if parts else None

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0

    @property
    def total_messages(self) -> int | None:
        counts = [p.messages for p in self.partitions]
        return None if any(c is None for c in counts) else sum(counts)


def overrides_first(entries: Iterable) -> list:
    """Topic overrides (and other non-default sources) first, then defaults; by name within each."""
    return sorted(entries, key=lambda e: (e.source != "DYNAMIC_TOPIC_CONFIG", e.default, e.name))


_NAMING_BATCH = 2000
_SCANNED = 500  # a topic's newest events whose operations are listed with them


class EventRow(NamedTuple):
    """An audit event as the topic page lists it (its JSON columns are not read)."""

    pk: int
    created_at: datetime
    actor_name: str
    action: str
    outcome: str


_EVENT_COLUMNS = ("id", "created_at", "actor_name", "action", "outcome")


def recent_events(cluster, name: str, limit: int = 20) -> list[EventRow]:
    """The latest audit events naming this topic, and every event of the operations that named it.

    A reassignment's or an election's "requested" event names its topics; its later events (the
    throttles set, changed and removed, the cancel, the outcome) belong to the same operation and
    are listed with it. The events naming the topic come from the audit target index
    (``AuditTarget``, newest first by its (target, event) index), this cluster's newest
    ``max(limit, 500)`` of them (one batch); the operations named among those, with their events
    from the operation index. No query scans the trail, and a topic's long history is not read
    either (1M events, or 100,000 naming one topic: a few index probes).
    """
    wanted = target(name)
    scan = max(limit, _SCANNED)
    naming: list[int] = []  # this cluster's newest events naming the topic, newest first
    ops: dict[int, None] = {}  # the operations among them, newest first
    before = None
    while len(naming) < scan:
        size = min(_NAMING_BATCH, scan - len(naming))
        batch = AuditTarget.objects.filter(target=wanted, event__cluster_id=cluster.pk)
        if before is not None:
            batch = batch.filter(event_id__lt=before)
        rows = list(batch.order_by("-event_id").values_list("event_id", "event__operation_id")[:size])
        for event_id, op in rows:
            naming.append(event_id)
            if op is not None:
                ops[op] = None
        if len(rows) < size:
            break
        before = rows[-1][0]
    if not naming:
        return []
    rows = AuditEvent.objects.filter(id__in=naming[:limit]).values_list(*_EVENT_COLUMNS)
    found = {row[0]: EventRow(*row) for row in rows}
    if ops:
        rows = (
            AuditEvent.objects.filter(cluster_id=cluster.pk, operation_id__in=list(ops))
            .order_by("-id")
            .values_list(*_EVENT_COLUMNS)[:limit]
        )
        found.update((row[0], EventRow(*row)) for row in rows)
    return [found[i] for i in sorted(found, reverse=True)[:limit]]


def describe_topic(*, actor, cluster, name: str) -> TopicDetail:
    """Partitions with leaders/replicas/ISR, offsets per partition (two batched calls), configs, events.

    Raises KafkaOperationError (UNKNOWN_TOPIC_OR_PARTITION for a missing topic).
    """
    access.require(actor, cluster, access.VIEW)
    gw = gateway_for(cluster)
    meta = gw.describe_topics([name])[name]
    if isinstance(meta, KafkaOperationError):
        raise meta
    by_leader: dict[int, dict[str, list[int]]] = {}
    for p in meta.partitions:
        if p.leader >= 0:
            by_leader.setdefault(p.leader, {}).setdefault(name, []).append(p.id)
    starts, ends, offsets_error = {}, {}, None
    try:
        # earliest and latest of every partition in one round: one ListOffsets per leader and spec
        (starts, _), (ends, _) = gw.offsets_by_leader(by_leader, ("earliest", "latest"))
    except KafkaOperationError as exc:
        offsets_error = exc
    start, end = starts.get, ends.get
    rows = [
        PartitionRow(
            p.id, p.leader, p.replicas, p.isr, p.offline_replicas, start((name, p.id)), end((name, p.id))
        )
        for p in meta.partitions
    ]
    configs, configs_error = [], None
    try:
        got = gw.describe_configs([ConfigResource("TOPIC", name)])[ConfigResource("TOPIC", name)]
        if isinstance(got, KafkaOperationError):
            configs_error = got
        else:
            configs = overrides_first(got.values())
    except KafkaOperationError as exc:
        configs_error = exc
    return TopicDetail(
        name=name,
        topic_id=meta.topic_id,
        internal=meta.internal,
        partitions=rows,
        configs=configs,
        configs_error=configs_error,
        offsets_error=offsets_error,
        events=recent_events(cluster, name),
        sizes=snapshot_sizes(cluster),
    )


def partition_count(*, actor, cluster, name: str) -> int | None:
    """The topic's partition count from the cached metadata (None when unknown or unreadable)."""
    access.require(actor, cluster, access.VIEW)
    try:
        meta = metadata_cache.get_snapshot(cluster).by_name.get(name)
    except KafkaOperationError:
        return None
    return len(meta.partitions) if meta is not None else None


# -- create like: a topic's settings as a new topic's starting point ---------------------------------


@dataclass(frozen=True)
class TopicSettings:
    """What "create like this topic" copies: the partition count, the replication factor (the first
    partition's replica count) and the configs set on the topic itself (source DYNAMIC_TOPIC_CONFIG);
    broker and default values are left for the new topic to inherit, and a sensitive value that
    Kafka does not show is named in ``unshown``."""

    source: str
    partitions: int
    replication_factor: int
    configs: dict[str, str]
    unshown: tuple[str, ...] = ()

    def spec_for(self, spec):
        """``spec`` (a TopicSpec) with what it leaves out taken from this topic: the counts unless
        it gives them or an assignment, and every config it does not set."""
        if spec.assignment is None:
            partitions = spec.partitions if spec.partitions != -1 else self.partitions
            rf = spec.replication_factor if spec.replication_factor != -1 else self.replication_factor
        else:
            partitions, rf = spec.partitions, spec.replication_factor
        return replace(
            spec, partitions=partitions, replication_factor=rf, configs={**self.configs, **dict(spec.configs)}
        )


def settings_of(*, actor, cluster, name: str) -> TopicSettings:
    """Raises KafkaOperationError (UNKNOWN_TOPIC_OR_PARTITION for a missing topic)."""
    access.require(actor, cluster, access.VIEW)
    gw = gateway_for(cluster)
    meta = gw.describe_topics([name])[name]
    if isinstance(meta, KafkaOperationError):
        raise meta
    got = gw.describe_configs([ConfigResource("TOPIC", name)])[ConfigResource("TOPIC", name)]
    if isinstance(got, KafkaOperationError):
        raise got
    own = [e for e in got.values() if e.source == "DYNAMIC_TOPIC_CONFIG"]
    replicas = min((len(p.replicas) for p in meta.partitions), default=-1)
    return TopicSettings(
        source=name,
        partitions=len(meta.partitions),
        replication_factor=replicas if replicas > 0 else -1,
        configs={e.name: e.value for e in sorted(own, key=lambda e: e.name) if e.value is not None},
        unshown=tuple(sorted(e.name for e in own if e.value is None)),
    )
