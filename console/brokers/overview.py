"""The cluster overview page's figures: the brokers and their states, the active controller
(``clusters.actions.overview``) and the topic counts, both kept with the topic area's metadata
snapshot (``console/topics/cache.py``) for its life.

At 1,000,000 partitions a view that read everything again cost ~0.7 s (the whole cluster's Metadata,
DescribeCluster, DescribeQuorum and an ApiVersions to every broker); within the snapshot's life a
view reads nothing from Kafka. Correctness holds as for every page of the snapshot: the console's
own changes invalidate it (the next view reads again), Refresh reads everything again, another
process's snapshot expires within ``TOPIC_METADATA_CACHE_S``, and the page says how old its figures
are. The brokers' states live no longer than the snapshot they are kept with (a broker that stops
shows within that time, or at once on Refresh); in controller mode, where there is no snapshot,
every view reads them.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from console import access
from console.brokers.figures import forget, per_snapshot
from console.clusters import actions as clusters
from console.clusters.actions import Overview, security
from console.kafka import KafkaOperationError, TopicSummary
from console.kafka.deferred import DeferredTopics
from console.kafka.types import TopicHealth
from console.topics import cache as metadata_cache

FACTS = "overview"  # the brokers' states, kept per snapshot (figures.per_snapshot)


def _scan(snap) -> tuple[TopicSummary, list[tuple[str, TopicHealth]]]:
    """The snapshot's topic counts, summed over each topic's counts as the decoder made them (no
    partition read), and the topics with an offline or under-replicated partition, in one pass."""
    topics = snap.metadata.topics
    if isinstance(topics, DeferredTopics) and topics.names is snap.names:  # no TopicMetadata made
        partitions, under, offline, unhealthy = topics.tally()
    else:
        partitions = under = offline = 0
        unhealthy = []
        get = snap.by_name.get
        for name in snap.names:
            health = get(name).health()
            partitions += health.partitions
            under += health.under_replicated
            offline += health.offline
            if health.under_replicated or health.offline:
                unhealthy.append((name, health))
    return TopicSummary(len(snap.names), partitions, under, offline, len(snap.internal_names)), unhealthy


def topic_summary(snap) -> TopicSummary:
    """The snapshot's topic counts, once per snapshot."""
    return per_snapshot(snap, "summary", lambda: _scan(snap))[0]


def unhealthy_topics(snap) -> list[tuple[str, TopicHealth]]:
    """``(name, health)`` of the snapshot's topics with an offline or under-replicated partition,
    found by the same pass as the counts (the overview's "what needs attention")."""
    return per_snapshot(snap, "summary", lambda: _scan(snap))[1]


def _current(facts: Overview, cluster) -> Overview:
    """Kept facts with today's registry row and certificate warnings (the brokers' certificate as read)."""
    server = facts.security.server.facts if facts.security and facts.security.server else None
    return replace(facts, cluster=cluster, security=security(cluster, server))


def cluster_overview(*, actor, cluster, refresh: bool = False) -> Overview:
    """The overview page's data: from the fresh snapshot's kept figures, or read (the snapshot and the
    brokers' states at once, so the page costs the slower of the two)."""
    access.require(actor, cluster, access.VIEW)
    if cluster.controller_mode:  # no topic reads through the controllers: no snapshot to keep with
        return clusters.overview(actor=actor, cluster=cluster)
    snap = None if refresh else metadata_cache.peek(cluster)
    if snap is None:
        with ThreadPoolExecutor(1) as pool:
            reading = pool.submit(metadata_cache.get_snapshot, cluster, refresh=refresh)
            facts, read_at = clusters.overview(actor=actor, cluster=cluster), time.time()
            try:
                snap = reading.result()
            except KafkaOperationError as exc:
                return Overview(cluster=cluster, error=facts.error or exc, security=facts.security)
        facts, read_at = per_snapshot(snap, FACTS, lambda: (facts, read_at))
    else:
        facts, read_at = per_snapshot(
            snap, FACTS, lambda: (clusters.overview(actor=actor, cluster=cluster), time.time())
        )
    if facts.error is not None:
        forget(snap, FACTS)  # not kept: the next view asks again
        return facts
    return replace(
        _current(facts, cluster),
        summary=topic_summary(snap),
        counts_age_s=snap.age_s,
        states_age_s=max(0.0, time.time() - read_at),
        states_read_at=read_at,
    )
