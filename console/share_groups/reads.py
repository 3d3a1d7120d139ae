"""What the pages, API and CLI list and show of share groups (KIP-932), authorised (``cluster.view``):
whether the cluster supports them (``share.version`` >= 1), the list (state, members, topics, total
lag; search and paging), a group (members with client id, host and assignment; per partition the
share-partition start offset, log end and lag), and a reset's plan (the dry run).

A read is a handful of batched requests: ApiVersions' features, ListGroups per broker,
ShareGroupDescribe and DescribeShareGroupOffsets per coordinator, ListOffsets per partition leader.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from console import access
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, TopicPartition
from console.kafka import share_groups as kafka_share
from console.models import Cluster
from console.share_groups import core

DEFAULT_PER_PAGE = 50
MAX_PER_PAGE = 500
ENABLE_HINT = kafka_share.ENABLE_HINT


class ShareInvalid(ChangeInvalid):
    """A share-group read or change refused as asked (bad input, members present, no support, the
    typed confirmation); nothing was sent to Kafka."""


def checked(make, *args, **kwargs):
    try:
        return make(*args, **kwargs)
    except core.ShareInputError as exc:
        raise ShareInvalid(exc.errors) from None


def target(group_id: str) -> str:
    return f"share-group:{group_id}"


@dataclass(frozen=True)
class Support:
    """Whether the cluster serves share groups, and if not why and how to enable them."""

    supported: bool
    level: int | None  # the finalized share.version (None: the brokers do not know the feature)
    reason: str = ""

    def as_json(self) -> dict:
        return {
            "supported": self.supported,
            "share_version": self.level,
            "reason": self.reason,
            "enable": ENABLE_HINT,
        }


def support(cluster: Cluster) -> Support:
    features = gateway_for(cluster).describe_features()
    info = features.get("share.version")
    if info is None or info.supported_max is None:
        return Support(
            False, None, "The brokers do not know the share.version feature (KIP-932 needs Kafka 4.0+)."
        )
    level = info.finalized_max or 0
    if level < 1:
        return Support(
            False, level,
            f"The share.version feature is {level} (Kafka 4.1 leaves it off). An admin enables share groups "
            f"with `{ENABLE_HINT}`.",
        )  # fmt: skip
    return Support(True, level)


def require_support(cluster: Cluster) -> None:
    s = support(cluster)
    if not s.supported:
        raise ShareInvalid([f"This cluster does not support share groups: {s.reason}"])


@dataclass(frozen=True)
class PartitionRow:
    topic: str
    partition: int
    start_offset: int | None  # None: no share state yet
    log_end: int | None
    lag: int | None
    members: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {
            "topic": self.topic, "partition": self.partition, "start_offset": self.start_offset,
            "log_end_offset": self.log_end, "lag": self.lag, "members": list(self.members),
        }  # fmt: skip


@dataclass(frozen=True)
class GroupRow:
    group_id: str
    coordinator: int
    state: str
    members: int | None
    topics: tuple[str, ...]
    lag: int | None
    error: str = ""

    def as_json(self) -> dict:
        return {
            "group_id": self.group_id, "coordinator": self.coordinator, "state": self.state,
            "members": self.members, "topics": list(self.topics), "lag": self.lag, "error": self.error or None,
        }  # fmt: skip


@dataclass(frozen=True)
class SharePage:
    support: Support
    rows: list[GroupRow] = field(default_factory=list)
    total: int = 0
    page: int = 1
    pages: int = 1
    per_page: int = DEFAULT_PER_PAGE
    lag_error: str = ""

    @property
    def count(self) -> int:
        return self.total


def _ends(gw, tps: Iterable[TopicPartition]) -> tuple[dict[TopicPartition, int], str]:
    wanted = list(tps)
    if not wanted:
        return {}, ""
    try:
        got = gw.list_offsets(wanted, "latest")
    except KafkaOperationError as exc:
        return {}, f"{exc.name}: {exc.operator_text}"
    return {tp: v.offset for tp, v in got.items() if not isinstance(v, KafkaOperationError)}, ""


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def list_page(
    *,
    actor,
    cluster: Cluster,
    query: str = "",
    state: str = "",
    page: int = 1,
    per_page: int = DEFAULT_PER_PAGE,
) -> SharePage:
    """One page of the cluster's share groups (search: a substring of the id; state: Empty/Stable)."""
    access.require(actor, cluster, access.VIEW)
    s = support(cluster)
    if not s.supported:
        return SharePage(s)
    gw = gateway_for(cluster)
    listings = kafka_share.list_groups(gw)
    wanted = state.strip().lower()
    chosen = [
        g for g in listings if core.matches(g.group_id, query) and (not wanted or g.state.lower() == wanted)
    ]
    per_page = max(1, min(MAX_PER_PAGE, per_page))
    shown, page, pages = core.page_of(chosen, page, per_page)
    ids = [g.group_id for g in shown]
    described = kafka_share.describe(gw, ids, shown) if ids else {}
    starts = kafka_share.offsets(gw, ids, shown) if ids else {}
    ends, lag_error = _ends(gw, {tp for o in starts.values() if isinstance(o, dict) for tp in o})
    rows = []
    for g in shown:
        d, o = described.get(g.group_id), starts.get(g.group_id)
        error = next(
            (f"{e.name}: {e.operator_text}" for e in (d, o) if isinstance(e, KafkaOperationError)), ""
        )
        members = None if isinstance(d, KafkaOperationError) or d is None else len(d.members)
        offsets = o if isinstance(o, dict) else {}
        topics = tuple(
            sorted(
                {tp.topic for tp in offsets}
                | ({tp.topic for m in d.members for tp in m.assignment} if members else set())
            )
        )
        total = _sum(core.lag(v, ends.get(tp)) for tp, v in offsets.items())
        rows.append(
            GroupRow(
                g.group_id,
                g.coordinator,
                (d.state if members is not None else g.state),
                members,
                topics,
                total,
                error,
            )
        )
    return SharePage(s, rows, len(chosen), page, pages, per_page, lag_error)


@dataclass(frozen=True)
class GroupDetail:
    group_id: str
    coordinator: int
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple  # kafka ShareMember
    partitions: tuple[PartitionRow, ...]
    lag: int | None
    lag_error: str = ""

    @property
    def member_names(self) -> list[tuple[str, str, str]]:
        return [(m.member_id, m.client_id, m.client_host) for m in self.members]

    def as_json(self) -> dict:
        return {
            "group_id": self.group_id, "coordinator": self.coordinator, "state": self.state,
            "group_epoch": self.group_epoch, "assignment_epoch": self.assignment_epoch, "assignor": self.assignor,
            "lag": self.lag,
            "members": [
                {"member_id": m.member_id, "client_id": m.client_id, "host": m.client_host, "rack": m.rack_id,
                 "member_epoch": m.member_epoch, "subscribed_topics": list(m.subscribed),
                 "assignment": [f"{tp.topic}-{tp.partition}" for tp in m.assignment]}
                for m in self.members
            ],
            "partitions": [p.as_json() for p in self.partitions],
        }  # fmt: skip


def raw_detail(cluster: Cluster, group_id: str) -> GroupDetail | None:
    """The group as Kafka describes it now (None: no such share group); KafkaOperationError otherwise."""
    gw = gateway_for(cluster)
    d = kafka_share.describe(gw, [group_id])[group_id]
    if isinstance(d, KafkaOperationError):
        if d.name == "GROUP_ID_NOT_FOUND":
            return None
        raise d
    o = kafka_share.offsets(gw, [group_id])[group_id]
    if isinstance(o, KafkaOperationError):
        raise o
    owners: dict[TopicPartition, list[str]] = {}
    for m in d.members:
        for tp in m.assignment:
            owners.setdefault(tp, []).append(m.member_id)
    tps = sorted(set(o) | set(owners))
    ends, lag_error = _ends(gw, tps)
    rows = tuple(
        PartitionRow(
            tp.topic, tp.partition, o[tp] if o.get(tp, -1) >= 0 else None, ends.get(tp),
            core.lag(o.get(tp), ends.get(tp)), tuple(owners.get(tp, ())),
        )
        for tp in tps
    )  # fmt: skip
    return GroupDetail(
        d.group_id, d.coordinator, d.state, d.group_epoch, d.assignment_epoch, d.assignor, d.members, rows,
        _sum(r.lag for r in rows), lag_error,
    )  # fmt: skip


def detail(*, actor, cluster: Cluster, group_id: str) -> GroupDetail | None:
    """A share group's members and per-partition start offset, log end and lag (None: no such group)."""
    access.require(actor, cluster, access.VIEW)
    group_id = checked(core.check_group_id, group_id)
    require_support(cluster)
    return raw_detail(cluster, group_id)


def plan(cluster: Cluster, group: GroupDetail, spec: core.ResetSpec) -> tuple[core.ResetRow, ...]:
    """The reset's rows from Kafka's answers now (bounds, and offsets by time for to-datetime)."""
    gw = gateway_for(cluster)
    with_state = [(p.topic, p.partition) for p in group.partitions if p.start_offset is not None]
    count = None
    if spec.topic:
        found = gw.describe_topics([spec.topic]).get(spec.topic)
        count = None if found is None or isinstance(found, KafkaOperationError) else len(found.partitions)
    tps = checked(core.select_partitions, spec, with_state, count)
    bounds: dict[tuple[str, int], tuple[int, int] | None] = {}
    for topic in sorted({t for t, _ in tps}):
        got = gw.partition_bounds(topic)
        for p, b in got.items():
            bounds[(topic, p)] = None if isinstance(b, KafkaOperationError) else b
    by_time = None
    if spec.mode == "to-datetime":
        by_time = {}
        for topic in sorted({t for t, _ in tps}):
            found = gw.offsets_for_time(topic, [p for t, p in tps if t == topic], int(spec.value or 0))
            by_time.update(
                {(topic, p): (None if isinstance(v, KafkaOperationError) else v) for p, v in found.items()}
            )
    current = {(p.topic, p.partition): p.start_offset for p in group.partitions if p.start_offset is not None}
    return checked(core.plan_reset, spec, tps, current, bounds, by_time)
