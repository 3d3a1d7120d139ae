"""CreateTopics, DeleteTopics and CreatePartitions with Kafka's per-topic validation."""

from __future__ import annotations

import uuid
from typing import Any

from kafka.protocol.admin import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)

from sandbox import configs as C
from sandbox.apis import RequestContext, api
from sandbox.placement import PlacementError, place_replicas
from sandbox.state import ClusterState, topic_name_error

ZERO_UUID = uuid.UUID(int=0)


class TopicError(Exception):
    """A per-topic failure carrying the Kafka error code."""

    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def validate_assignment(st: ClusterState, assignment: list[list[int]], first_index: int = 0) -> None:
    """Kafka's manual-assignment checks (empty list, duplicates, unknown broker, RF mismatch)."""
    rf = None
    for reps in assignment:
        if not reps:
            raise TopicError(39, "The manual partition assignment includes an empty replica list.")
        seen = set()
        for b in reps:
            if b in seen:
                raise TopicError(
                    39, f"The manual partition assignment includes the broker {b} more than once."
                )
            seen.add(b)
            if b not in st.brokers:
                raise TopicError(
                    39,
                    f"The manual partition assignment includes broker {b}, but no such broker is registered.",
                )
        if rf is not None and len(reps) != rf:
            raise TopicError(
                39,
                f"The manual partition assignment includes a partition with {len(reps)} "
                f"replica(s), but this is not consistent with previous partitions, which "
                f"have {rf} replica(s).",
            )
        rf = len(reps)


def _plan(ctx: RequestContext, t: Any) -> tuple[list[list[int]], dict[str, str]]:
    st = ctx.state
    err = topic_name_error(t.name)
    if err:
        raise TopicError(17, err)
    if t.name in st.topics:
        raise TopicError(36, f"Topic '{t.name}' already exists.")
    collide = t.name.replace(".", "_")
    for other in st.topics:
        if other.replace(".", "_") == collide:
            raise TopicError(17, f"Topic '{t.name}' collides with existing topic: {other}")
    configs: dict[str, str] = {}
    for c in t.configs:
        msg = C.validate_topic_config(c.name, c.value)
        if msg:
            raise TopicError(40, msg)
        configs[c.name] = c.value
    if t.assignments:
        if t.num_partitions != -1:
            raise TopicError(
                42, "A manual partition assignment was specified, but numPartitions was not set to -1."
            )
        if t.replication_factor != -1:
            raise TopicError(
                42, "A manual partition assignment was specified, but replication factor was not set to -1."
            )
        by_index = sorted(t.assignments, key=lambda a: a.partition_index)
        if [a.partition_index for a in by_index] != list(range(len(by_index))):
            raise TopicError(39, "partitions should be a consecutive 0-based integer sequence")
        assignment = [list(a.broker_ids) for a in by_index]
        validate_assignment(st, assignment)
        return assignment, configs
    nparts = t.num_partitions
    if nparts == -1:
        nparts = int(C.broker_value(st, ctx.node.node_id, "num.partitions") or 1)
    if nparts <= 0:
        raise TopicError(37, "Number of partitions was set to an invalid non-positive value.")
    rf = t.replication_factor
    if rf == -1:
        rf = int(C.broker_value(st, ctx.node.node_id, "default.replication.factor") or 1)
    if rf <= 0:
        raise TopicError(38, "Replication factor must be larger than 0, or -1 to use the default value.")
    try:
        return place_replicas(st, nparts, rf), configs
    except PlacementError as exc:
        raise TopicError(38, str(exc)) from None


def _created_configs(ctx: RequestContext, name: str, configs: dict[str, str]) -> list[Any]:
    from sandbox.state import Topic

    probe = Topic(name=name, topic_id=ZERO_UUID, partitions=[], configs=configs)
    cc = CreateTopicsResponse.CreatableTopicResult.CreatableTopicConfigs
    out = []
    for key in sorted(C.TOPIC_DEFS):
        value, source = C.topic_value(ctx.state, probe, key, ctx.node.node_id)
        out.append(cc(name=key, value=value, read_only=False, config_source=source, is_sensitive=False))
    return out


@api(CreateTopicsRequest, 2, 7)
def create_topics(ctx: RequestContext, req: Any) -> Any:
    """Create topics (or only validate them), each with its own result."""
    st = ctx.state
    ctr = CreateTopicsResponse.CreatableTopicResult
    names = [t.name for t in req.topics]
    results = []
    done: set[str] = set()
    for t in req.topics:
        if t.name in done:
            continue
        done.add(t.name)
        res = ctr(
            name=t.name,
            topic_id=ZERO_UUID,
            error_code=0,
            error_message=None,
            topic_config_error_code=0,
            num_partitions=-1,
            replication_factor=-1,
            configs=None,
        )
        results.append(res)
        if names.count(t.name) > 1:
            res.error_code, res.error_message = 42, "Duplicate topic name."
            continue
        try:
            assignment, configs = _plan(ctx, t)
        except TopicError as exc:
            res.error_code, res.error_message = exc.code, exc.message
            continue
        policy = ctx.cluster.create_topic_policy
        verdict = policy(t.name, len(assignment), len(assignment[0]), dict(configs)) if policy else None
        if verdict:
            res.error_code, res.error_message = 44, verdict
            continue
        res.num_partitions, res.replication_factor = len(assignment), len(assignment[0])
        res.configs = _created_configs(ctx, t.name, configs)
        if not req.validate_only:
            res.topic_id = st.add_topic(t.name, assignment, configs).topic_id
    return CreateTopicsResponse(version=ctx.version, throttle_time_ms=0, topics=results)


@api(DeleteTopicsRequest, 1, 6)
def delete_topics(ctx: RequestContext, req: Any) -> Any:
    """Delete topics by name (or by id from v6)."""
    st, v = ctx.state, ctx.version
    dr = DeleteTopicsResponse.DeletableTopicResult
    wanted = (
        [(t.name, t.topic_id) for t in req.topics] if v >= 6 else [(n, ZERO_UUID) for n in req.topic_names]
    )
    wanted.sort(key=lambda w: w[0] is not None)  # Kafka answers the by-id entries first
    out = []
    for name, tid in wanted:
        if name is None:
            name = st.topic_ids.get(tid)
            if name is None:
                out.append(
                    dr(
                        name=None,
                        topic_id=tid,
                        error_code=100,
                        error_message="This server does not host this topic ID.",
                    )
                )
                continue
        t = st.topics.get(name)
        if t is None:
            out.append(
                dr(
                    name=name,
                    topic_id=ZERO_UUID,
                    error_code=3,
                    error_message="This server does not host this topic-partition.",
                )
            )
            continue
        st.remove_topic(name)
        out.append(dr(name=name, topic_id=t.topic_id, error_code=0, error_message=None))
    return DeleteTopicsResponse(version=v, throttle_time_ms=0, responses=out)


@api(CreatePartitionsRequest, 0, 3)
def create_partitions(ctx: RequestContext, req: Any) -> Any:
    """Grow topics to a new partition count, with optional assignments for the new partitions."""
    st = ctx.state
    cr = CreatePartitionsResponse.CreatePartitionsTopicResult
    out = []
    names = [t.name for t in req.topics]
    seen: set[str] = set()
    for t in req.topics:
        if t.name in seen:
            continue
        seen.add(t.name)
        res = cr(name=t.name, error_code=0, error_message=None)
        out.append(res)
        topic = st.topics.get(t.name)
        try:
            if names.count(t.name) > 1:
                raise TopicError(42, "Duplicate topic name.")
            if topic is None:
                raise TopicError(3, None)
            have = len(topic.partitions)
            if t.count < have:
                raise TopicError(
                    37,
                    f"The topic {t.name} currently has {have} partition(s); {t.count} "
                    "would not be an increase.",
                )
            if t.count == have:
                raise TopicError(37, f"Topic already has {have} partition(s).")
            add = t.count - have
            if t.assignments is not None:
                if len(t.assignments) != add:
                    raise TopicError(
                        39,
                        f"Attempted to add {add} additional partition(s), but only "
                        f"{len(t.assignments)} assignment(s) were specified.",
                    )
                assignment = [list(a.broker_ids) for a in t.assignments]
                validate_assignment(st, assignment)
                if len(assignment[0]) != topic.replication_factor:
                    raise TopicError(
                        39,
                        f"The manual partition assignment includes a partition with "
                        f"{len(assignment[0])} replica(s), but this is not consistent with "
                        f"previous partitions, which have {topic.replication_factor} replica(s).",
                    )
            else:
                try:
                    assignment = place_replicas(st, add, topic.replication_factor, have)
                except PlacementError as exc:
                    raise TopicError(38, str(exc)) from None
        except TopicError as exc:
            res.error_code, res.error_message = exc.code, exc.message
            continue
        if not req.validate_only:
            from sandbox.state import Partition

            for i, reps in enumerate(assignment):
                live = [b for b in reps if st.brokers[b].up]
                topic.partitions.append(
                    Partition(
                        index=have + i,
                        replicas=reps,
                        isr=live or [reps[0]],
                        leader=live[0] if live else -1,
                        sizes={b: 0.0 for b in reps},
                        topic=t.name,
                    )
                )
                st.index(topic.partitions[-1], add=reps)
            st.touch(t.name)
    return CreatePartitionsResponse(version=ctx.version, throttle_time_ms=0, results=out)
