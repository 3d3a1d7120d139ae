"""Broker reads: the brokers list and one broker's page (kafbat#1253).

Where each figure comes from, so a page stays usable at 100,000 partitions:

* replicas, leaders, under-replicated, out-of-ISR and offline counts: the topic area's cached
  metadata snapshot (``console/topics/cache.py``), as the Metadata decoder counted them while it
  read Kafka's answer (``figures.count_by_broker``);
* brokers, hosts and racks: one DescribeCluster (Metadata carries no racks);
* log dirs: one DescribeLogDirs per broker — on the list with an empty partition filter (the
  dirs' total/usable bytes only, no replica entries), asked of the brokers the client knows
  while DescribeCluster is asked, on a broker's page that broker's full answer (the size of every
  replica it hosts);
* throttles: every topic's ``*.replication.throttled.replicas`` and every broker's throttled
  rates, their overrides read by ``throttles.current_values`` (lean), once per snapshot.

Nothing here changes Kafka. Raises KafkaOperationError when the metadata cannot be read.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from console import access
from console.brokers.figures import Counts, LogDir, count_by_broker, log_dir, partition_count, per_snapshot
from console.brokers.query import PartitionQuery, parse_broker_id
from console.brokers.throttling import BrokerThrottles, ThrottleState, throttle_state
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.kafka.deferred import hosted_by
from console.topics import cache as metadata_cache


class UnknownBroker(LookupError):
    """No live broker has this id and no partition names it as a replica."""


# -- the list --------------------------------------------------------------------------------------


def _sum_known(values: Iterable[int | None]) -> int | None:
    """The sum over the log dirs that report the figure; None when none does."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


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
        return _sum_known(d.total_bytes for d in self.log_dirs)

    @property
    def used_bytes(self) -> int | None:
        return _sum_known(d.used_bytes for d in self.log_dirs)

    @property
    def usable_bytes(self) -> int | None:
        """Space Kafka may still use, summed over the dirs that report it."""
        return _sum_known(d.usable_bytes for d in self.log_dirs)

    @property
    def used_percent(self) -> float | None:
        used, total = self.used_bytes, self.total_bytes
        return None if used is None or not total else round(100 * used / total, 1)

    @property
    def data_bytes(self) -> int | None:
        return _sum_known(d.data_bytes for d in self.log_dirs)


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


def _log_dirs_of(gw, broker_ids: list[int] | None, *, full: bool) -> tuple[dict, KafkaOperationError | None]:
    """{broker: tuple[LogDirInfo] | error} (empty filter for the list: dirs and sizes only) of
    ``broker_ids``, or of every live broker the client knows when None."""
    if broker_ids is not None and not broker_ids:
        return {}, None
    try:
        return gw.describe_log_dirs(broker_ids, None if full else []), None
    except KafkaOperationError as exc:
        return {}, exc


def _dirs_of_listed(
    gw, info: dict, dirs: dict, error: KafkaOperationError | None
) -> tuple[dict, KafkaOperationError | None]:
    """The list's log dirs, asked of the brokers the client knew before DescribeCluster answered
    (so they are not one round trip behind it), made the answers of exactly the brokers
    DescribeCluster lists: any it lists that were not asked are asked now, any others dropped."""
    if error is not None:
        return _log_dirs_of(gw, sorted(info), full=False)
    missing = sorted(set(info) - set(dirs))
    if missing:
        more, error = _log_dirs_of(gw, missing, full=False)
        dirs = {**dirs, **more}
    return {b: d for b, d in dirs.items() if b in info}, error


def _row(info, broker: int, counts, dirs_answer, dirs_error, throttles: ThrottleState, full: bool):
    answer = dirs_answer.get(broker)
    if isinstance(answer, KafkaOperationError):
        dirs, error = (), answer
    elif answer is None:
        dirs, error = (), dirs_error
    else:
        dirs, error = tuple(log_dir(d, full) for d in answer), None
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


def _counts(snap) -> tuple[dict[int, Counts], int]:
    """Counts per broker and the partitions in the cluster, once per snapshot."""
    topics = snap.metadata.topics
    return per_snapshot(snap, "counts", lambda: (count_by_broker(topics), partition_count(topics)))


def _cluster_view(cluster, refresh: bool, pool: ThreadPoolExecutor):
    """(the metadata snapshot being read, {id: BrokerInfo} of live brokers): DescribeCluster is
    answered while the snapshot is read."""
    reading = pool.submit(metadata_cache.get_snapshot, cluster, refresh=refresh)
    return reading, {b.id: b for b in gateway_for(cluster).describe_cluster().brokers}


def list_brokers(*, actor, cluster, refresh: bool = False) -> BrokerList:
    """Every broker (live ones, and any a partition still names as a replica) with its figures.

    The reads overlap: the log dirs of the brokers the client knows, DescribeCluster and the
    snapshot at once (a broker DescribeCluster lists that was not asked is asked after it); the
    throttles once the snapshot is read. The counts come with the snapshot. The page costs its
    slowest chain of reads."""
    access.require(actor, cluster, access.VIEW)
    gw = gateway_for(cluster)
    with ThreadPoolExecutor(3) as pool:
        dirs_read = pool.submit(_log_dirs_of, gw, None, full=False)  # the brokers the client knows
        reading, info = _cluster_view(cluster, refresh, pool)
        snap = reading.result()
        throttles_read = pool.submit(throttle_state, cluster, snap, sorted(info))
        counts, partitions = _counts(snap)
        dirs, dirs_error = _dirs_of_listed(gw, info, *dirs_read.result())
        throttles = throttles_read.result()
    ids = sorted(set(info) | set(counts))
    rows = [_row(info.get(b), b, counts, dirs, dirs_error, throttles, full=False) for b in ids]
    return BrokerList(rows, snap.fetched_at, snap.age_s, partitions, throttles.error)


# -- one broker ------------------------------------------------------------------------------------


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
    with ThreadPoolExecutor(1) as pool:
        reading, info = _cluster_view(cluster, refresh, pool)
        snap = reading.result()
    counts, _ = _counts(snap)
    if bid not in info and bid not in counts:
        raise UnknownBroker(str(broker))
    throttles = throttle_state(cluster, snap, sorted(info))
    dirs, dirs_error = _log_dirs_of(gateway_for(cluster), [bid], full=True)
    row = _row(info.get(bid), bid, counts, dirs, dirs_error, throttles, full=True)
    hosted = [(t.name, p) for t in snap.metadata.topics for p in hosted_by(t, bid)]
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
