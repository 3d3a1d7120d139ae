"""Cluster health counts read straight from one Metadata answer (the overview's figures)."""

from __future__ import annotations

from .base import GatewayBase
from .cluster import INTERNAL_TOPICS
from .types import TopicSummary


class HealthMixin(GatewayBase):
    """Counts that need no per-partition objects."""

    def topic_health(self) -> TopicSummary:
        """Topic and partition counts, under-replicated and offline partitions, internal topics.

        The same figures as ``summarize(list_topics_metadata().topics)`` (a partition is offline
        when it has no leader, under-replicated when its ISR is shorter than its replica list),
        counted while walking librdkafka's answer: at 100,000 partitions building a
        ``PartitionMetadata`` per partition only to count them costs more than the fetch.
        """
        self._require_brokers("listing topics")
        self._reachable()
        admin = self._admin
        md = self._call(admin.list_topics, timeout=self._timeout, what="list topics")
        partitions = under = offline = internal = 0
        for name, t in md.topics.items():
            if name in INTERNAL_TOPICS:
                internal += 1
            parts = t.partitions
            partitions += len(parts)
            for p in parts.values():
                if p.leader < 0:
                    offline += 1
                if len(p.isrs) < len(p.replicas):
                    under += 1
        return TopicSummary(len(md.topics), partitions, under, offline, internal)
