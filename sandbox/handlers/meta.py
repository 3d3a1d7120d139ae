"""ApiVersions, Metadata, DescribeCluster, DescribeQuorum, FindCoordinator, UpdateFeatures."""

from __future__ import annotations

import gc
import re
import uuid
import zlib
from typing import Any

from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.schemas.fields.codecs import Int32, UnsignedVarInt32
from kafka.protocol.schemas.fields.codecs.encode_buffer import EncodeBufferPool

from sandbox.apis import RequestContext, api, fast_factory, served
from sandbox.server import Encoded
from sandbox.state import ClusterState, Partition, Topic

ZERO_UUID = uuid.UUID(int=0)
CLUSTER_OPS = {5, 7, 8, 9, 10, 11, 12}
TOPIC_OPS = {3, 4, 5, 6, 7, 8, 10, 11}
FEATURE_RANGES = {  # Kafka 4.1's supported feature levels, in its order
    "group.version": (0, 1),
    "kraft.version": (0, 1),
    "metadata.version": (7, 27),
    "share.version": (0, 1),
    "transaction.version": (0, 2),
    "eligible.leader.replicas.version": (0, 1),
}
SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")  # client software name/version
LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")


@api(ApiVersionsRequest, 0, 4, controller=True)
def api_versions(ctx: RequestContext, req: Any) -> Any:
    """The APIs this node serves, plus supported/finalized features."""
    st = ctx.state
    av = ApiVersionsResponse
    if ctx.version >= 3 and not (
        SOFTWARE.fullmatch(req.client_software_name or "")
        and SOFTWARE.fullmatch(req.client_software_version or "")
    ):
        return av(version=ctx.version, error_code=42, throttle_time_ms=0, api_keys=[])
    return av(
        version=ctx.version,
        error_code=0,
        throttle_time_ms=0,
        api_keys=[
            av.ApiVersion(api_key=s.key, min_version=s.min_version, max_version=s.max_version)
            for s in served(ctx.node.is_controller).values()
        ],
        supported_features=[
            av.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
            for n, (lo, hi) in FEATURE_RANGES.items()
        ],
        finalized_features_epoch=st.features_epoch,
        finalized_features=[
            av.FinalizedFeatureKey(name=n, max_version_level=v, min_version_level=v)
            for n, v in st.features.items()
        ],
        zk_migration_ready=False,
    )


def metadata_controller_id(st: ClusterState) -> int:
    """Under KRaft brokers name some live broker as "controller"; we use the lowest."""
    live = st.live_brokers()
    return live[0] if live else -1


_fast_partition = fast_factory(MetadataResponse.MetadataResponseTopic.MetadataResponsePartition)


def _partition(p: Partition, st: ClusterState) -> Any:
    brokers = st.brokers
    offline = [b for b in p.replicas if not brokers[b].up]
    return _fast_partition(
        error_code=5 if p.leader < 0 else 0,
        partition_index=p.index,
        leader_id=p.leader,
        leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas),
        isr_nodes=list(p.isr),
        offline_replicas=offline,
    )


def _topic(t: Topic, st: ClusterState, ops: bool) -> Any:
    return MetadataResponse.MetadataResponseTopic(
        error_code=0,
        name=t.name,
        topic_id=t.topic_id,
        is_internal=t.internal,
        partitions=[_partition(p, st) for p in t.partitions],
        authorized_operations=TOPIC_OPS if ops else None,
    )


def _error_topic(name: str | None, code: int, tid: uuid.UUID = ZERO_UUID) -> Any:
    return MetadataResponse.MetadataResponseTopic(
        error_code=code, name=name, topic_id=tid, is_internal=False, partitions=[], authorized_operations=None
    )


def _auto_create(ctx: RequestContext, name: str) -> bool:
    from sandbox.configs import broker_value

    st = ctx.state
    if broker_value(st, ctx.node.node_id, "auto.create.topics.enable") != "true":
        return False
    rf = int(broker_value(st, ctx.node.node_id, "default.replication.factor") or 1)
    parts = int(broker_value(st, ctx.node.node_id, "num.partitions") or 1)
    from sandbox.placement import PlacementError, place_replicas

    try:
        st.add_topic(name, place_replicas(st, parts, rf), {})
    except PlacementError:
        return False
    return True


HOT_VERSIONS = (12, 13)  # librdkafka 2.16 / kafka-python 3: topic bytes pre-encoded at bulk creation
_TOPIC_STRUCT = MetadataResponse.MetadataResponseTopic._struct.array_of


def _encode_topic(obj: Any, version: int) -> bytes:
    """One topic entry encoded by kafka-python's compiled encoder for that response version."""
    flex = MetadataResponse.flexible_version_q(version)
    fn = _TOPIC_STRUCT.compiled_encode_into(version, compact=flex, tagged=flex)
    with EncodeBufferPool.acquire() as out:
        fn(obj, out)
        return bytes(out.result())


class _TopicCache:
    """Per-topic response objects and encoded entries of one state (kept on the state); only
    topics marked dirty are rebuilt, so a full Metadata after a small change is cheap."""

    def __init__(self) -> None:
        self.objs: dict[str, Any] = {}
        self.blobs: dict[int, dict[str, bytes]] = {}
        self.encoded: dict[tuple[int, int], Encoded] = {}
        self.built = False

    def _set(self, name: str, obj: Any | None) -> None:
        if obj is None:
            self.objs.pop(name, None)
        else:
            self.objs[name] = obj
        for per_version in self.blobs.values():
            per_version.pop(name, None)

    def warm(self, st: ClusterState, name: str) -> None:
        """Build (and pre-encode) one topic now (bulk loads), so a full Metadata only joins bytes."""
        self.refresh(st)  # builds the new topic's object (it is marked dirty)
        if name in self.objs:
            for v in HOT_VERSIONS:
                self.blobs.setdefault(v, {})[name] = _encode_topic(self.objs[name], v)

    def get(self, st: ClusterState, t: Topic) -> Any:
        """One topic's object, from the cache when it is current."""
        if not self.built or st.all_dirty:
            return _topic(t, st, False)
        if t.name in st.dirty_topics or t.name not in self.objs:
            self._set(t.name, _topic(t, st, False))
            st.dirty_topics.discard(t.name)
        return self.objs[t.name]

    def refresh(self, st: ClusterState) -> None:
        """Rebuild what changed since the last use."""
        if not self.built or st.all_dirty:
            self.objs = {name: _topic(t, st, False) for name, t in st.topics.items()}
            self.blobs = {}
            self.built = True
        else:
            for name in st.dirty_topics:
                t = st.topics.get(name)
                self._set(name, None if t is None else _topic(t, st, False))
        st.all_dirty = False
        st.dirty_topics.clear()

    def topics(self, st: ClusterState) -> list[Any]:
        self.refresh(st)
        return list(self.objs.values())

    def entries(self, st: ClusterState, version: int) -> list[bytes]:
        """Encoded topic entries for ``version``, in the order of ``topics``."""
        self.refresh(st)
        cached = self.blobs.setdefault(version, {})
        out = []
        for name, obj in self.objs.items():
            blob = cached.get(name)
            if blob is None:
                blob = cached[name] = _encode_topic(obj, version)
            out.append(blob)
        return out


_splice_ok: dict[int, bool] = {}


def _splice(head: Any, version: int, entries: list[bytes]) -> bytes | None:
    """The full body: ``head`` (a response with no topics) encoded by kafka-python, with the
    pre-encoded topic entries put in place of its empty topics array."""
    flex = MetadataResponse.flexible_version_q(version)
    empty = head.encode(version=version)
    # after Topics come: ClusterAuthorizedOperations (v8-10), ErrorCode (v13+), tagged fields
    suffix = (4 if 8 <= version <= 10 else 0) + (2 if version >= 13 else 0) + (1 if flex else 0)
    mark = b"\x01" if flex else b"\x00\x00\x00\x00"
    cut = len(empty) - suffix - len(mark)
    if empty[cut : cut + len(mark)] != mark:
        return None
    count = UnsignedVarInt32.encode(len(entries) + 1) if flex else Int32.encode(len(entries))
    return b"".join([empty[:cut], count, *entries, empty[cut + len(mark) :]])


def splice_works(version: int) -> bool:
    """Check once per version that splicing gives exactly kafka-python's own encoding."""
    if version not in _splice_ok:
        topic = MetadataResponse.MetadataResponseTopic
        part = topic.MetadataResponsePartition
        topics = [
            topic(
                error_code=0,
                name=f"t{i}",
                topic_id=uuid.UUID(int=i + 1),
                is_internal=bool(i),
                partitions=[
                    part(
                        error_code=0,
                        partition_index=0,
                        leader_id=1,
                        leader_epoch=2,
                        replica_nodes=[1, 2],
                        isr_nodes=[1],
                        offline_replicas=[2],
                    )
                ],
                authorized_operations=None,
            )
            for i in range(2)
        ]
        kw = dict(
            version=version,
            throttle_time_ms=0,
            cluster_id="c",
            controller_id=1,
            error_code=0,
            brokers=[MetadataResponse.MetadataResponseBroker(node_id=1, host="h", port=1, rack="r")],
            authorized_operations=None,
        )
        full = MetadataResponse(topics=topics, **kw).encode(version=version)
        spliced = _splice(
            MetadataResponse(topics=[], **kw), version, [_encode_topic(t, version) for t in topics]
        )
        _splice_ok[version] = spliced == bytes(full)
    return _splice_ok[version]


def _cache_of(st: ClusterState) -> _TopicCache:
    if st.meta_cache is None:
        st.meta_cache = _TopicCache()
    return st.meta_cache


def warm_topic(st: ClusterState, name: str) -> None:
    """Pre-build the Metadata entry of a topic created outside a request (bulk loads)."""
    _cache_of(st).warm(st, name)


def _all_topics(st: ClusterState, ops: bool) -> list[Any]:
    if ops:
        return [_topic(t, st, True) for t in st.topics.values()]
    return _cache_of(st).topics(st)


@api(MetadataRequest, 0, 13)
def metadata(ctx: RequestContext, req: Any) -> Any:
    """Brokers, controller id, topics (null = all) with partitions, ISR and offline replicas."""
    st, v = ctx.state, ctx.version
    ops = bool(req.include_topic_authorized_operations) and v >= 8
    full = req.topics is None or (v == 0 and not req.topics)
    key = (v, st.generation)
    cache = _cache_of(st)
    if full and not ops and key in cache.encoded:
        return cache.encoded[key]
    gc_was = gc.isenabled()
    gc.disable()  # building ~100k small objects would otherwise trigger full collections
    try:
        if full and not ops and splice_works(v):
            body = _splice(_metadata(ctx, req, ops, False, no_topics=True), v, cache.entries(st, v))
            if body is not None:
                enc = Encoded(body, MetadataResponse.flexible_version_q(v))
                cache.encoded = {k: e for k, e in cache.encoded.items() if k[1] == st.generation}
                cache.encoded[key] = enc
                return enc
        resp = _metadata(ctx, req, ops, full)
        if not full or ops:
            return resp
        enc = Encoded(resp.encode(version=v), resp.flexible_version_q(v))
    finally:
        if gc_was:
            gc.enable()
    if any(k[1] != st.generation for k in cache.encoded):
        cache.encoded.clear()
    cache.encoded[key] = enc
    return enc


def _requested_topics(ctx: RequestContext, req: Any, ops: bool) -> list[Any]:
    """Named topics; as Kafka, when any topic id is given the ids decide (unknown ones first)."""
    st, v = ctx.state, ctx.version
    ids = [rt.topic_id for rt in req.topics if v >= 10 and rt.topic_id not in (None, ZERO_UUID)]
    if ids:
        unknown = [_error_topic(None, 100, tid) for tid in dict.fromkeys(ids) if tid not in st.topic_ids]
        names = [st.topic_ids[tid] for tid in dict.fromkeys(ids) if tid in st.topic_ids]
    else:
        unknown, names = [], [rt.name for rt in req.topics]
    topics = unknown
    for name in names:
        t = st.topics.get(name)
        if t is not None:
            topics.append(_topic(t, st, True) if ops else _cache_of(st).get(st, t))
        elif not name or len(name) > 249 or not LEGAL_TOPIC.match(name) or name in (".", ".."):
            topics.append(_error_topic(name, 17))
        elif (v < 4 or req.allow_auto_topic_creation) and _auto_create(ctx, name):
            topics.append(_error_topic(name, 5, st.topics[name].topic_id))
        else:
            topics.append(_error_topic(name, 3))
    return topics


def _metadata(ctx: RequestContext, req: Any, ops: bool, full: bool, no_topics: bool = False) -> Any:
    st, v = ctx.state, ctx.version
    topics = []
    if no_topics:
        pass
    elif full:
        topics = _all_topics(st, ops)
    else:
        topics = _requested_topics(ctx, req, ops)
    return MetadataResponse(
        version=v,
        throttle_time_ms=0,
        cluster_id=st.cluster_id,
        controller_id=metadata_controller_id(st),
        topics=topics,
        error_code=0,
        brokers=[
            MetadataResponse.MetadataResponseBroker(
                node_id=b, host=st.brokers[b].host, port=st.brokers[b].port, rack=st.brokers[b].rack
            )
            for b in st.live_brokers()
        ],
        authorized_operations=CLUSTER_OPS
        if (8 <= v <= 10 and req.include_cluster_authorized_operations)
        else None,
    )


@api(FindCoordinatorRequest, 0, 6)
def find_coordinator(ctx: RequestContext, req: Any) -> Any:
    """Group/transaction coordinator: a live broker chosen by hashing the key."""
    st, v = ctx.state, ctx.version
    fc = FindCoordinatorResponse
    keys = list(req.coordinator_keys) if v >= 4 else [req.key]
    live = st.live_brokers()
    out = []
    for k in keys:
        if not live:
            out.append(
                fc.Coordinator(
                    key=k,
                    node_id=-1,
                    host="",
                    port=-1,
                    error_code=15,
                    error_message="The coordinator is not available.",
                )
            )
            continue
        b = st.brokers[live[zlib.crc32(k.encode()) % len(live)]]
        out.append(
            fc.Coordinator(
                key=k, node_id=b.node_id, host=b.host, port=b.port, error_code=0, error_message=None
            )
        )
    if v >= 4:
        return fc(version=v, throttle_time_ms=0, coordinators=out)
    c = out[0]
    return fc(
        version=v,
        throttle_time_ms=0,
        error_code=c.error_code,
        error_message=c.error_message,
        node_id=c.node_id,
        host=c.host,
        port=c.port,
    )
