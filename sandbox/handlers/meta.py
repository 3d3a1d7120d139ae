"""ApiVersions, Metadata, DescribeCluster, DescribeQuorum, FindCoordinator, UpdateFeatures."""

from __future__ import annotations

import gc
import random
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

from sandbox.apis import Encoded, RequestContext, api, served
from sandbox.handlers.metacache import cache_of, encode_topic, splice, splice_works, topic_entry
from sandbox.state import ClusterState

ZERO_UUID = uuid.UUID(int=0)
CLUSTER_OPS = {5, 7, 8, 9, 10, 11, 12}
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
    """Under KRaft, Metadata's "controller" is a random live broker, chosen per response (as
    Kafka's KRaftMetadataCache does); the active controller is only in DescribeQuorum."""
    live = st.live_brokers()
    return random.choice(live) if live else -1


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


def _all_topics(st: ClusterState, ops: bool) -> list[Any]:
    if ops:
        return [topic_entry(t, st, True) for t in st.topics.values()]
    return cache_of(st).topics(st)


@api(MetadataRequest, 0, 13)
def metadata(ctx: RequestContext, req: Any) -> Any:
    """Brokers, controller id, topics (null = all) with partitions, ISR and offline replicas."""
    st, v = ctx.state, ctx.version
    ops = bool(req.include_topic_authorized_operations) and v >= 8
    full = req.topics is None or (v == 0 and not req.topics)
    key = (v, st.generation)
    cache = cache_of(st)
    if full and not ops and key in cache.encoded:
        return cache.encoded[key]
    gc_was = gc.isenabled()
    gc.disable()  # building ~100k small objects would otherwise trigger full collections
    try:
        if not ops and splice_works(v):
            entries = cache.entries(st, v) if full else _requested_topics(ctx, req, ops, encoded=True)
            body = splice(_metadata(ctx, req, ops, False, no_topics=True), v, entries)
            if body is not None and not full:
                return Encoded(body, MetadataResponse.flexible_version_q(v))
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


def _requested_topics(ctx: RequestContext, req: Any, ops: bool, encoded: bool = False) -> list[Any]:
    """Named topics; as Kafka, when any topic id is given the ids decide (unknown ones first).
    ``encoded``: each entry encoded for the request's version (cached topics' from the cache)."""
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
        if t is not None and encoded:
            topics.append(cache_of(st).entry(st, t, v))
        elif t is not None:
            topics.append(topic_entry(t, st, True) if ops else cache_of(st).get(st, t))
        elif not name or len(name) > 249 or not LEGAL_TOPIC.match(name) or name in (".", ".."):
            topics.append(_error_topic(name, 17))
        elif (v < 4 or req.allow_auto_topic_creation) and _auto_create(ctx, name):
            topics.append(_error_topic(name, 5, st.topics[name].topic_id))
        else:
            topics.append(_error_topic(name, 3))
    if encoded:
        return [e if isinstance(e, bytes) else encode_topic(e, v) for e in topics]
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
