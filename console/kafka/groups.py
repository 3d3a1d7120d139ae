"""Consumer groups: listing (ListGroups on every broker) and committed offsets (OffsetFetch v8+).

Each broker lists the groups it coordinates, so the listing also tells which broker to ask for
a group's offsets: one batched OffsetFetch per coordinator, never one request per group.
"""

from __future__ import annotations

import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .base import GatewayBase
from .errors import KafkaOperationError, from_code
from .kp import check
from .types import OK, Ok, TopicPartition

# Answers meaning "the group coordinator is not ready or moved; ask again".
COORDINATOR_RETRY = frozenset(
    {"COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR"}
)


@dataclass(frozen=True)
class ConsumerGroupListing:
    group_id: str
    coordinator: int
    state: str | None = None
    protocol_type: str = ""


class GroupsMixin(GatewayBase):
    """Consumer-group reads the console needs (lag, telemetry)."""

    def _on_every_broker(self, fn, ids: list[int]) -> dict:
        if len(ids) <= 1:
            return {b: fn(b) for b in ids}
        with ThreadPoolExecutor(max_workers=min(16, len(ids))) as pool:
            return dict(zip(ids, pool.map(fn, ids), strict=True))

    def list_consumer_groups(self) -> tuple[ConsumerGroupListing, ...]:
        """Every group of the cluster, from one ListGroups per live broker (sent together)."""
        self._require_brokers("listing consumer groups")
        from kafka.protocol.admin.groups import ListGroupsRequest

        def one(broker: int):
            try:
                response = self._kp.send(ListGroupsRequest(), broker)
                check(response)
            except KafkaOperationError as err:
                return err
            return response.groups

        out: list[ConsumerGroupListing] = []
        for broker, groups in self._on_every_broker(one, self._kp.broker_ids()).items():
            if isinstance(groups, KafkaOperationError):
                raise groups.with_message(f"{groups.message} (listing groups on broker {broker})")
            for g in groups:
                state = getattr(g, "group_state", None) or None
                out.append(ConsumerGroupListing(g.group_id, broker, state, g.protocol_type or ""))
        return tuple(sorted(out, key=lambda g: g.group_id))

    def list_consumer_group_offsets(
        self, group_ids: list[str] | None = None
    ) -> dict[str, dict[TopicPartition, int] | KafkaOperationError]:
        """Committed offsets per group (all groups when None): one OffsetFetch per coordinator."""
        from kafka.protocol.consumer.group import OffsetFetchRequest

        listings = self.list_consumer_groups()
        wanted = None if group_ids is None else set(group_ids)
        by_coordinator: dict[int, list[str]] = defaultdict(list)
        for g in listings:
            if wanted is None or g.group_id in wanted:
                by_coordinator[g.coordinator].append(g.group_id)
        out: dict[str, dict[TopicPartition, int] | KafkaOperationError] = {}
        for missing in sorted((wanted or set()) - {g.group_id for g in listings}):
            out[missing] = KafkaOperationError(
                69, "GROUP_ID_NOT_FOUND", f"consumer group '{missing}' does not exist"
            )
        group_cls = OffsetFetchRequest.OffsetFetchRequestGroup

        def one(broker: int):
            request = OffsetFetchRequest(
                groups=[group_cls(group_id=g, topics=None) for g in by_coordinator[broker]],
                require_stable=False,
                min_version=8,
                max_version=9,  # v10 names topics by id only
            )
            try:
                response = self._kp.send(request, broker)
                check(response)
            except KafkaOperationError as err:
                return err
            return response.groups

        for broker, groups in self._on_every_broker(one, sorted(by_coordinator)).items():
            if isinstance(groups, KafkaOperationError):
                out.update((g, groups) for g in by_coordinator[broker])
                continue
            for group in groups:
                err = from_code(group.error_code)
                if err is not None:
                    out[group.group_id] = err.with_message(f"{err.message} (group '{group.group_id}')")
                    continue
                offsets: dict[TopicPartition, int] = {}
                for topic in group.topics:
                    for p in topic.partitions:
                        if p.error_code == 0 and p.committed_offset >= 0:
                            offsets[TopicPartition(topic.name, p.partition_index)] = p.committed_offset
                out[group.group_id] = offsets
        return out

    def alter_consumer_group_offsets(
        self, group_id: str, offsets: dict[TopicPartition, int]
    ) -> dict[TopicPartition, Ok | KafkaOperationError]:
        """Set an inactive group's committed offsets (as kafka-consumer-groups --reset-offsets does)."""
        self._require_brokers("changing consumer group offsets")
        from kafka.protocol.consumer.group import OffsetCommitRequest
        from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest

        def find() -> int:
            found = self._kp.send(
                FindCoordinatorRequest(key_type=0, coordinator_keys=[group_id], min_version=4)
            )
            (coordinator,) = found.coordinators
            err = from_code(coordinator.error_code, coordinator.error_message)
            if err is not None:
                raise err.with_message(f"{err.message} (finding the coordinator of group '{group_id}')")
            return coordinator.node_id

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
            response = self._kp.send(request, find())
            out: dict[TopicPartition, Ok | KafkaOperationError] = {}
            for topic in response.topics:
                for p in topic.partitions:
                    tp = TopicPartition(topic.name, p.partition_index)
                    perr = from_code(p.error_code)
                    out[tp] = (
                        OK
                        if perr is None
                        else perr.with_message(f"{perr.message} ({tp.topic}-{tp.partition})")
                    )
            return out

        def refused(out: dict) -> bool:  # the coordinator turned the whole commit away
            return any(
                isinstance(v, KafkaOperationError) and v.name in COORDINATOR_RETRY for v in out.values()
            )

        return self._while_coordinator_moves(commit, refused)

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
