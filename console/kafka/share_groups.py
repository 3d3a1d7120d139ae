"""Share groups (KIP-932), as ``kafka-share-groups.sh`` reads and changes them: ListGroups v5 with
``TypesFilter=["share"]`` on every broker, ShareGroupDescribe (API 77, v1), DescribeShareGroupOffsets
(90), AlterShareGroupOffsets (91), DeleteShareGroupOffsets (92) and DeleteGroups, each at the group's
coordinator (one request per coordinator, in flight together). The schemas are ``share_wire``'s.

Functions over the gateway (its kafka-python request client and its coordinator helpers), so the
consumer-group mixin stays as it is. Kafka 4.1 advertises the APIs whatever ``share.version`` says, and
answers UNSUPPORTED_VERSION per group while the feature is 0: ``unsupported`` words that with how to
enable it. A partition whose share state is not initialised yet (no share consumer fetched it) answers
start offset -1.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import share_wire as wire
from .errors import KafkaOperationError, from_code
from .types import OK, Ok, TopicPartition

__all__ = [
    "ENABLE_HINT",
    "ShareGroupDescription",
    "ShareGroupListing",
    "ShareMember",
    "alter_offsets",
    "delete_groups",
    "delete_offsets",
    "describe",
    "list_groups",
    "offsets",
    "unsupported",
]

UNSUPPORTED_VERSION = 35
ENABLE_HINT = "kafka-features.sh --bootstrap-server <brokers> upgrade --feature share.version=1"


@dataclass(frozen=True)
class ShareGroupListing:
    group_id: str
    coordinator: int
    state: str


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None
    member_epoch: int
    subscribed: tuple[str, ...]
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    coordinator: int
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[ShareMember, ...]


def unsupported(what: str = "share groups") -> KafkaOperationError:
    return KafkaOperationError(
        UNSUPPORTED_VERSION,
        "UNSUPPORTED_VERSION",
        f"The cluster does not support {what}: the share.version feature is 0 (off by default in Kafka "
        f"4.1) or the brokers predate KIP-932. An admin enables them with `{ENABLE_HINT}`.",
    )


def _named(err: KafkaOperationError, group_id: str) -> KafkaOperationError:
    if err.code == UNSUPPORTED_VERSION:
        return unsupported()
    if err.name == "GROUP_ID_NOT_FOUND":
        return err.with_message(f"share group '{group_id}' does not exist")
    if err.name == "NON_EMPTY_GROUP":
        return err.with_message(
            f"share group '{group_id}' has active members; stop its share consumers first"
        )
    return err.with_message(f"{err.message} (share group '{group_id}')")


def list_groups(gw) -> tuple[ShareGroupListing, ...]:
    """Every share group, from one ListGroups v5 (types filter "share") per live broker."""
    gw._require_brokers("listing share groups")
    from kafka.protocol.admin.groups import ListGroupsRequest

    ids = gw._kp.broker_ids(fresh=True)
    asks = [(ListGroupsRequest(types_filter=[wire.SHARE], states_filter=[], min_version=5), b) for b in ids]
    out: list[ShareGroupListing] = []
    for broker, response in zip(ids, gw._kp.send_many(asks), strict=True):
        err = response if isinstance(response, KafkaOperationError) else from_code(response.error_code)
        if err is not None:
            raise err.with_message(f"{err.message} (listing share groups on broker {broker})")
        for g in response.groups:
            if (g.group_type or "").lower() == wire.SHARE:
                out.append(ShareGroupListing(g.group_id, broker, g.group_state or ""))
    return tuple(sorted(out, key=lambda g: g.group_id))


def _asks(gw, group_ids: list[str], listings, make, out: dict) -> list[tuple[Any, int]]:
    """(answer, coordinator) of one request per coordinator; a coordinator's failure goes to ``out``."""
    by_node = gw._by_coordinator(group_ids, listings, out)
    asks = [(make(gs), node, gs) for node, gs in sorted(by_node.items())]
    answers = gw._to_coordinators(asks, out) if asks else []
    return [(a, node) for a, (_, node, _) in zip(answers, asks, strict=True) if a is not None]


def describe(
    gw, group_ids: Iterable[str], listings: Iterable[ShareGroupListing] | None = None
) -> dict[str, ShareGroupDescription | KafkaOperationError]:
    """Each group's state, epochs and members (client id, host, assignment) at its coordinator."""
    gw._require_brokers("describing share groups")
    wanted = list(dict.fromkeys(group_ids))
    out: dict[str, ShareGroupDescription | KafkaOperationError] = {}
    for response, node in _asks(gw, wanted, listings, wire.describe_request, out):
        for d in response.groups:
            err = from_code(d.error_code, d.error_message)
            if err is not None:
                out[d.group_id] = _named(err, d.group_id)
                continue
            members = tuple(
                ShareMember(
                    m.member_id, m.client_id, m.client_host, m.rack_id, m.member_epoch,
                    tuple(m.subscribed_topic_names or ()),
                    tuple(
                        TopicPartition(t.topic_name, p)
                        for t in m.assignment.topic_partitions for p in sorted(t.partitions)
                    ),
                )
                for m in d.members
            )  # fmt: skip
            out[d.group_id] = ShareGroupDescription(
                d.group_id, node, d.group_state, d.group_epoch, d.assignment_epoch, d.assignor_name, members
            )
    return {g: out.get(g, unsupported()) for g in wanted}


def offsets(
    gw, group_ids: Iterable[str], listings: Iterable[ShareGroupListing] | None = None
) -> dict[str, dict[TopicPartition, int] | KafkaOperationError]:
    """Each group's share-partition start offsets ({partition: offset}; -1 where the share state is
    not initialised), DescribeShareGroupOffsets for all its topics."""
    gw._require_brokers("reading share group offsets")
    wanted = list(dict.fromkeys(group_ids))
    out: dict[str, dict[TopicPartition, int] | KafkaOperationError] = {}
    for response, _ in _asks(gw, wanted, listings, wire.offsets_request, out):
        for g in response.groups:
            err = from_code(g.error_code, g.error_message)
            if err is not None:
                out[g.group_id] = _named(err, g.group_id)
                continue
            got: dict[TopicPartition, int] = {}
            for t in g.topics:
                for p in t.partitions:
                    if p.error_code == 0:
                        got[TopicPartition(t.topic_name, p.partition_index)] = p.start_offset
            out[g.group_id] = got
    return {g: out.get(g, unsupported()) for g in wanted}


def alter_offsets(
    gw, group_id: str, new: dict[TopicPartition, int]
) -> dict[TopicPartition, Ok | KafkaOperationError]:
    """Set an empty share group's start offsets (kafka-share-groups --reset-offsets --execute): a
    result per partition; the group's refusal (NON_EMPTY_GROUP, ...) stands for every partition."""
    gw._require_brokers("changing share group offsets")
    new = {TopicPartition(*tp): int(o) for tp, o in new.items()}
    by_topic: dict[str, dict[int, int]] = defaultdict(dict)
    for tp, o in new.items():
        by_topic[tp.topic][tp.partition] = o
    request = wire.alter_request(group_id, by_topic)

    def once() -> dict[TopicPartition, Ok | KafkaOperationError]:
        response = gw._kp.send(request, gw._coordinator_of(group_id))
        top = from_code(response.error_code, response.error_message)
        if top is not None:
            return dict.fromkeys(new, _named(top, group_id))
        result: dict[TopicPartition, Ok | KafkaOperationError] = {}
        for t in response.responses:
            for p in t.partitions:
                tp = TopicPartition(t.topic_name, p.partition_index)
                err = from_code(p.error_code, p.error_message)
                result[tp] = (
                    OK if err is None else err.with_message(f"{err.message} ({tp.topic}-{tp.partition})")
                )
        return {tp: result.get(tp, OK) for tp in new}

    return gw._while_coordinator_moves(once, _refused)


def delete_offsets(gw, group_id: str, topics: Iterable[str]) -> dict[str, Ok | KafkaOperationError]:
    """Delete an empty share group's offsets of whole topics (DeleteShareGroupOffsets): per topic."""
    gw._require_brokers("deleting share group offsets")
    wanted = list(dict.fromkeys(topics))
    request = wire.delete_offsets_request(group_id, wanted)

    def once() -> dict[str, Ok | KafkaOperationError]:
        response = gw._kp.send(request, gw._coordinator_of(group_id))
        top = from_code(response.error_code, response.error_message)
        if top is not None:
            return dict.fromkeys(wanted, _named(top, group_id))
        result: dict[str, Ok | KafkaOperationError] = {}
        for t in response.responses:
            err = from_code(t.error_code, t.error_message)
            result[t.topic_name] = OK if err is None else err.with_message(f"{err.message} ({t.topic_name})")
        return {t: result.get(t, OK) for t in wanted}

    return gw._while_coordinator_moves(once, _refused)


def delete_groups(gw, group_ids: Iterable[str]) -> dict[str, Ok | KafkaOperationError]:
    """DeleteGroups at each coordinator: NON_EMPTY_GROUP while a share group has members."""
    gw._require_brokers("deleting share groups")
    from kafka.protocol.admin.groups import DeleteGroupsRequest

    def attempt(groups: list[str]) -> dict[str, Ok | KafkaOperationError]:
        out: dict[str, Ok | KafkaOperationError] = {}
        for response, _ in _asks(gw, groups, None, lambda gs: DeleteGroupsRequest(groups_names=gs), out):
            for r in response.results:
                err = from_code(r.error_code)
                out[r.group_id] = OK if err is None else _named(err, r.group_id)
        return out

    return gw._per_group_until_ready(list(dict.fromkeys(group_ids)), attempt)


def _refused(out: dict) -> bool:
    retry = {"COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR"}
    return any(isinstance(v, KafkaOperationError) and v.name in retry for v in out.values())
