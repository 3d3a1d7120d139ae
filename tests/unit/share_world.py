"""The share groups tests' world on the sandbox: share.version on, a 2-partition topic, a share group
with one member (joined by ShareGroupHeartbeat) and 5 records on partition 0 produced after it joined
(``make_world``: the body of the area's and the doors' ``world`` fixtures)."""

from __future__ import annotations

import uuid

from console.clusters.actions import gateway_for
from console.kafka import NewTopic
from tests.share_members import ShareMembers


def enable_share(sandbox) -> None:
    with sandbox.state.lock:
        sandbox.state.features["share.version"] = 1
        sandbox.state.features_epoch += 1


def disable_share(sandbox) -> None:
    """Back to Kafka 4.1's default (share.version 0, not finalized)."""
    with sandbox.state.lock:
        sandbox.state.features.pop("share.version", None)
        sandbox.state.features_epoch += 1


def make_world(kafka_cluster, sandbox):
    enable_share(sandbox)
    gw = gateway_for(kafka_cluster)
    topic, group = f"sh-{uuid.uuid4().hex[:8]}", f"sg-{uuid.uuid4().hex[:8]}"
    gw.create_topics([NewTopic(topic, 2, 1, None, {})])
    members = ShareMembers(sandbox.bootstrap_servers)
    member = members.join(group, [topic])
    for i in range(5):
        gw.produce_record(topic, partition=0, key=None, value=f"r{i}".encode())
    yield {"topic": topic, "group": group, "member": member, "members": members, "gw": gw}
    members.close()
    gw.delete_topics([topic])
    disable_share(sandbox)


def empty_group(sandbox, cluster) -> tuple[str, str]:
    """share.version on, a new topic and an Empty share group with share state on it (a member joined
    and left): (group id, topic) - what a valid share-groups API request names (the matrices' builders).
    share.version stays on: ``disable_share`` puts Kafka 4.1's default back."""
    enable_share(sandbox)
    gw = gateway_for(cluster)
    topic, group = f"sh-{uuid.uuid4().hex[:8]}", f"sg-{uuid.uuid4().hex[:8]}"
    gw.create_topics([NewTopic(topic, 1, 1, None, {})])
    members = ShareMembers(sandbox.bootstrap_servers)
    try:
        members.leave(group, members.join(group, [topic]))
    finally:
        members.kp.admin.close()
    return group, topic
