"""Topic mutations and offsets: create, delete, add partitions, list offsets."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka.protocol.consumer.offsets import ListOffsetsRequest

from . import kp_admin
from .base import GatewayBase
from .clientconf import confluent_usable
from .errors import KafkaOperationError, from_code
from .types import OK, NewPartitions, NewTopic, Ok, PartitionOffsets, TopicPartition

#: ``list_offsets`` specs besides an integer timestamp (ms).
OFFSET_SPECS = {"earliest": -2, "latest": -1, "max_timestamp": -3}
ISOLATION_LEVELS = {"READ_UNCOMMITTED": 0, "READ_COMMITTED": 1}
CREATE_TOPICS_MAX_VERSION = 4  # v2-v4 are what Kafka 4 still serves without the configs answer
_TOPIC = ListOffsetsRequest.ListOffsetsTopic
_PARTITION = _TOPIC.ListOffsetsPartition


class TopicsMixin(GatewayBase):
    """CreateTopics, DeleteTopics, CreatePartitions, ListOffsets."""

    def create_topics(
        self, specs: list[NewTopic], validate_only: bool = False
    ) -> dict[str, Ok | KafkaOperationError]:
        """Create topics in one batched request; per-topic result (``validate_only`` = dry run).

        Sent as one CreateTopics request over kafka-python's protocol classes so that every
        spec reaches Kafka and gets Kafka's own per-topic verdict (librdkafka rejects some
        specs locally and fails the whole batch).
        """
        self._require_brokers("creating topics")
        from kafka.protocol.admin import CreateTopicsRequest

        if not specs:
            return {}
        T = CreateTopicsRequest.CreatableTopic
        out: dict[str, Ok | KafkaOperationError] = {}
        todo = []
        listed: set[str] = set()
        for s in specs:
            if s.name in out or s.name in listed:
                out[s.name] = KafkaOperationError(42, "INVALID_REQUEST", f"topic '{s.name}' is listed twice")
                continue
            configs = [
                T.CreatableTopicConfig(name=str(k), value=None if v is None else str(v))
                for k, v in (s.configs or {}).items()
            ]
            if s.replica_assignment is not None:
                assignments = [
                    T.CreatableReplicaAssignment(partition_index=i, broker_ids=list(r))
                    for i, r in enumerate(s.replica_assignment)
                ]
                todo.append(
                    T(
                        name=s.name,
                        num_partitions=-1,
                        replication_factor=-1,
                        assignments=assignments,
                        configs=configs,
                    )
                )
            else:
                todo.append(
                    T(
                        name=s.name,
                        num_partitions=s.partitions,
                        replication_factor=s.replication_factor,
                        assignments=[],
                        configs=configs,
                    )
                )
            listed.add(s.name)
        if todo:
            # At most v4: from v5 Kafka answers every created topic's whole config (~40 entries per
            # topic), which nothing here reads; at 1,000 topics decoding it cost a third of the call.
            request = CreateTopicsRequest(
                topics=todo,
                timeout_ms=int(self._timeout * 1000),
                validate_only=validate_only,
                max_version=CREATE_TOPICS_MAX_VERSION,
            )
            try:
                response = self._kp.send(request)
            except KafkaOperationError as err:
                out.update(dict.fromkeys((t.name for t in todo), err))
            else:
                for r in response.topics:
                    out.setdefault(r.name, from_code(r.error_code, r.error_message) or OK)
                for t in todo:
                    out.setdefault(
                        t.name, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer for this topic")
                    )
        return {s.name: out[s.name] for s in specs}

    def delete_topics(self, names: list[str]) -> dict[str, Ok | KafkaOperationError]:
        """Delete topics; per-topic result."""
        self._require_brokers("deleting topics")
        if not names:
            return {}
        self._reachable()
        names = list(dict.fromkeys(names))
        if not confluent_usable(self.conn):  # GSSAPI: librdkafka's PyPI build cannot speak it
            return kp_admin.delete_topics(self._kp, names, self._timeout)
        futures = self._call(
            self._admin.delete_topics,
            names,
            operation_timeout=self._timeout,
            what="delete topics",
            **self._admin_kwargs(),
        )
        return self._wait_all(futures, lambda k, v: OK, "delete topic")

    def create_partitions(
        self, specs: list[NewPartitions], validate_only: bool = False
    ) -> dict[str, Ok | KafkaOperationError]:
        """Grow topics to a new total partition count (optionally placing the new partitions)."""
        self._require_brokers("adding partitions")
        from kafka.protocol.admin import CreatePartitionsRequest

        if not specs:
            return {}
        T = CreatePartitionsRequest.CreatePartitionsTopic
        todo = []
        for s in specs:
            assignment = (
                None
                if s.assignment is None
                else [T.CreatePartitionsAssignment(broker_ids=list(r)) for r in s.assignment]
            )
            todo.append(T(name=s.topic, count=s.total_count, assignments=assignment))
        request = CreatePartitionsRequest(
            topics=todo, timeout_ms=int(self._timeout * 1000), validate_only=validate_only
        )
        try:
            response = self._kp.send(request)
        except KafkaOperationError as err:
            return {s.topic: err for s in specs}
        out: dict[str, Ok | KafkaOperationError] = {}
        for r in response.results:
            out.setdefault(r.name, from_code(r.error_code, r.error_message) or OK)
        return {
            s.topic: out.get(s.topic, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer"))
            for s in specs
        }

    def list_offsets(
        self,
        partitions: list[TopicPartition],
        spec: str | int = "latest",
        isolation: str = "READ_UNCOMMITTED",
        leaders: dict[TopicPartition, int] | None = None,
    ) -> dict[TopicPartition, PartitionOffsets | KafkaOperationError]:
        """Offsets for each partition by ``spec``: earliest, latest, max_timestamp or a timestamp (ms).

        One ListOffsets per partition leader, all in flight together. ``leaders`` (e.g. from a
        metadata snapshot the caller already holds) saves the Metadata request that finds them.
        """
        self._require_brokers("listing offsets")
        timestamp = offset_timestamp(spec, isolation)
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            return {}
        out: dict[TopicPartition, PartitionOffsets | KafkaOperationError] = {}
        by_leader: dict[int, dict[str, list[int]]] = defaultdict(dict)
        known = leaders if leaders is not None else self._leaders({tp.topic for tp in wanted})
        for tp in wanted:
            leader = known.get(tp) if not isinstance(known.get(tp), KafkaOperationError) else None
            if leader is None or leader < 0:
                err = known.get(tp)
                out[tp] = (
                    err
                    if isinstance(err, KafkaOperationError)
                    else KafkaOperationError(
                        3 if leader is None else 5,
                        "UNKNOWN_TOPIC_OR_PARTITION" if leader is None else "LEADER_NOT_AVAILABLE",
                        f"{tp.topic}-{tp.partition} "
                        + ("does not exist" if leader is None else "has no leader"),
                    )
                )
                continue
            by_leader[leader].setdefault(tp.topic, []).append(tp.partition)
        for (broker, _), response in self._send_list_offsets(by_leader, [timestamp], isolation).items():
            if isinstance(response, KafkaOperationError):
                out.update(
                    (TopicPartition(t, p), response) for t, ps in by_leader[broker].items() for p in ps
                )
                continue
            for t in response.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    err = from_code(p.error_code)
                    if err is not None:
                        out[tp] = err.with_message(f"{err.message} ({tp.topic}-{tp.partition})")
                        continue
                    epoch = getattr(p, "leader_epoch", -1)
                    out[tp] = PartitionOffsets(
                        p.offset, p.timestamp if p.timestamp >= 0 else None, epoch if epoch >= 0 else None
                    )
        for tp in wanted:  # an error object only for a partition without an answer (not 100,000 spare ones)
            if tp not in out:
                out[tp] = _no_answer(tp)
        return {tp: out[tp] for tp in wanted}

    def offsets_by_leader(
        self,
        by_leader: dict[int, dict[str, list[int]]],
        specs: Sequence[str | int] = ("latest",),
        isolation: str = "READ_UNCOMMITTED",
    ) -> list[tuple[dict[tuple[str, int], int], dict[tuple[str, int], KafkaOperationError]]]:
        """``list_offsets`` for big reads whose caller already grouped the partitions by leader
        (``{leader: {topic: [partition]}}``, from its metadata), for one or more specs at once
        (one ListOffsets per leader and spec, all in flight together). Per spec: plain
        ``{(topic, partition): offset}`` for the answers and ``{(topic, partition): error}`` for
        the rest (a partition error, a broker that did not answer, a partition missing from the
        answer). No timestamps or leader epochs: the groups pages read 100,000 log ends a view,
        and each object counts.
        """
        self._require_brokers("listing offsets")
        timestamps = [offset_timestamp(spec, isolation) for spec in specs]
        answers = self._send_list_offsets(by_leader, timestamps, isolation)
        asked = sum(len(ps) for parts in by_leader.values() for ps in parts.values())
        out = []
        for timestamp in timestamps:
            offsets: dict[tuple[str, int], int] = {}
            errors: dict[tuple[str, int], KafkaOperationError] = {}
            for broker in by_leader:
                response = answers.get((broker, timestamp))
                if response is None:
                    continue
                if isinstance(response, KafkaOperationError):
                    errors.update(((t, p), response) for t, ps in by_leader[broker].items() for p in ps)
                    continue
                for t in response.topics:
                    name = t.name
                    for p in t.partitions:
                        if p.error_code:
                            err = from_code(p.error_code)
                            errors[(name, p.partition_index)] = err.with_message(
                                f"{err.message} ({name}-{p.partition_index})"
                            )
                        else:
                            offsets[(name, p.partition_index)] = p.offset
            if len(offsets) + len(errors) < asked:
                for parts in by_leader.values():
                    for t, ps in parts.items():
                        for p in ps:
                            if (t, p) not in offsets and (t, p) not in errors:
                                errors[(t, p)] = _no_answer(TopicPartition(t, p))
            out.append((offsets, errors))
        return out

    def _send_list_offsets(
        self, by_leader: dict[int, dict[str, list[int]]], timestamps: list[int], isolation: str
    ) -> dict[tuple[int, int], Any]:
        """One ListOffsets per leader and timestamp, all in flight together:
        ``{(leader, timestamp): response | error}``."""
        keys = [(b, ts) for ts in dict.fromkeys(timestamps) for b in sorted(by_leader) if by_leader[b]]
        if not keys:
            return {}
        self._kp.broker_ids(expect=sorted({b for b, _ in keys}))  # a leader restarted since the client looked
        responses = self._kp.send_many(
            [(list_offsets_request(by_leader[b], ts, isolation, self._timeout), b) for b, ts in keys]
        )
        return dict(zip(keys, responses, strict=True))

    def _leaders(self, topics: set[str]) -> dict[TopicPartition, int | KafkaOperationError]:
        """The current leader of every partition of the named topics (one Metadata request)."""
        described = self.describe_topics(sorted(topics))
        out: dict[TopicPartition, int | KafkaOperationError] = {}
        for name, meta in described.items():
            if isinstance(meta, KafkaOperationError):
                continue  # its partitions come out as unknown, with the topic's name
            for p in meta.partitions:
                out[TopicPartition(name, p.id)] = p.leader
        return out


def list_offsets_request(
    partitions: Mapping[str, Iterable[int]], timestamp: int, isolation: str, timeout_s: float
) -> Any:
    """One leader's ListOffsets (v1+): every partition of ``{topic: [partition]}`` at ``timestamp``
    (``offset_timestamp``), as a consumer (replica -1) at ``isolation``. The gateway's ListOffsets
    reads (``list_offsets``, ``offsets_by_leader``, ``offsets_by_row``) all build theirs here."""
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=ISOLATION_LEVELS[isolation],
        topics=[
            _TOPIC(name=t, partitions=[_PARTITION(partition_index=p, timestamp=timestamp) for p in ps])
            for t, ps in partitions.items()
        ],
        timeout_ms=int(timeout_s * 1000),
        min_version=1,
    )


def offset_timestamp(spec: str | int, isolation: str) -> int:
    """ListOffsets' timestamp for ``spec`` (earliest, latest, max_timestamp or a time in ms)."""
    if isinstance(spec, int) and not isinstance(spec, bool):
        timestamp = spec
    elif spec in OFFSET_SPECS:
        timestamp = OFFSET_SPECS[spec]
    else:
        raise KafkaOperationError(42, "INVALID_REQUEST", f"unknown offset spec {spec!r}")
    if isolation not in ISOLATION_LEVELS:
        raise KafkaOperationError(42, "INVALID_REQUEST", f"unknown isolation level {isolation!r}")
    return timestamp


def _no_answer(tp: TopicPartition) -> KafkaOperationError:
    return KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", f"no answer for {tp.topic}-{tp.partition}")
