"""The group API requests the consumer-group tests and ``group_probe`` both send.

``heartbeat``: a ConsumerGroupHeartbeat as a joining consumer-protocol member sends it (no member
id, epoch 0, a 30 s rebalance timeout, subscribed to one topic, owning nothing), any field
overridden; ``offset_commit``: an OffsetCommit of one partition's offset, by default from outside
the group (generation -1, no member, as an admin client commits).
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.consumer import OffsetCommitRequest

from sandbox.protocol import ConsumerGroupHeartbeatRequest


def heartbeat(group: str, topic: str, **fields: Any) -> Any:
    values: dict[str, Any] = {
        "group_id": group,
        "member_id": "",
        "member_epoch": 0,
        "instance_id": None,
        "rack_id": None,
        "rebalance_timeout_ms": 30000,
        "subscribed_topic_names": [topic],
        "subscribed_topic_regex": None,
        "server_assignor": None,
        "topic_partitions": [],
    }
    values.update(fields)
    return ConsumerGroupHeartbeatRequest(**values)


def offset_commit(group: str, topic: str, partition: int, offset: int, **member: Any) -> Any:
    """``member``: generation_id_or_member_epoch, member_id, group_instance_id (outside the group by default)."""
    t = OffsetCommitRequest.OffsetCommitRequestTopic
    fields: dict[str, Any] = {"generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None}
    fields.update(member)
    part = t.OffsetCommitRequestPartition(
        partition_index=partition, committed_offset=offset, committed_leader_epoch=-1, committed_metadata=""
    )
    return OffsetCommitRequest(group_id=group, topics=[t(name=topic, partitions=[part])], **fields)
