"""Share-group members for tests, the same on the sandbox and on a real Kafka 4.1: a KIP-932 member
joins with ShareGroupHeartbeat (epoch 0, a client-chosen member id, its subscribed topics) at the
group's coordinator and leaves with epoch -1, as a share consumer does (the raw request through
kafka-python's own connection manager; the message class is the sandbox's description of Kafka 4.1's
layout). Kafka keeps a member 45 s without a heartbeat, far longer than a test needs it."""

from __future__ import annotations

import time
import uuid

from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest

from bench.raw_clients import KpRaw
from sandbox.protocol.share import ShareGroupHeartbeatRequest


class ShareMembers:
    def __init__(self, bootstrap: str) -> None:
        self.kp = KpRaw(bootstrap)
        self.joined: list[tuple[str, str, int]] = []

    def coordinator(self, group: str) -> int:
        return (
            self.kp.send(FindCoordinatorRequest(key_type=0, coordinator_keys=[group], min_version=4))
            .coordinators[0]
            .node_id
        )

    def join(self, group: str, topics: list[str]) -> str:
        member = uuid.uuid4().hex[:22]
        node = self.coordinator(group)
        got = self.kp.send(
            ShareGroupHeartbeatRequest(
                group_id=group, member_id=member, member_epoch=0, rack_id=None, subscribed_topic_names=topics
            ),
            node,
        )
        assert got.error_code == 0, (got.error_code, got.error_message)
        self.joined.append((group, member, node))
        # Kafka computes the assignment after the join and hands it over on a later heartbeat (as a
        # share consumer heartbeats every few seconds): beat until the member has its partitions
        deadline = time.monotonic() + 20
        while not (got.assignment and got.assignment.topic_partitions) and time.monotonic() < deadline:
            time.sleep(0.3)
            got = self.kp.send(
                ShareGroupHeartbeatRequest(
                    group_id=group,
                    member_id=member,
                    member_epoch=got.member_epoch,
                    rack_id=None,
                    subscribed_topic_names=None,
                ),
                node,
            )
            assert got.error_code == 0, (got.error_code, got.error_message)
        return member

    def leave(self, group: str, member: str) -> None:
        node = self.coordinator(group)
        self.kp.send(
            ShareGroupHeartbeatRequest(
                group_id=group, member_id=member, member_epoch=-1, rack_id=None, subscribed_topic_names=None
            ),
            node,
        )
        self.joined = [j for j in self.joined if j[1] != member]

    def leave_all(self) -> None:
        for group, member, _ in list(self.joined):
            self.leave(group, member)

    def close(self) -> None:
        self.leave_all()
        self.kp.admin.close()
