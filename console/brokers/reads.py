"""Broker reads: the brokers list and one broker's page (kafbat#1253).

Where each figure comes from, so a page stays usable at 100,000 partitions:

* replicas, leaders, under-replicated, out-of-ISR and offline counts: the topic area's cached
  metadata snapshot (``console/topics/cache.py``), counted once per snapshot;
* brokers, hosts and racks: one DescribeCluster (Metadata carries no racks);
* log dirs: one DescribeLogDirs per broker — on the list with an empty partition filter (the
  dirs' total/usable bytes only, no replica entries), on a broker's page that broker's full
  answer (the size of every replica it hosts);
* throttles: the reassignment area's reader (``throttles._current_values``) over every topic's
  ``*.replication.throttled.replicas`` and every broker's throttled rates, once per snapshot.

Nothing here changes Kafka. Raises KafkaOperationError when the metadata cannot be read.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from urllib.parse import urlencode

from console import access
from console.clusters.actions import gateway_for
from console.formatting import human_config_value
from console.kafka import ConfigResource, KafkaOperationError, LogDirInfo
from console.reassignment import planner
from console.reassignment import throttles as reassign_throttles
from console.topics import cache as metadata_cache

DEFAULT_PER_PAGE = 100
MAX_PER_PAGE = 1000
FILTERS = {
    "": "all",
    "leader": "leader here",
    "follower": "follower here",
    "out-of-isr": "not in the ISR",
    "under-replicated": "under-replicated",
    "throttled": "throttled",
}
SORTS = {"topic": "topic, partition", "size": "size (largest first)"}
_BROKER_ID = re.compile(r"\d{1,10}")


class UnknownBroker(LookupError):
    """No live broker has this id and no partition names it as a replica."""


def parse_broker_id(text: str) -> int | None:
    """A broker id from a URL (digits only), or None."""
    text = str(text)
    return int(text) if _BROKER_ID.fullmatch(text) else None


# -- per-snapshot derived data -----------------------------------------------------------------------

_derived: dict[tuple[int, str], tuple[weakref.ref, object]] = {}
_derived_lock = threading.Lock()


def _per_snapshot(snap, what: str, compute: Callable[[], object]):
    """``compute()`` once per metadata snapshot (dropped with the snapshot)."""
    key = (id(snap), what)
    hit = _derived.get(key)
    if hit is not None and hit[0]() is snap:
        return hit[1]
    value = compute()
    with _derived_lock:
        for stale in [k for k, (ref, _) in _derived.items() if ref() is None]:
            _derived.pop(stale, None)
        _derived[key] = (weakref.ref(snap), value)
    return value


@dataclass(frozen=True)
class Counts:
    replicas: int = 0  # partitions with a replica on the broker
    leaders: int = 0
    under_replicated: int = 0  # partitions it hosts whose ISR is smaller than their replicas
    out_of_isr: int = 0  # its own replicas that are not in their partition's ISR
    offline: int = 0  # partitions it hosts that have no leader


def count_by_broker(topics) -> dict[int, Counts]:
    """Per broker id, the counts above, in one pass over the metadata (pure)."""
    parts = [p for t in topics for p in t.partitions]
    replicas = Counter(chain.from_iterable(p.replicas for p in parts))
    leaders = Counter(p.leader for p in parts if p.leader >= 0)
    under: Counter[int] = Counter()
    out: Counter[int] = Counter()
    offline: Counter[int] = Counter()
    for p in parts:
        if len(p.isr) >= len(p.replicas) and p.leader >= 0:
            continue  # the healthy majority costs nothing more
        if len(p.isr) < len(p.replicas):
            under.update(p.replicas)
            out.update(r for r in p.replicas if r not in p.isr)
        if p.leader < 0:
            offline.update(p.replicas)
    return {
        b: Counts(replicas[b], leaders[b], under[b], out[b], offline[b])
        for b in sorted(set(replicas) | set(leaders))
    }


# -- throttles -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThrottledTopic:
    """A topic whose throttled-replicas configs name this broker (``*``: every replica)."""

    topic: str
    leader: tuple[int, ...] = ()  # partitions whose replica here is throttled as a leader (source)
    follower: tuple[int, ...] = ()  # ... as a follower (a replica being copied here)
    leader_all: bool = False
    follower_all: bool = False

    def leader_covers(self, partition: int) -> bool:
        return self.leader_all or partition in self.leader

    def follower_covers(self, partition: int) -> bool:
        return self.follower_all or partition in self.follower

    @property
    def leader_text(self) -> str:
        return "all" if self.leader_all else ", ".join(map(str, self.leader))

    @property
    def follower_text(self) -> str:
        return "all" if self.follower_all else ", ".join(map(str, self.follower))


@dataclass(frozen=True)
class BrokerThrottles:
    """The replication throttles in effect on one broker."""

    leader_rate: str | None = None  # leader.replication.throttled.rate (a per-broker override), bytes/s
    follower_rate: str | None = None
    topics: tuple[ThrottledTopic, ...] = ()
    error: KafkaOperationError | None = None  # this broker's rates could not be read

    @property
    def active(self) -> bool:
        return bool(self.leader_rate or self.follower_rate or self.topics)

    @property
    def limits(self) -> bool:
        """Whether replication is slowed here: Kafka throttles only the listed replicas, and only
        at a rate set on the broker (without one the limit is Long.MAX_VALUE)."""
        listed_leader = any(t.leader or t.leader_all for t in self.topics)
        listed_follower = any(t.follower or t.follower_all for t in self.topics)
        return bool((self.leader_rate and listed_leader) or (self.follower_rate and listed_follower))

    @property
    def leader_rate_text(self) -> str | None:
        return _rate_text(reassign_throttles.LEADER_RATE, self.leader_rate)

    @property
    def follower_rate_text(self) -> str | None:
        return _rate_text(reassign_throttles.FOLLOWER_RATE, self.follower_rate)

    def topic(self, name: str) -> ThrottledTopic | None:
        return next((t for t in self.topics if t.topic == name), None)


def _rate_text(config: str, value: str | None) -> str | None:
    return None if value is None else (human_config_value(config, value) or value)


@dataclass(frozen=True)
class ThrottleState:
    """Every broker's throttles, read once per snapshot."""

    by_broker: dict[int, BrokerThrottles] = field(default_factory=dict)
    error: KafkaOperationError | None = None  # the topics' throttles could not be read at all

    def of(self, broker: int) -> BrokerThrottles:
        return self.by_broker.get(broker) or BrokerThrottles()


def _entries(value: str | None) -> tuple[bool, dict[int, set[int]]]:
    """A throttled-replicas value: ("*" given, {broker: partitions})."""
    every, named = False, {}
    for item in planner.throttle_entries(value):
        if item == "*":
            every = True
            continue
        partition, _, broker = item.partition(":")
        try:
            named.setdefault(int(broker), set()).add(int(partition))
        except ValueError:
            continue  # not "partition:broker": Kafka would not have accepted it; ignore
    return every, named


def throttles_by_broker(
    values: Mapping[tuple[ConfigResource, str], str | None],
    hosts: Mapping[str, set[int]],
    errors: Mapping[ConfigResource, KafkaOperationError] | None = None,
) -> dict[int, BrokerThrottles]:
    """Per broker: its rates and the topics naming it (pure).

    ``values`` is the reassignment area's reader output ``{(resource, config): override or None}``;
    ``hosts`` maps a topic to the brokers hosting it (for ``*``).
    """
    rates: dict[int, dict[str, str]] = {}
    per_topic: dict[int, dict[str, dict[str, object]]] = {}
    for (res, config), value in values.items():
        if value is None:
            continue
        if res.type == "BROKER" and config in reassign_throttles.RATE_CONFIGS:
            broker = parse_broker_id(res.name)
            if broker is not None:
                rates.setdefault(broker, {})[config] = value
        elif res.type == "TOPIC" and config in reassign_throttles.REPLICA_CONFIGS:
            role = "leader" if config == reassign_throttles.LEADER_REPLICAS else "follower"
            every, named = _entries(value)
            brokers = set(named) | (hosts.get(res.name, set()) if every else set())
            for broker in brokers:
                slot = per_topic.setdefault(broker, {}).setdefault(res.name, {})
                if every:
                    slot[f"{role}_all"] = True
                slot[role] = tuple(sorted(named.get(broker, ())))
    broker_errors = {
        b: err
        for res, err in (errors or {}).items()
        if res.type == "BROKER" and (b := parse_broker_id(res.name)) is not None
    }
    out = {}
    for broker in sorted(set(rates) | set(per_topic) | set(broker_errors)):
        r = rates.get(broker, {})
        topics = tuple(
            ThrottledTopic(name, **slot)  # type: ignore[arg-type]
            for name, slot in sorted(per_topic.get(broker, {}).items())
        )
        out[broker] = BrokerThrottles(
            r.get(reassign_throttles.LEADER_RATE),
            r.get(reassign_throttles.FOLLOWER_RATE),
            topics,
            broker_errors.get(broker),
        )
    return out


def _hosts(snap) -> dict[str, set[int]]:
    return {t.name: {r for p in t.partitions for r in p.replicas} for t in snap.metadata.topics}


def _read_throttles(cluster, snap, broker_ids: list[int]) -> ThrottleState:
    gw = gateway_for(cluster)
    resources = [ConfigResource("TOPIC", t.name) for t in snap.metadata.topics]
    resources += [ConfigResource("BROKER", str(b)) for b in broker_ids]
    errors: dict[ConfigResource, KafkaOperationError] = {}
    try:
        values = reassign_throttles._current_values(
            gw,
            resources,
            reassign_throttles.REPLICA_CONFIGS + reassign_throttles.RATE_CONFIGS,
            strict=False,
            errors=errors,
        )
    except KafkaOperationError as exc:
        return ThrottleState(error=exc)
    topic_errors = [e for res, e in errors.items() if res.type == "TOPIC"]
    state = ThrottleState(
        throttles_by_broker(values, _hosts(snap), errors),
        # a topic deleted since the snapshot is no error; anything else is said once
        next((e for e in topic_errors if e.name != "UNKNOWN_TOPIC_OR_PARTITION"), None),
    )
    return state


def throttle_state(cluster, snap, broker_ids: list[int]) -> ThrottleState:
    """The throttles of every broker, read once per metadata snapshot (a failed read is retried)."""
    key = "throttles:" + ",".join(map(str, broker_ids))
    state = _per_snapshot(snap, key, lambda: _read_throttles(cluster, snap, broker_ids))
    if state.error is not None:
        with _derived_lock:
            _derived.pop((id(snap), key), None)
    return state


# -- log dirs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogDir:
    path: str
    error: KafkaOperationError | None
    total_bytes: int | None  # the disk's size (DescribeLogDirs v4+, Kafka 3.3+)
    usable_bytes: int | None  # free space Kafka can use
    replicas: int | None = None  # replicas in this dir (broker page only)
    data_bytes: int | None = None  # their size (broker page only)

    @property
    def used_bytes(self) -> int | None:
        if self.total_bytes is None or self.usable_bytes is None:
            return None
        return max(0, self.total_bytes - self.usable_bytes)

    @property
    def used_percent(self) -> float | None:
        used = self.used_bytes
        return None if used is None or not self.total_bytes else round(100 * used / self.total_bytes, 1)


def _log_dir(d: LogDirInfo, with_replicas: bool) -> LogDir:
    if not with_replicas:
        return LogDir(d.path, d.error, d.total_bytes, d.usable_bytes)
    current = [r for r in d.replicas.values() if not r.is_future]
    return LogDir(d.path, d.error, d.total_bytes, d.usable_bytes, len(current), sum(r.size for r in current))


# -- the list --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerRow:
    id: int
    host: str | None
    port: int | None
    rack: str | None
    live: bool  # listed by DescribeCluster; a broker only named as a replica is not
    counts: Counts
    log_dirs: tuple[LogDir, ...]
    log_dirs_error: KafkaOperationError | None
    throttles: BrokerThrottles

    @property
    def total_bytes(self) -> int | None:
        known = [d.total_bytes for d in self.log_dirs if d.total_bytes is not None]
        return sum(known) if known else None

    @property
    def used_bytes(self) -> int | None:
        known = [d.used_bytes for d in self.log_dirs if d.used_bytes is not None]
        return sum(known) if known else None

    @property
    def used_percent(self) -> float | None:
        used, total = self.used_bytes, self.total_bytes
        return None if used is None or not total else round(100 * used / total, 1)

    @property
    def data_bytes(self) -> int | None:
        known = [d.data_bytes for d in self.log_dirs if d.data_bytes is not None]
        return sum(known) if known else None


@dataclass(frozen=True)
class BrokerList:
    brokers: list[BrokerRow]
    fetched_at: float  # when the metadata was read (epoch seconds)
    age_s: float
    partitions: int  # partitions in the cluster
    throttles_error: KafkaOperationError | None = None

    @property
    def racks(self) -> list[str]:
        return sorted({b.rack for b in self.brokers if b.rack})


def _log_dirs_of(gw, broker_ids: list[int], *, full: bool) -> tuple[dict, KafkaOperationError | None]:
    """{broker: tuple[LogDirInfo] | error} (empty filter for the list: dirs and sizes only)."""
    if not broker_ids:
        return {}, None
    try:
        return gw.describe_log_dirs(broker_ids, None if full else []), None
    except KafkaOperationError as exc:
        return {}, exc


def _row(info, broker: int, counts, dirs_answer, dirs_error, throttles: ThrottleState, full: bool):
    answer = dirs_answer.get(broker)
    if isinstance(answer, KafkaOperationError):
        dirs, error = (), answer
    elif answer is None:
        dirs, error = (), dirs_error
    else:
        dirs, error = tuple(_log_dir(d, full) for d in answer), None
    return BrokerRow(
        broker,
        info.host if info else None,
        info.port if info else None,
        info.rack if info else None,
        info is not None,
        counts.get(broker, Counts()),
        dirs,
        error,
        throttles.of(broker),
    )


def _cluster_view(cluster, refresh: bool):
    """(snapshot, {id: BrokerInfo} of live brokers, counts per broker)."""
    snap = metadata_cache.get_snapshot(cluster, refresh=refresh)
    info = {b.id: b for b in gateway_for(cluster).describe_cluster().brokers}
    counts = _per_snapshot(snap, "counts", lambda: count_by_broker(snap.metadata.topics))
    return snap, info, counts


def list_brokers(*, actor, cluster, refresh: bool = False) -> BrokerList:
    """Every broker (live ones, and any a partition still names as a replica) with its figures."""
    access.require(actor, cluster, access.VIEW)
    snap, info, counts = _cluster_view(cluster, refresh)
    ids = sorted(set(info) | set(counts))
    throttles = throttle_state(cluster, snap, sorted(info))
    dirs, dirs_error = _log_dirs_of(gateway_for(cluster), sorted(info), full=False)
    rows = [_row(info.get(b), b, counts, dirs, dirs_error, throttles, full=False) for b in ids]
    return BrokerList(
        rows,
        snap.fetched_at,
        snap.age_s,
        sum(len(t.partitions) for t in snap.metadata.topics),
        throttles.error,
    )


# -- one broker ------------------------------------------------------------------------------------


def _int(value, default: int, low: int, high: int) -> int:
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return default
    return max(low, min(high, n))


@dataclass(frozen=True)
class PartitionQuery:
    """The broker page's query string: topic search, filter, sort, page (bad values fall back)."""

    topic: str = ""
    only: str = ""
    sort: str = "topic"
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE

    @classmethod
    def from_params(cls, params: Mapping) -> PartitionQuery:
        only = str(params.get("only") or "")
        sort = str(params.get("sort") or "topic")
        return cls(
            topic=str(params.get("q") or "").strip()[:500],
            only=only if only in FILTERS else "",
            sort=sort if sort in SORTS else "topic",
            page=_int(params.get("page"), 1, 1, 10**9),
            per_page=_int(params.get("per_page"), DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
        )

    def querystring(self, **changes) -> str:
        """This query as a query string (defaults left out), with ``changes`` applied."""
        values = {
            "q": self.topic,
            "only": self.only,
            "sort": "" if self.sort == "topic" else self.sort,
            "per_page": "" if self.per_page == DEFAULT_PER_PAGE else self.per_page,
            "page": "" if self.page == 1 else self.page,
        }
        values.update(changes)
        return urlencode({k: v for k, v in values.items() if v not in ("", None)})

    @property
    def without_page(self) -> str:
        """The query string of this query on any page (the pager adds ``page``)."""
        return self.querystring(page="")

    @property
    def custom_per_page(self) -> bool:
        return self.per_page != DEFAULT_PER_PAGE


@dataclass(frozen=True)
class HostedReplica:
    """One partition with a replica on the broker."""

    topic: str
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    is_leader: bool
    in_isr: bool
    size: int | None  # bytes of this replica (DescribeLogDirs), None when unknown
    log_dir: str | None
    moving_dir: bool  # a future replica is being copied to another of its log dirs
    leader_throttled: bool
    follower_throttled: bool

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    @property
    def offline(self) -> bool:
        return self.leader < 0


@dataclass(frozen=True)
class BrokerDetail:
    broker: BrokerRow
    rows: list[HostedReplica]  # the page
    total: int  # hosted partitions matching the query
    hosted: int  # hosted partitions
    page: int
    pages: int
    query: PartitionQuery
    fetched_at: float
    age_s: float
    throttles_error: KafkaOperationError | None = None

    @property
    def first(self) -> int:
        return (self.page - 1) * self.query.per_page + 1 if self.total else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.rows else 0


def _sizes(answer) -> dict[tuple[str, int], tuple[int, str, bool]]:
    """{(topic, partition): (size, dir, moving)} of the broker's current replicas."""
    out: dict[tuple[str, int], tuple[int, str, bool]] = {}
    if not isinstance(answer, tuple):
        return out
    future = set()
    for d in answer:
        for tp, r in d.replicas.items():
            if r.is_future:
                future.add(tp)
            else:
                out[tp] = (r.size, d.path, False)
    for tp in future & set(out):
        size, path, _ = out[tp]
        out[tp] = (size, path, True)
    return out


def describe_broker(
    *, actor, cluster, broker: str | int, query: PartitionQuery | None = None, refresh: bool = False
) -> BrokerDetail:
    """One broker: its row (with each dir's data size) and one page of the partitions it hosts.

    Raises UnknownBroker for an id no live broker has and no replica names, KafkaOperationError
    when the metadata cannot be read.
    """
    access.require(actor, cluster, access.VIEW)
    query = query or PartitionQuery()
    bid = parse_broker_id(str(broker))
    if bid is None:
        raise UnknownBroker(str(broker))
    snap, info, counts = _cluster_view(cluster, refresh)
    if bid not in info and bid not in counts:
        raise UnknownBroker(str(broker))
    throttles = throttle_state(cluster, snap, sorted(info))
    dirs, dirs_error = _log_dirs_of(gateway_for(cluster), [bid], full=True)
    row = _row(info.get(bid), bid, counts, dirs, dirs_error, throttles, full=True)
    hosted = [(t.name, p) for t in snap.metadata.topics for p in t.partitions if bid in p.replicas]
    sizes = _sizes(dirs.get(bid))
    mine = row.throttles
    throttled = {t.topic: t for t in mine.topics}

    def keep(name: str, p) -> bool:
        only = query.only
        if only == "leader":
            return p.leader == bid
        if only == "follower":
            return p.leader != bid
        if only == "out-of-isr":
            return bid not in p.isr
        if only == "under-replicated":
            return len(p.isr) < len(p.replicas)
        if only == "throttled":
            t = throttled.get(name)
            return t is not None and (t.leader_covers(p.id) or t.follower_covers(p.id))
        return True

    needle = query.topic.lower()
    selected = [(n, p) for n, p in hosted if (not needle or needle in n.lower()) and keep(n, p)]
    if query.sort == "size":
        selected.sort(key=lambda np: (-(sizes.get((np[0], np[1].id), (-1,))[0]), np[0], np[1].id))
    pages = max(1, -(-len(selected) // query.per_page))
    page = min(query.page, pages)
    chunk = selected[(page - 1) * query.per_page : page * query.per_page]
    rows = []
    for name, p in chunk:
        size = sizes.get((name, p.id))
        t = throttled.get(name)
        rows.append(
            HostedReplica(
                name,
                p.id,
                p.leader,
                p.replicas,
                p.isr,
                p.leader == bid,
                bid in p.isr,
                size[0] if size else None,
                size[1] if size else None,
                size[2] if size else False,
                bool(t and t.leader_covers(p.id)),
                bool(t and t.follower_covers(p.id)),
            )
        )
    return BrokerDetail(
        row,
        rows,
        len(selected),
        len(hosted),
        page,
        pages,
        query,
        snap.fetched_at,
        snap.age_s,
        throttles.error,
    )
