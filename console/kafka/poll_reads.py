"""A reassignment poll's reads in one flight: the reassignments in progress, each involved
broker's log dirs, and the ISR of the moving partitions (``PollReadsMixin.poll_reads``).

The ISR comes from a Metadata request of the moving topics, sent with the log dirs; kafka-python
hands its answer over as bytes, decoded in C on the caller's thread (``metadata_read.py``), so the
read costs what those topics' bytes cost, never a decoding of the whole cluster.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import Any

from . import reassign_reads
from .errors import KafkaOperationError
from .kp import check
from .log_dirs_read import HeldReplicas
from .metadata_read import MetadataBytesRequest
from .reassign_reads import PartitionIsr
from .replicas import ReplicasMixin
from .types import TopicPartition


class PollReadsMixin(ReplicasMixin):
    """The reads of a reassignment poll cycle (see the module docstring)."""

    def reassigning(self, partitions: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        """Which of ``partitions`` Kafka lists as being reassigned: the keys of
        ``list_partition_reassignments(partitions)`` as ``(topic, partition)`` tuples, without a
        ``PartitionReassignment`` per partition (a poll asks about 10,000s every second)."""
        request = self._list_reassignments_request(list(partitions))
        if request is None:
            return set()
        return _reassigning(self._kp.send_to_controller(request))

    def log_dirs_and_isr(
        self,
        partitions: Mapping[int, Iterable[TopicPartition]],
        topics: Iterable[str],
        only: Mapping[str, Container[int]] | None = None,
    ) -> tuple[dict[int, HeldReplicas | KafkaOperationError], PartitionIsr | KafkaOperationError]:
        """The replicas each broker holds among ``partitions`` (its DescribeLogDirs, as
        ``describe_log_dirs(partitions=partitions)`` asks it) and ``partition_isr(topics)``.

        A reassignment poll needs both in one cycle (sizes, and the ISR of replicas level with
        their leader); the ISR is read while the log dirs are.
        Each broker's answer comes as ``{(topic, partition): (size, offset lag)}`` over its log
        dirs, future replicas (a move between the broker's own dirs) left out: what
        ``progress.flatten_logs`` makes of ``describe_log_dirs``, without a ``LogDirInfo`` and
        a ``ReplicaLogInfo`` per replica. ``only`` ({topic: partition ids}) keeps just those
        partitions of the ISR answer.
        """
        _, held, isr = self.poll_reads(None, partitions, topics, only)
        return held, isr

    def poll_reads(
        self,
        moving: Iterable[tuple[str, int]] | None,
        partitions: Mapping[int, Iterable[TopicPartition]],
        topics: Iterable[str],
        only: Mapping[str, Container[int]] | None = None,
    ) -> tuple[
        set[tuple[str, int]],
        dict[int, HeldReplicas | KafkaOperationError],
        PartitionIsr | KafkaOperationError,
    ]:
        """``reassigning(moving)`` and ``log_dirs_and_isr(partitions, topics, only)`` in one
        flight (a reassignment poll's reads; none waits for another). ``moving`` None: no
        ListPartitionReassignments (an empty set). Its failure is raised, as ``reassigning``
        raises it, once the other answers are in."""
        plan = reassign_reads.PollPlan(moving or (), partitions, int(self._timeout * 1000), only)
        return reassign_reads.planned_reads(self, plan, topics)

    def partition_isr(
        self, topics: Iterable[str], only: Mapping[str, Container[int]] | None = None
    ) -> PartitionIsr | KafkaOperationError:
        """``{topic: {partition: (leader, isr)} | error}`` from one Metadata request of ``topics``.

        Only what a poll reads (leaders for ListOffsets, the ISR for "In sync"): no per-partition
        metadata objects for the 1,000s of partitions of the named topics that are not moving.
        ``only`` ({topic: partition ids}) keeps just those. A failed request comes back as the
        error, not raised.
        """
        names = sorted(set(topics))
        if not names:
            return {}
        self._require_brokers("describing topics")
        return reassign_reads.isr_answer(
            names, self._kp.send_many([(MetadataBytesRequest(names), None)])[0], only
        )


def _reassigning(response: Any) -> set[tuple[str, int]]:
    """A ListPartitionReassignments answer (or the error it came as, raised) -> its partitions."""
    if isinstance(response, KafkaOperationError):
        raise response
    check(response)
    return {(t.name, p.partition_index) for t in response.topics for p in t.partitions}
