"""Consumer groups: list (ListGroups v5: type and state), describe (DescribeGroups for classic
groups, ConsumerGroupDescribe for KIP-848 groups), committed offsets (OffsetFetch v8+), set them
(OffsetCommit), delete groups (DeleteGroups) and a group's offsets (OffsetDelete).

Batched: each broker lists the groups it coordinates, so a listing also says which broker to ask
about a group; without one, one batched FindCoordinator (v4) says it. Then one request per
coordinator, all in flight together (``send_many``), never one request per group.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from . import group_wire as wire
from .base import GatewayBase, group_by_topic
from .errors import KafkaOperationError, from_code
from .kp import check
from .types import OK, GroupDescription, Ok, TopicPartition

# Answers meaning "the group coordinator is not ready or moved; ask again".
COORDINATOR_RETRY = frozenset(
    {"COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR"}
)
# The most entries (groups x partitions) an OffsetFetch naming one topic's partitions may cost
# before each group is asked for what it committed instead (``topic_committed_offsets``).
TOPIC_OFFSETS_BUDGET = 20_000
_GROUP_TYPES = frozenset(
    {"", wire.CLASSIC, wire.CONSUMER}
)  # share and streams groups are not consumer groups


@dataclass(frozen=True)
class ConsumerGroupListing:
    group_id: str
    coordinator: int
    state: str | None = None
    protocol_type: str = ""
    #: "classic" or "consumer" (KIP-848) from ListGroups v5; "" when the broker does not say
    group_type: str = ""


class GroupsMixin(GatewayBase):
    """Consumer groups: what the group pages, the resets and the telemetry need."""

    def list_consumer_groups(self) -> tuple[ConsumerGroupListing, ...]:
        """Every consumer group (classic and KIP-848) from one ListGroups per live broker, in flight
        together; share and streams groups and other protocols (Connect) are left out."""
        self._require_brokers("listing consumer groups")
        from kafka.protocol.admin.groups import ListGroupsRequest

        ids = self._kp.broker_ids(fresh=True)
        out: list[ConsumerGroupListing] = []
        for broker, response in zip(
            ids, self._kp.send_many([(ListGroupsRequest(), b) for b in ids]), strict=True
        ):
            err = response if isinstance(response, KafkaOperationError) else from_code(response.error_code)
            if err is not None:
                raise err.with_message(f"{err.message} (listing groups on broker {broker})")
            for g in response.groups:
                kind = (getattr(g, "group_type", None) or "").lower()
                if kind in _GROUP_TYPES and (g.protocol_type or "") in wire.PROTOCOL_TYPES:
                    state = getattr(g, "group_state", None) or None
                    out.append(ConsumerGroupListing(g.group_id, broker, state, g.protocol_type or "", kind))
        return tuple(sorted(out, key=lambda g: g.group_id))

    # -- coordinators ----------------------------------------------------------------------------

    def _find_coordinators(self, group_ids: list[str]) -> dict[str, int | KafkaOperationError]:
        """One batched FindCoordinator (v4) for the groups."""
        from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest

        found = self._kp.send(
            FindCoordinatorRequest(key_type=0, coordinator_keys=list(group_ids), min_version=4)
        )
        out: dict[str, int | KafkaOperationError] = {}
        for c in found.coordinators:
            err = from_code(c.error_code, c.error_message)
            out[c.key] = (
                c.node_id
                if err is None
                else err.with_message(f"{err.message} (finding the coordinator of group '{c.key}')")
            )
        return out

    def _coordinators(
        self, group_ids: list[str], listings: Iterable | None
    ) -> dict[str, int | KafkaOperationError]:
        """Each group's coordinator: from ``listings`` (anything with group_id and coordinator: a
        listing or a description) where they name it, else from FindCoordinator."""
        known = {g.group_id: g.coordinator for g in listings or ()}
        out: dict[str, int | KafkaOperationError] = {g: known[g] for g in group_ids if g in known}
        missing = [g for g in group_ids if g not in known]
        if missing:
            out.update(self._find_coordinators(missing))
        return out

    def _coordinator_of(self, group_id: str) -> int:
        got = self._find_coordinators([group_id]).get(group_id)
        if isinstance(got, KafkaOperationError):
            raise got
        if got is None:
            raise KafkaOperationError(
                15, "COORDINATOR_NOT_AVAILABLE", f"no coordinator for group '{group_id}'"
            )
        return got

    def _by_coordinator(
        self, group_ids: list[str], listings: Iterable | None, out: dict
    ) -> dict[int, list[str]]:
        """Groups per coordinator; a group whose coordinator cannot be found gets its error in ``out``."""
        by_node: dict[int, list[str]] = defaultdict(list)
        for g, node in self._coordinators(group_ids, listings).items():
            if isinstance(node, KafkaOperationError):
                out[g] = node
            else:
                by_node[node].append(g)
        return by_node

    def _to_coordinators(self, asks: list[tuple[Any, int, list[str]]], out: dict) -> list[Any | None]:
        """Each (request, coordinator, its groups) sent, all in flight together: the answers in the
        order asked, None where the coordinator failed (its error then stands for each of its groups
        in ``out``)."""
        self._kp.broker_ids(expect=[node for _, node, _ in asks])
        responses = self._kp.send_many([(request, node) for request, node, _ in asks])
        answers: list[Any | None] = []
        for (_, _, groups), response in zip(asks, responses, strict=True):
            failed = isinstance(response, KafkaOperationError)
            if failed:
                out.update((g, response) for g in groups)
            answers.append(None if failed else response)
        return answers

    def _per_group_until_ready(self, group_ids: list[str], attempt: Callable[[list[str]], dict]) -> dict:
        """``attempt(groups)`` -> {group: result}; the groups whose coordinator was not ready (or
        moved) are asked again, as Kafka's admin client does, until the request timeout."""
        deadline = time.monotonic() + self._timeout
        delay, pending, out = 0.05, list(group_ids), {}
        while pending:
            results = attempt(pending)
            out.update(results)
            pending = [
                g
                for g, r in results.items()
                if isinstance(r, KafkaOperationError) and r.name in COORDINATOR_RETRY
            ]
            if not pending or time.monotonic() + delay > deadline:
                break
            time.sleep(delay)
            delay = min(2 * delay, 1.0)
        return out

    # -- describe --------------------------------------------------------------------------------

    def describe_consumer_groups(
        self, group_ids: Iterable[str], listings: Iterable[ConsumerGroupListing] | None = None
    ) -> dict[str, GroupDescription | KafkaOperationError]:
        """Members (with their partitions) and state of each group: DescribeGroups for classic groups
        and ConsumerGroupDescribe for KIP-848 groups, one request per coordinator, in flight together.
        A group of unknown type (no listing, or a broker before ListGroups v5) is asked as a classic
        group first and, when that says it does not exist, as a KIP-848 group."""
        self._require_brokers("describing consumer groups")
        listings = list(listings or ())
        types = {g.group_id: getattr(g, "group_type", "") for g in listings}
        wanted = list(dict.fromkeys(group_ids))
        out: dict[str, GroupDescription | KafkaOperationError] = {}
        by_node = self._by_coordinator(wanted, listings, out)
        classic: dict[int, list[str]] = defaultdict(list)
        consumer: dict[int, list[str]] = defaultdict(list)
        for node, groups in by_node.items():
            for g in groups:
                (consumer if types.get(g) == wire.CONSUMER else classic)[node].append(g)
        out.update(self._describe(classic, consumer))
        retry: dict[int, list[str]] = defaultdict(list)
        for node, groups in classic.items():
            for g in groups:
                if (
                    not types.get(g)
                    and isinstance(out[g], KafkaOperationError)
                    and out[g].name == "GROUP_ID_NOT_FOUND"
                ):
                    retry[node].append(g)
        if retry:
            found = self._describe({}, retry)
            out.update((g, d) for g, d in found.items() if not isinstance(d, KafkaOperationError))
        return out

    def _describe(self, classic: dict[int, list[str]], consumer: dict[int, list[str]]) -> dict:
        from kafka.protocol.admin.groups import DescribeGroupsRequest

        asks = [
            (DescribeGroupsRequest(groups=gs, include_authorized_operations=False), n, gs, wire.classic)
            for n, gs in sorted(classic.items())
        ] + [(wire.cgd_request(gs), n, gs, wire.consumer) for n, gs in sorted(consumer.items())]
        if not asks:
            return {}
        out: dict[str, GroupDescription | KafkaOperationError] = {}
        answers = self._to_coordinators([(request, node, gs) for request, node, gs, _ in asks], out)
        for (_, node, _, convert), response in zip(asks, answers, strict=True):
            for d in response.groups if response is not None else ():
                out[d.group_id] = convert(d, node)
        return out

    # -- offsets ---------------------------------------------------------------------------------

    def list_consumer_group_offsets(
        self,
        group_ids: list[str] | None = None,
        listings: Iterable | None = None,
        topics: dict[str, list[int]] | None = None,
    ) -> dict[str, dict[TopicPartition, int] | KafkaOperationError]:
        """Committed offsets per group, one OffsetFetch per coordinator, in flight together.

        ``listings`` (ListGroups' listings or descriptions) say where the groups are; without them
        every group is listed first, and a group the listing lacks is GROUP_ID_NOT_FOUND. All
        listed groups when ``group_ids`` is None. ``topics`` ({topic: partitions}) limits the
        answer to those partitions.
        """
        self._require_brokers("reading consumer group offsets")
        listings = list(self.list_consumer_groups() if listings is None else listings)
        listed = {g.group_id: g.coordinator for g in listings}
        wanted = list(listed) if group_ids is None else list(dict.fromkeys(group_ids))
        out: dict[str, dict[TopicPartition, int] | KafkaOperationError] = {
            g: wire.not_found(g) for g in wanted if g not in listed
        }
        coordinators = {g: listed[g] for g in wanted if g in listed}
        for group_id, answered in self._offset_fetch(coordinators, topics, out):
            offsets: dict[TopicPartition, int] = {}
            for topic in answered:
                for p in topic.partitions:
                    if p.error_code == 0 and p.committed_offset >= 0:
                        offsets[TopicPartition(topic.name, p.partition_index)] = p.committed_offset
            out[group_id] = offsets
        return out

    def topic_committed_offsets(
        self, topic: str, partitions: Iterable[int], listings: Iterable
    ) -> dict[str, dict[int, int] | KafkaOperationError]:
        """Each listed group's committed offsets on one topic's ``partitions`` ({partition: offset},
        {} for a group with none there): one OffsetFetch per coordinator for all its groups.

        Kafka answers an OffsetFetch naming partitions with one entry per group and partition named,
        committed or not (10,000 groups x a 1,000-partition topic: 10M entries, a minute to encode
        and decode), and one naming no topic with what each group committed. The first while it
        stays within TOPIC_OFFSETS_BUDGET entries, the second beyond (this topic's entries kept).
        """
        self._require_brokers("reading consumer group offsets")
        wanted = set(partitions)
        coordinators = {g.group_id: g.coordinator for g in listings}
        named = len(coordinators) * len(wanted) <= TOPIC_OFFSETS_BUDGET
        out: dict[str, dict[int, int] | KafkaOperationError] = {}
        for group_id, answered in self._offset_fetch(
            coordinators, {topic: sorted(wanted)} if named else None, out
        ):
            out[group_id] = {
                p.partition_index: p.committed_offset
                for t in answered
                if t.name == topic
                for p in t.partitions
                if p.error_code == 0 and p.committed_offset >= 0 and p.partition_index in wanted
            }
        return out

    def _offset_fetch(
        self, coordinators: dict[str, int], topics: dict[str, list[int]] | None, out: dict
    ) -> Iterator[tuple[str, Any]]:
        """One OffsetFetch (v8+, KIP-709) per coordinator carrying all its groups, in flight together:
        (group, its answer's topics) per group answered; a group's error, or its coordinator's,
        goes to ``out``. ``topics`` None asks each group for everything it committed."""
        from kafka.protocol.consumer.group import OffsetFetchRequest

        by_node: dict[int, list[str]] = defaultdict(list)
        for g, node in coordinators.items():
            by_node[node].append(g)
        group_cls = OffsetFetchRequest.OffsetFetchRequestGroup
        topic_cls = group_cls.OffsetFetchRequestTopics
        asked = (
            None
            if topics is None
            else [topic_cls(name=t, partition_indexes=list(ps)) for t, ps in topics.items()]
        )
        asks = [
            (
                OffsetFetchRequest(
                    groups=[group_cls(group_id=g, topics=asked) for g in groups],
                    require_stable=False,
                    min_version=8,
                    max_version=9,  # v10 names topics by id only
                ),
                node,
                groups,
            )
            for node, groups in sorted(by_node.items())
        ]
        for response in self._to_coordinators(asks, out):
            for group in response.groups if response is not None else ():
                err = from_code(group.error_code)
                if err is not None:
                    out[group.group_id] = wire.named(err, group.group_id)
                else:
                    yield group.group_id, group.topics

    def alter_consumer_group_offsets(
        self, group_id: str, offsets: dict[TopicPartition, int]
    ) -> dict[TopicPartition, Ok | KafkaOperationError]:
        """Set an inactive group's committed offsets (as kafka-consumer-groups --reset-offsets does)."""
        self._require_brokers("changing consumer group offsets")
        from kafka.protocol.consumer.group import OffsetCommitRequest

        topic_cls = OffsetCommitRequest.OffsetCommitRequestTopic
        part_cls = topic_cls.OffsetCommitRequestPartition
        by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for tp, offset in offsets.items():
            by_topic[tp.topic].append((tp.partition, offset))
        request = OffsetCommitRequest(
            group_id=group_id,
            generation_id_or_member_epoch=-1,  # no generation: only an empty group accepts this
            member_id="",
            group_instance_id=None,
            topics=[
                topic_cls(
                    name=t,
                    partitions=[
                        part_cls(partition_index=p, committed_offset=o, committed_metadata="")
                        for p, o in parts
                    ],
                )
                for t, parts in by_topic.items()
            ],
            max_version=9,  # v10 names topics by id only
        )

        def commit() -> dict[TopicPartition, Ok | KafkaOperationError]:
            response = self._kp.send(request, self._coordinator_of(group_id))
            return _per_partition(response, group_id)

        return self._while_coordinator_moves(commit, _refused)

    # -- delete ----------------------------------------------------------------------------------

    def delete_consumer_groups(self, group_ids: Iterable[str]) -> dict[str, Ok | KafkaOperationError]:
        """Delete groups (DeleteGroups per coordinator, in flight together); each has its own result:
        NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND when there is no such group."""
        self._require_brokers("deleting consumer groups")
        from kafka.protocol.admin.groups import DeleteGroupsRequest

        def attempt(groups: list[str]) -> dict[str, Ok | KafkaOperationError]:
            out: dict[str, Ok | KafkaOperationError] = {}
            by_node = self._by_coordinator(groups, None, out)
            asks = [(DeleteGroupsRequest(groups_names=gs), n, gs) for n, gs in sorted(by_node.items())]
            for response in self._to_coordinators(asks, out):
                for r in response.results if response is not None else ():
                    err = from_code(r.error_code)
                    out[r.group_id] = OK if err is None else wire.named(err, r.group_id)
            return out

        return self._per_group_until_ready(list(dict.fromkeys(group_ids)), attempt)

    def delete_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, Ok | KafkaOperationError]:
        """Delete a group's committed offsets of these partitions (OffsetDelete): per partition,
        GROUP_SUBSCRIBED_TO_TOPIC while a member of the group still consumes the topic."""
        self._require_brokers("deleting consumer group offsets")
        from kafka.protocol.consumer.group import OffsetDeleteRequest

        wanted = list(dict.fromkeys(TopicPartition(*tp) for tp in partitions))
        topic_cls = OffsetDeleteRequest.OffsetDeleteRequestTopic
        part_cls = topic_cls.OffsetDeleteRequestPartition
        request = OffsetDeleteRequest(
            group_id=group_id,
            topics=[
                topic_cls(name=t, partitions=[part_cls(partition_index=p) for p in ps])
                for t, ps in group_by_topic(wanted).items()
            ],
        )

        def once() -> dict[TopicPartition, Ok | KafkaOperationError]:
            response = self._kp.send(request, self._coordinator_of(group_id))
            try:
                check(response)
            except KafkaOperationError as err:
                return dict.fromkeys(wanted, wire.named(err, group_id))
            return _per_partition(response, group_id)

        return self._while_coordinator_moves(once, _refused)

    def _while_coordinator_moves(self, fn, refused):
        """``fn()`` again while the group coordinator is not ready, as Kafka's admin client does: on a
        new cluster the offsets topic is created by the first FindCoordinator and its partitions
        load for a moment; a coordinator that moved is found again. Up to the request timeout;
        then the last answer (or error) stands."""
        deadline = time.monotonic() + self._timeout
        delay = 0.05
        while True:
            try:
                result = fn()
            except KafkaOperationError as err:
                if err.name not in COORDINATOR_RETRY or time.monotonic() + delay > deadline:
                    raise
            else:
                if not refused(result) or time.monotonic() + delay > deadline:
                    return result
            time.sleep(delay)
            delay = min(2 * delay, 1.0)


def _per_partition(response: Any, group_id: str) -> dict[TopicPartition, Ok | KafkaOperationError]:
    """OffsetCommit's and OffsetDelete's answers: one result per partition."""
    out: dict[TopicPartition, Ok | KafkaOperationError] = {}
    for topic in response.topics:
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            err = from_code(p.error_code)
            out[tp] = OK if err is None else err.with_message(f"{err.message} ({tp.topic}-{tp.partition})")
    return out


def _refused(out: dict) -> bool:
    """The coordinator turned the whole request away (not ready, or moved)."""
    return any(isinstance(v, KafkaOperationError) and v.name in COORDINATOR_RETRY for v in out.values())
