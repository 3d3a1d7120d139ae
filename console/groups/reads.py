"""Consumer group reads: the list (search, filters, sort, paging, total lag), a group's page
(members, per partition the committed offset, log end offset and lag), the groups consuming a topic.

Each read is a handful of batched requests, whatever the number of groups: ListGroups per broker,
DescribeGroups / ConsumerGroupDescribe and OffsetFetch per coordinator, ListOffsets per partition
leader (leaders from the topic area's cached metadata).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from console import access, patterns
from console.clusters.actions import gateway_for
from console.groups.core import lag
from console.groups.offsets import log_offsets
from console.kafka import GroupDescription, KafkaOperationError, TopicMetadata, TopicPartition
from console.topics import cache as metadata_cache

SORT_KEYS = ("group", "state", "type", "members", "partitions", "lag")
DEFAULT_PER_PAGE = 50
MAX_PER_PAGE = 500


def target(group_id: str) -> str:
    """How a group is named in the audit trail's targets and outcomes."""
    return f"group:{group_id}"


def _ends_or_error(
    cluster, tps, topics: dict[str, TopicMetadata] | None = None
) -> tuple[dict[TopicPartition, int | None], KafkaOperationError | None]:
    try:
        return log_offsets(cluster, tps, "latest", topics), None
    except KafkaOperationError as exc:
        return {}, exc


# -- the list --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupRow:
    """One group of the list. ``lag`` sums the partitions whose log end is known (``lag_known``)."""

    group_id: str
    group_type: str  # classic, consumer (KIP-848), "" when the broker does not say
    state: str
    members: int | None  # None when the group could not be described
    coordinator: int
    assignor: str
    topics: tuple[str, ...]
    partitions: int  # partitions with a committed offset
    lag: int | None
    lag_known: bool = True
    error: str = ""


@dataclass(frozen=True)
class GroupPage:
    items: list[GroupRow]
    total: int  # groups matching the search and filters
    page: int
    pages: int
    per_page: int
    cluster_groups: int
    states: tuple[str, ...]  # every state seen (for the filter)
    read_s: float
    query_error: str = ""
    lag_error: KafkaOperationError | None = None


def _lag_of(
    offsets: dict[TopicPartition, int], ends: dict[TopicPartition, int | None]
) -> tuple[int | None, bool]:
    """The summed lag of the partitions whose log end is known (None when none is), and whether
    every partition's is."""
    total, known, complete = 0, False, True
    for tp, committed in offsets.items():
        end = ends.get(tp)
        if end is None or end < 0:
            complete = False
            continue
        known = True
        if end > committed:
            total += end - committed
    return (total if known else None), complete


def _row(listing, desc, offsets, ends) -> GroupRow:
    errors = []
    if isinstance(desc, KafkaOperationError) or desc is None:
        errors.append(f"not described: {desc.name}" if desc is not None else "not described")
        desc = None
    if isinstance(offsets, KafkaOperationError) or offsets is None:
        errors.append(f"offsets unreadable: {offsets.name}" if offsets is not None else "")
        offsets = {}
    topics = {tp.topic for tp in offsets}
    if desc is not None:
        topics.update(tp.topic for m in desc.members for tp in m.assignment)
    total, complete = _lag_of(offsets, ends)
    return GroupRow(
        group_id=listing.group_id,
        group_type=desc.group_type if desc is not None else listing.group_type,
        state=(desc.state if desc is not None else listing.state) or "",
        members=len(desc.members) if desc is not None else None,
        coordinator=listing.coordinator,
        assignor=desc.assignor if desc is not None else "",
        topics=tuple(sorted(topics)),
        partitions=len(offsets),
        lag=total,
        lag_known=complete,
        error="; ".join(e for e in errors if e),
    )


def _sort_key(sort: str):
    if sort == "lag":
        return lambda r: (r.lag is None, -(r.lag or 0), r.group_id)
    if sort == "members":
        return lambda r: (r.members is None, -(r.members or 0), r.group_id)
    if sort == "partitions":
        return lambda r: (-r.partitions, r.group_id)
    if sort == "state":
        return lambda r: (r.state.lower(), r.group_id)
    if sort == "type":
        return lambda r: (r.group_type, r.group_id)
    return lambda r: r.group_id


def list_groups(
    *,
    actor,
    cluster,
    query: str = "",
    regex: bool = False,
    state: str = "",
    topic: str = "",
    lagging: bool = False,
    sort: str = "group",
    descending: bool = False,
    page: int = 1,
    per_page: int = DEFAULT_PER_PAGE,
) -> GroupPage:
    """A filtered, sorted page of the cluster's consumer groups with their total lag.

    Raises KafkaOperationError when the groups cannot be listed; a group that cannot be described
    or whose offsets cannot be read is still listed, saying so.
    """
    access.require(actor, cluster, access.VIEW)
    started = time.monotonic()
    gw = gateway_for(cluster)
    listings = gw.list_consumer_groups()
    ids = [g.group_id for g in listings]
    described = gw.describe_consumer_groups(ids, listings) if ids else {}
    offsets = gw.list_consumer_group_offsets(None, listings=listings) if ids else {}
    committed = {tp for o in offsets.values() if isinstance(o, dict) for tp in o}
    ends, lag_error = _ends_or_error(cluster, committed)
    rows = [_row(g, described.get(g.group_id), offsets.get(g.group_id), ends) for g in listings]
    query_error = ""
    match = None
    if query:
        try:
            match = _matcher(query, regex)
        except patterns.PatternError as exc:
            match, query_error = (lambda _g: False), f"The regular expression is not valid: {exc}"
    wanted_state = state.strip().lower()
    selected = [
        r
        for r in rows
        if (match is None or match(r.group_id))
        and (not wanted_state or r.state.lower() == wanted_state)
        and (not topic or topic in r.topics)
        and (not lagging or (r.lag or 0) > 0)
    ]
    sort = sort if sort in SORT_KEYS else "group"
    selected.sort(key=_sort_key(sort), reverse=descending)
    per_page = max(1, min(MAX_PER_PAGE, per_page))
    pages = max(1, -(-len(selected) // per_page))
    page = max(1, min(page, pages))
    return GroupPage(
        items=selected[(page - 1) * per_page : page * per_page],
        total=len(selected),
        page=page,
        pages=pages,
        per_page=per_page,
        cluster_groups=len(rows),
        states=tuple(sorted({r.state for r in rows if r.state})),
        read_s=time.monotonic() - started,
        query_error=query_error,
        lag_error=lag_error,
    )


def _matcher(query: str, regex: bool):
    if regex:
        pattern = patterns.compile_pattern(query)
        return lambda name: pattern.search(name) is not None
    needle = query.lower()
    return lambda name: needle in name.lower()


# -- one group -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    committed: int | None
    log_end: int | None
    owner: str = ""  # the member it is assigned to: client id (host)

    @property
    def lag(self) -> int | None:
        return lag(self.committed, self.log_end)


@dataclass(frozen=True)
class MemberRow:
    member_id: str
    client_id: str
    host: str
    instance_id: str | None
    partitions: str  # "topic: 0, 1, 2; other: 3"
    count: int
    target: str = ""  # KIP-848: where the member is moving to, when it differs
    subscribed: str = ""


@dataclass(frozen=True)
class GroupDetail:
    group: GroupDescription
    partitions: list[PartitionLag]
    members: list[MemberRow]
    offsets_error: KafkaOperationError | None = None
    ends_error: KafkaOperationError | None = None
    read_at: float = field(default_factory=time.time)

    @property
    def group_id(self) -> str:
        return self.group.group_id

    @property
    def read_time(self) -> datetime:
        return datetime.fromtimestamp(self.read_at, UTC)

    @property
    def committed(self) -> dict[TopicPartition, int]:
        return {
            TopicPartition(p.topic, p.partition): p.committed
            for p in self.partitions
            if p.committed is not None
        }

    @property
    def total_lag(self) -> int | None:
        lags = [p.lag for p in self.partitions if p.committed is not None]
        return None if any(v is None for v in lags) else sum(lags)

    @property
    def topics(self) -> list[str]:
        return sorted({p.topic for p in self.partitions})


def partitions_text(tps: Iterable[TopicPartition]) -> str:
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(tps):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return "; ".join(f"{t}: {', '.join(map(str, ps))}" for t, ps in by_topic.items())


def describe_group(cluster, group_id: str) -> GroupDescription:
    """The group as its coordinator describes it; KafkaOperationError (GROUP_ID_NOT_FOUND...) otherwise."""
    got = gateway_for(cluster).describe_consumer_groups([group_id])[group_id]
    if isinstance(got, KafkaOperationError):
        raise got
    return got


def group_detail(*, actor, cluster, group_id: str) -> GroupDetail:
    """Members and, per partition (committed or assigned), committed offset, log end and lag.

    Raises KafkaOperationError when the group cannot be described (GROUP_ID_NOT_FOUND: no such group).
    """
    access.require(actor, cluster, access.VIEW)
    group = describe_group(cluster, group_id)
    offsets_error = None
    got = gateway_for(cluster).list_consumer_group_offsets([group_id], listings=[group])[group_id]
    if isinstance(got, KafkaOperationError):
        committed, offsets_error = {}, got
    else:
        committed = got
    owners = {tp: f"{m.client_id} ({m.host})" for m in group.members for tp in m.assignment}
    tps = sorted(set(committed) | set(owners))
    ends, ends_error = _ends_or_error(cluster, tps)
    members = [
        MemberRow(
            m.member_id,
            m.client_id,
            m.host,
            m.instance_id,
            partitions_text(m.assignment),
            len(m.assignment),
            partitions_text(m.target_assignment)
            if m.target_assignment is not None and set(m.target_assignment) != set(m.assignment)
            else "",
            ", ".join(m.subscribed_topics),
        )
        for m in group.members
    ]
    rows = [
        PartitionLag(tp.topic, tp.partition, committed.get(tp), ends.get(tp), owners.get(tp, ""))
        for tp in tps
    ]
    return GroupDetail(group, rows, members, offsets_error, ends_error)


# -- the groups consuming a topic ----------------------------------------------------------------


@dataclass(frozen=True)
class TopicConsumer:
    group_id: str
    state: str
    partitions: int  # partitions of the topic with a committed offset
    lag: int | None  # over the partitions whose log end is known
    lag_known: bool = True


def topic_consumers(*, actor, cluster, topic: str) -> list[TopicConsumer]:
    """The groups with committed offsets on the topic, with their lag on it.

    The topic's partitions and leaders from the cached snapshot when there is one, else from a
    Metadata request for this topic alone; one ListGroups per broker; one OffsetFetch per
    coordinator for all its groups (the gateway's ``topic_committed_offsets``: the topic's
    partitions, or what each group committed when that answer is smaller); ListOffsets (latest)
    per leader of the committed partitions only. Raises KafkaOperationError when the groups cannot
    be listed.
    """
    access.require(actor, cluster, access.VIEW)
    gw = gateway_for(cluster)
    meta = _topic_metadata(gw, cluster, topic)
    if meta is None:
        return []
    listings = gw.list_consumer_groups()
    if not listings:
        return []
    offsets = gw.topic_committed_offsets(topic, [p.id for p in meta.partitions], listings)
    consuming = {
        group_id: {TopicPartition(topic, p): o for p, o in got.items()}
        for group_id, got in offsets.items()
        if isinstance(got, dict) and got
    }
    ends, _ = _ends_or_error(cluster, {tp for o in consuming.values() for tp in o}, {topic: meta})
    states = {g.group_id: g.state or "" for g in listings}
    out = []
    for group_id, got in sorted(consuming.items()):
        total, complete = _lag_of(got, ends)
        out.append(TopicConsumer(group_id, states.get(group_id, ""), len(got), total, complete))
    return out


# A topic the console may not see reads as one it does not know, as in the cluster's topic list.
_NO_TOPIC = frozenset({"UNKNOWN_TOPIC_OR_PARTITION", "TOPIC_AUTHORIZATION_FAILED"})


def _topic_metadata(gw, cluster, topic: str) -> TopicMetadata | None:
    """The topic's metadata from the cached snapshot, else from a Metadata request naming only the
    topic (never a whole-cluster read for one topic); None when there is no such topic."""
    snap = metadata_cache.peek(cluster)
    if snap is not None:
        return snap.by_name.get(topic)
    meta = gw.describe_topics([topic])[topic]
    if isinstance(meta, KafkaOperationError):
        if meta.name in _NO_TOPIC:
            return None
        raise meta
    return meta
