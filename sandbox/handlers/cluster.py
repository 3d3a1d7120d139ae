"""DescribeCluster (KIP-919 endpoint types) and DescribeQuorum (UpdateFeatures: ``kraft``)."""

from __future__ import annotations

import uuid
from typing import Any

from kafka.protocol.admin import (
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
)

from sandbox.apis import RequestContext, api
from sandbox.handlers.kraft import registered, voter_ids
from sandbox.handlers.meta import CLUSTER_OPS, metadata_controller_id

NOT_LEADER = (
    "For requests intended only for the leader, this error indicates that the broker is not the current "
    "leader. For requests intended for any replica, this error indicates that the broker is not a "
    "replica of the topic partition."
)
MISMATCH = "The request was sent to an endpoint of type {}, but we wanted an endpoint of type {}"


@api(DescribeClusterRequest, 0, 2, controller=True)
def describe_cluster(ctx: RequestContext, req: Any) -> Any:
    """KIP-919: brokers answer endpoint type 1 with brokers, controllers type 2 with voters."""
    st, node = ctx.state, ctx.node
    mine = 2 if node.is_controller else 1
    wanted = req.endpoint_type if ctx.version >= 1 else 1
    dc = DescribeClusterResponse
    if wanted != mine:
        names = {1: "BROKER", 2: "CONTROLLER"}
        return dc(
            version=ctx.version,
            throttle_time_ms=0,
            endpoint_type=mine,
            error_code=114 if ctx.version >= 1 else 42,
            cluster_id="",
            controller_id=-1,
            error_message=MISMATCH.format(names[mine], names.get(wanted, "UNKNOWN")),
            brokers=[],
            authorized_operations=None,
        )
    if node.is_controller:
        nodes = list(st.controllers.values())
        controller = st.active_controller
    else:
        nodes = [n for n in st.brokers.values() if n.up or (req.include_fenced_brokers and registered(st, n))]
        controller = metadata_controller_id(st)
    return dc(
        version=ctx.version,
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        endpoint_type=mine,
        cluster_id=st.cluster_id,
        controller_id=controller,
        brokers=[
            dc.DescribeClusterBroker(
                broker_id=n.node_id, host=n.host, port=n.port, rack=n.rack, is_fenced=not n.up
            )
            for n in nodes
        ],
        authorized_operations=CLUSTER_OPS if req.include_cluster_authorized_operations else None,
    )


def _dir_id(node_id: int) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_OID, f"sandbox-dir-{node_id}")


@api(DescribeQuorumRequest, 0, 2, controller=True)
def describe_quorum(ctx: RequestContext, req: Any) -> Any:
    """The KRaft quorum: voters are the controllers, observers the brokers."""
    st, v = ctx.state, ctx.version
    dq = DescribeQuorumResponse
    ps = dq.TopicData.PartitionData

    def rs(n: Any) -> Any:
        return ps.ReplicaState(
            replica_id=n.node_id,
            replica_directory_id=_dir_id(n.node_id),
            log_end_offset=n.log_end_offset,
            last_fetch_timestamp=n.last_fetch_ms,
            last_caught_up_timestamp=n.last_caught_up_ms,
        )

    msg = "" if v >= 2 else None
    topics = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            if t.topic_name != "__cluster_metadata" or p.partition_index != 0:
                parts.append(
                    ps(
                        partition_index=p.partition_index,
                        error_code=3,
                        error_message=msg,
                        leader_id=-1,
                        leader_epoch=-1,
                        high_watermark=-1,
                        current_voters=[],
                        observers=[],
                    )
                )
                continue
            if ctx.node.is_controller and ctx.node.node_id != st.active_controller:
                parts.append(
                    ps(
                        partition_index=0,
                        error_code=6,
                        error_message=NOT_LEADER if v >= 2 else None,
                        leader_id=0,
                        leader_epoch=0,
                        high_watermark=0,
                        current_voters=[],
                        observers=[],
                    )
                )
                continue
            leader = st.active_controller
            hw = st.controllers[leader].log_end_offset if leader in st.controllers else -1
            parts.append(
                ps(
                    partition_index=0,
                    error_code=0,
                    error_message=msg,
                    leader_id=leader,
                    leader_epoch=st.quorum_epoch,
                    high_watermark=hw,
                    current_voters=[rs(st.controllers[c]) for c in voter_ids(st)],
                    observers=[
                        rs(n)
                        for n in [*st.controllers.values(), *st.brokers.values()]
                        if n.up and (not n.is_controller or n.node_id in st.removed_voters)
                    ],
                )
            )
        topics.append(dq.TopicData(topic_name=t.topic_name, partitions=parts))
    nodes = [
        dq.Node(node_id=n.node_id, listeners=[dq.Node.Listener(name="CONTROLLER", host=n.host, port=n.port)])
        for n in (st.controllers[c] for c in voter_ids(st))
    ]
    if ctx.node.is_controller and ctx.node.node_id != st.active_controller:
        nodes = []  # an inactive controller does not describe the quorum
    return dq(version=v, error_code=0, error_message=msg, topics=topics, nodes=nodes)
