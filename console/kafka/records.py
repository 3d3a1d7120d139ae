"""Purging records (KIP-107): DeleteRecords to the partitions' leaders, and the partitions' sizes the
purge's dry run estimates from.

DeleteRecords goes over the kafka-python request client (``self._kp``), one request per leader, all in
flight together, so every connection the console supports works unchanged. kafka-python's own
``KafkaAdminClient.delete_records`` raises on the first partition error; the console needs each
partition's answer (the low watermark, or Kafka's refusal), as ``kafka-delete-records.sh`` prints them.
A partition whose leader moved (NOT_LEADER_OR_FOLLOWER) is sent again to its new leader, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import GatewayBase
from .errors import KafkaOperationError, from_code
from .types import TopicPartition

__all__ = ["RecordsMixin"]

HIGH_WATERMARK = -1  # DeleteRecordsRequest.HIGH_WATERMARK: every record up to the high watermark
_LEADER_MOVED = frozenset({"NOT_LEADER_OR_FOLLOWER", "LEADER_NOT_AVAILABLE", "UNKNOWN_LEADER_EPOCH"})


class RecordsMixin(GatewayBase):
    """delete_records, partition_sizes (with MessagesMixin's partition_bounds and offsets_for_time)."""

    def delete_records(self, topic: str, offsets: Mapping[int, int]) -> dict[int, int | KafkaOperationError]:
        """Delete ``topic``'s records below ``{partition: offset}`` (``-1``: the high watermark):
        ``{partition: low watermark after the request | Kafka's refusal}``. Raises
        UNKNOWN_TOPIC_OR_PARTITION when the topic does not exist."""
        self._require_brokers("deleting records")
        wanted = {int(p): int(o) for p, o in offsets.items()}
        out: dict[int, int | KafkaOperationError] = {}
        todo = dict(wanted)
        for attempt in range(2):
            leaders = self._topic_leaders(topic)  # type: ignore[attr-defined]
            by_leader = self._group(topic, leaders, todo, out)  # type: ignore[attr-defined]
            answers = self._send_deletes(topic, by_leader, todo)
            todo = {}
            for p, answer in answers.items():
                moved = isinstance(answer, KafkaOperationError) and answer.name in _LEADER_MOVED
                if moved and attempt == 0:
                    todo[p] = wanted[p]
                else:
                    out[p] = answer
            if not todo:
                break
        return {p: out[p] for p in sorted(wanted)}

    def _send_deletes(
        self, topic: str, by_leader: Mapping[int, Mapping[str, list[int]]], offsets: Mapping[int, int]
    ) -> dict[int, int | KafkaOperationError]:
        from kafka.protocol.admin import DeleteRecordsRequest as D

        leaders = sorted(b for b, parts in by_leader.items() if parts.get(topic))
        if not leaders:
            return {}
        self._kp.broker_ids(expect=leaders)  # a leader restarted since the client looked
        T, P = D.DeleteRecordsTopic, D.DeleteRecordsTopic.DeleteRecordsPartition
        asks = [
            (
                D(
                    topics=[
                        T(
                            name=topic,
                            partitions=[P(partition_index=p, offset=offsets[p]) for p in by_leader[b][topic]],
                        )
                    ],
                    timeout_ms=int(self._timeout * 1000),
                ),
                b,
            )
            for b in leaders
        ]
        out: dict[int, int | KafkaOperationError] = {}
        for (_, broker), response in zip(asks, self._kp.send_many(asks), strict=True):
            asked = by_leader[broker][topic]
            if isinstance(response, KafkaOperationError):
                out.update((p, response) for p in asked)
                continue
            for t in response.topics:
                for r in t.partitions:
                    err = from_code(r.error_code)
                    out[r.partition_index] = (
                        r.low_watermark
                        if err is None
                        else err.with_message(f"{err.message} ({topic}-{r.partition_index})")
                    )
            for p in asked:
                out.setdefault(
                    p, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", f"no answer for {topic}-{p}", True)
                )
        return out

    def partition_sizes(self, topic: str) -> dict[int, int | None]:
        """Bytes in each partition's leader replica (DescribeLogDirs to the leaders, naming only this
        topic's partitions); None for a partition whose leader did not say."""
        self._require_brokers("describing log dirs")
        leaders = self._topic_leaders(topic)  # type: ignore[attr-defined]
        asked: dict[int, list[TopicPartition]] = {}
        for p, leader in leaders.items():
            if leader >= 0:
                asked.setdefault(leader, []).append(TopicPartition(topic, p))
        sizes: dict[int, int | None] = dict.fromkeys(leaders)
        if not asked:
            return sizes
        answers: Any = self.describe_log_dirs(partitions=asked)  # type: ignore[attr-defined]
        for broker, dirs in answers.items():
            if isinstance(dirs, KafkaOperationError):
                continue
            for d in dirs:
                for tp, info in d.replicas.items():
                    if tp.topic == topic and leaders.get(tp.partition) == broker and not info.is_future:
                        sizes[tp.partition] = info.size
        return sizes
