"""Cluster-level reads: describe cluster, metadata, summary, connection test, quorum, features."""

from __future__ import annotations

import marshal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import diagnose
from .base import GatewayBase
from .deferred import DeferredTopics
from .diagnose import ConnectionCheck
from .errors import KafkaOperationError, from_code, no_such_topic, topic_error
from .kp import check
from .metadata_read import WholeTopic
from .tls import CertificateFacts, client_certificate
from .types import (
    BrokerInfo,
    ClusterInfo,
    ClusterMetadata,
    FeatureInfo,
    PartitionMetadata,
    QuorumInfo,
    QuorumReplica,
    TopicHealth,
    TopicMetadata,
    TopicSummary,
)

#: Kafka's own internal topics by name. The whole-cluster read takes the flag from Kafka's answer
#: (``metadata_read``); this list is only for a caller that has the names before the answer is
#: decoded (the topic list's config prefetch sizes its first page with it).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def summarize(topics: tuple[TopicMetadata, ...]) -> TopicSummary:
    """Counts of a metadata snapshot (pure; used by ``topic_summary``)."""
    partitions = under = offline = internal = 0
    for t in topics:
        internal += t.internal
        for p in t.partitions:
            partitions += 1
            if p.leader < 0:
                offline += 1
            if len(p.isr) < len(p.replicas):
                under += 1
    return TopicSummary(len(topics), partitions, under, offline, internal)


def quorum_partition(kp: Any) -> tuple[Any, Any]:
    """DescribeQuorum of ``__cluster_metadata`` at the active controller: (response, its partition);
    the partition's error raised."""
    from kafka.protocol.admin import DescribeQuorumRequest

    T = DescribeQuorumRequest.TopicData
    request = DescribeQuorumRequest(
        topics=[T(topic_name="__cluster_metadata", partitions=[T.PartitionData(partition_index=0)])]
    )
    response = kp.send_to_controller(request)
    check(response)
    part = response.topics[0].partitions[0]
    err = from_code(part.error_code, getattr(part, "error_message", None))
    if err is not None:
        raise err
    return response, part


def replica_stamps(r: Any) -> tuple[int | None, int | None]:
    """A quorum replica's last fetch and last caught-up times (ms), None where Kafka sends -1."""
    lf = getattr(r, "last_fetch_timestamp", -1)
    lc = getattr(r, "last_caught_up_timestamp", -1)
    return (lf if lf is not None and lf >= 0 else None, lc if lc is not None and lc >= 0 else None)


class _PackedPartitions:
    """Reads a topic of the whole-cluster answer (``metadata_read.WholeTopic``: its partitions packed into
    one ``bytes``, ``marshal`` format 2 of ``(id, leader, replicas, isr)`` per partition, and its
    counts) with one fetch's live brokers.

    A whole-cluster snapshot lives for the cache's 30 s: kept as a client's decoded answer it was
    ~340,000 tracked objects at 20,000 topics x 5 partitions, which the cyclic collector walked
    once young and again at every full collection while the snapshot lived. The packed bytes
    are not tracked at all, and the C decoder (``metadata_read.py``) writes them straight from Kafka's
    answer. ``health`` answers from the counts the decoder made; only an unhealthy topic's ISR
    sizes read its partitions back.
    """

    __slots__ = ("live",)

    def __init__(self, live: frozenset[int]) -> None:
        self.live = live

    def partitions(self, topic: WholeTopic) -> tuple[PartitionMetadata, ...]:
        live = self.live
        all_live = live.issuperset
        parts = []
        for pid, leader, replicas, isr in sorted(marshal.loads(topic.packed)):
            replicas = tuple(replicas)
            offline = () if all_live(replicas) else tuple(r for r in replicas if r not in live)
            parts.append(PartitionMetadata(pid, leader, replicas, tuple(isr), offline))
        return tuple(parts)

    def hosted(self, topic: WholeTopic, broker: int) -> tuple[PartitionMetadata, ...]:
        live = self.live
        parts = []
        for pid, leader, replicas, isr in marshal.loads(topic.packed):
            if broker in replicas:
                replicas = tuple(replicas)
                offline = () if live.issuperset(replicas) else tuple(r for r in replicas if r not in live)
                parts.append(PartitionMetadata(pid, leader, replicas, tuple(isr), offline))
        parts.sort(key=lambda p: p.id)
        return tuple(parts)

    def placement(self, topic: WholeTopic, ids: set[int]) -> dict[int, tuple[int, tuple[int, ...]]]:
        return {
            pid: (leader, tuple(reps)) for pid, leader, reps, _ in marshal.loads(topic.packed) if pid in ids
        }

    def counts(self, topic: WholeTopic) -> tuple[int, int, int]:
        return topic.partitions, topic.under_replicated, topic.offline

    def health(self, topic: WholeTopic) -> TopicHealth:
        under, offline = topic.under_replicated, topic.offline
        isr_sizes = tuple(len(p[3]) for p in sorted(marshal.loads(topic.packed))) if under or offline else ()
        return TopicHealth(topic.partitions, topic.replication_factor, under, offline, isr_sizes)


@dataclass(frozen=True)
class BrokerStatus:
    """A broker and whether it answers (``ClusterMixin.broker_status``)."""

    broker: BrokerInfo
    state: str  # up | fenced | unreachable | missing
    detail: str = ""


class ClusterMixin(GatewayBase):
    """Cluster-wide reads."""

    _seen_brokers: dict[int, BrokerInfo]

    def describe_cluster(self) -> ClusterInfo:
        """Cluster id, controller id and brokers (host, port, rack).

        In controller mode the "brokers" are the controllers and ``controller_id`` is the
        active controller. Under KRaft, brokers report a random live broker as controller;
        use :meth:`describe_quorum` for the active controller in broker mode.
        """
        if self.conn.controller_mode:
            self._kp.ensure_ready()
            return self._kp.refresh_controllers()
        self._reachable()
        return self._kp.describe_brokers()[0]

    def broker_status(self) -> tuple[BrokerStatus, ...]:
        """Every broker Kafka registers, and each one this process saw before, with its state:
        "up" (answers), "fenced" (registered, not heartbeating: stopped or frozen for longer than
        broker.session.timeout.ms), "unreachable" (registered but no answer within the connect
        timeout: frozen, cut off) or "missing" (seen earlier, no longer registered at all). In
        controller mode the nodes are the controllers."""
        self._reachable()
        self._kp.ensure_ready()
        known = self._kp.broker_ids()
        pinging = self._kp.start_ping(known)  # while DescribeCluster is asked: a frozen broker costs once
        if self.conn.controller_mode:
            registered, fenced = self._kp.refresh_controllers().brokers, ()
        else:
            info, fenced = self._kp.describe_brokers()
            registered = info.brokers
        pings = pinging(skip=[b.id for b in fenced])
        new = [b.id for b in registered if b.id not in pings]  # unknown to the cached Metadata: refresh
        if new:
            self._kp.broker_ids(expect=new)
            pings.update(self._kp.ping(new))
        out = {}
        for b in registered:
            err = pings.get(b.id)
            out[b.id] = BrokerStatus(b, "up" if err is None else "unreachable", err.message if err else "")
        for b in fenced:
            out[b.id] = BrokerStatus(b, "fenced", "registered but fenced: not heartbeating to the controller")
        seen = self._seen_brokers
        for b in list(registered) + list(fenced):
            seen[b.id] = b
        for node, b in seen.items():
            out.setdefault(node, BrokerStatus(b, "missing", "seen earlier; no longer registered in Kafka"))
        return tuple(out[k] for k in sorted(out))

    def list_topics_metadata(self, on_names: Callable[[list[str]], Any] | None = None) -> ClusterMetadata:
        """Every topic and partition in one Metadata fetch (fast for 100k partitions).

        Topics come sorted by name (``DeferredTopics``): each ``TopicMetadata`` is made when first
        read from its partitions packed into bytes (``_PackedPartitions``), building their
        ``PartitionMetadata`` when those are first read (``TopicMetadata.deferred``), so a caller
        that reads a few topics pays for those only. Offline replicas are the replicas whose broker
        is not live; brokers come with their racks. ``on_names`` gets the sorted names as soon as
        they are known (a caller can start its next request meanwhile).
        """
        whole = self._whole_metadata()
        names = sorted(whole.topics)
        if on_names is not None:
            on_names(names)
        internal = frozenset(n for n, t in whole.topics.items() if t.internal)
        live = frozenset(b.id for b in whole.brokers)
        topics = DeferredTopics(names, whole.topics, _PackedPartitions(live), internal, whole.broker_counts)
        return ClusterMetadata(whole.cluster_id, whole.controller_id, whole.brokers, topics)

    def describe_topics(self, names: list[str]) -> dict[str, TopicMetadata | KafkaOperationError]:
        """Full metadata (incl. offline replicas, internal flag, topic id) of the named topics."""
        self._require_brokers("describing topics")
        from kafka.protocol.metadata import MetadataRequest

        if not names:
            return {}
        request = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in names],
            allow_auto_topic_creation=False,
        )
        response = self._kp.send(request)
        by_name = {t.name: t for t in response.topics}
        out: dict[str, TopicMetadata | KafkaOperationError] = {}
        for name in names:
            t = by_name.get(name)
            if t is None:
                out[name] = no_such_topic(name)
                continue
            err = topic_error(t.error_code, name)
            if err is not None:
                out[name] = err
                continue
            parts = tuple(
                sorted(
                    (
                        PartitionMetadata(
                            p.partition_index,
                            p.leader_id,
                            tuple(p.replica_nodes),
                            tuple(p.isr_nodes),
                            tuple(p.offline_replicas or ()),
                        )
                        for p in t.partitions
                    ),
                    key=lambda p: p.id,
                )
            )
            topic_id = str(t.topic_id) if getattr(t, "topic_id", None) else None
            out[name] = TopicMetadata(name, parts, bool(t.is_internal), topic_id)
        return out

    def test_connection(self) -> ConnectionCheck:
        """Cluster id, controller and broker count, and the certificates' facts — or the precise error
        (DNS, TCP, TLS, token endpoint, Kerberos, SASL mechanism, authentication) within the timeouts."""
        start = time.monotonic()
        self._probed = False
        peer = diagnose.check(self.conn)  # DNS, TCP, TLS, token endpoint, Kerberos: named causes
        self._login()  # precise errors: wrong endpoint type, SASL mechanism, authentication
        info = self.describe_cluster()
        return ConnectionCheck(
            info.cluster_id,
            info.controller_id,
            len(info.brokers),
            info.endpoint_type,
            time.monotonic() - start,
            peer.server_certificate if peer else None,
            client_certificate(self.conn),
            peer.tls_version if peer else None,
        )

    def tls_peer(self) -> CertificateFacts | None:
        """The server certificate (subject, issuer, not_after) of the first bootstrap address that
        answers TLS, read even when it would be refused; None without TLS."""
        return diagnose.server_certificate(self.conn)

    def describe_quorum(self) -> QuorumInfo:
        """The KRaft metadata quorum: leader, epoch, high watermark, voters and observers."""
        response, part = quorum_partition(self._kp)
        hw = part.high_watermark

        def replica(r: Any) -> QuorumReplica:
            return QuorumReplica(
                r.replica_id, r.log_end_offset, max(0, hw - r.log_end_offset), *replica_stamps(r)
            )

        nodes = {
            n.node_id: tuple(f"{li.host}:{li.port}" for li in n.listeners)
            for n in (getattr(response, "nodes", None) or ())
        }
        return QuorumInfo(
            part.leader_id,
            part.leader_epoch,
            hw,
            tuple(replica(r) for r in part.current_voters),
            tuple(replica(r) for r in part.observers),
            nodes,
        )

    def describe_features(self) -> dict[str, FeatureInfo]:
        """Supported and finalized feature levels (e.g. ``metadata.version``, ``kraft.version``)."""
        from kafka.protocol.metadata import ApiVersionsRequest

        request = ApiVersionsRequest(
            client_software_name="kafka-operator-console", client_software_version="1", min_version=3
        )
        response = self._kp.send(request)
        check(response)
        supported = {f.name: (f.min_version, f.max_version) for f in (response.supported_features or ())}
        finalized = {
            f.name: (f.min_version_level, f.max_version_level) for f in (response.finalized_features or ())
        }
        out = {}
        for name in sorted(set(supported) | set(finalized)):
            s = supported.get(name, (None, None))
            f = finalized.get(name, (None, None))
            out[name] = FeatureInfo(name, s[0], s[1], f[0], f[1])
        return out
