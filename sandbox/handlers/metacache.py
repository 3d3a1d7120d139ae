"""Metadata's per-topic cache: response entries built once per change, pre-encoded entries
spliced into a topic-less response encoded by kafka-python (checked per version)."""

from __future__ import annotations

import uuid
from typing import Any

from kafka.protocol.metadata import MetadataResponse
from kafka.protocol.schemas.fields.codecs import Int32, UnsignedVarInt32
from kafka.protocol.schemas.fields.codecs.encode_buffer import EncodeBufferPool

from sandbox.apis import Encoded, fast_factory
from sandbox.state import ClusterState, Partition, Topic

TOPIC_OPS = {3, 4, 5, 6, 7, 8, 10, 11}


fast_partition = fast_factory(MetadataResponse.MetadataResponseTopic.MetadataResponsePartition)


def _partition(p: Partition, st: ClusterState) -> Any:
    brokers = st.brokers
    offline = [b for b in p.replicas if not brokers[b].up]
    return fast_partition(
        error_code=5 if p.leader < 0 else 0,
        partition_index=p.index,
        leader_id=p.leader,
        leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas),
        isr_nodes=list(p.isr),
        offline_replicas=offline,
    )


def topic_entry(t: Topic, st: ClusterState, ops: bool) -> Any:
    return MetadataResponse.MetadataResponseTopic(
        error_code=0,
        name=t.name,
        topic_id=t.topic_id,
        is_internal=t.internal,
        partitions=[_partition(p, st) for p in t.partitions],
        authorized_operations=TOPIC_OPS if ops else None,
    )


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
            return topic_entry(t, st, False)
        if t.name in st.dirty_topics or t.name not in self.objs:
            self._set(t.name, topic_entry(t, st, False))
            st.dirty_topics.discard(t.name)
        return self.objs[t.name]

    def refresh(self, st: ClusterState) -> None:
        """Rebuild what changed since the last use."""
        if not self.built or st.all_dirty:
            self.objs = {name: topic_entry(t, st, False) for name, t in st.topics.items()}
            self.blobs = {}
            self.built = True
        else:
            for name in st.dirty_topics:
                t = st.topics.get(name)
                self._set(name, None if t is None else topic_entry(t, st, False))
        st.all_dirty = False
        st.dirty_topics.clear()

    def topics(self, st: ClusterState) -> list[Any]:
        self.refresh(st)
        return list(self.objs.values())

    def entry(self, st: ClusterState, t: Topic, version: int) -> bytes:
        """One topic's encoded entry for ``version``, from the cache when it is current (a named
        Metadata joins these as a full one does: Kafka's cost is the partitions it writes, not
        the request's form)."""
        obj = self.get(st, t)
        cached = self.blobs.setdefault(version, {})
        blob = cached.get(t.name)
        if blob is None or self.objs.get(t.name) is not obj:
            blob = _encode_topic(obj, version)
            if self.objs.get(t.name) is obj:
                cached[t.name] = blob
        return blob

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


def splice(head: Any, version: int, entries: list[bytes]) -> bytes | None:
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
        spliced = splice(
            MetadataResponse(topics=[], **kw), version, [_encode_topic(t, version) for t in topics]
        )
        _splice_ok[version] = spliced == bytes(full)
    return _splice_ok[version]


def encode_topic(obj: Any, version: int) -> bytes:
    """A topic entry that is not cached (an error entry) encoded for ``version``."""
    return _encode_topic(obj, version)


def cache_of(st: ClusterState) -> _TopicCache:
    if st.meta_cache is None:
        st.meta_cache = _TopicCache()
    return st.meta_cache


def warm_topic(st: ClusterState, name: str) -> None:
    """Pre-build the Metadata entry of a topic created outside a request (bulk loads)."""
    cache_of(st).warm(st, name)
