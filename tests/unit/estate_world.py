"""A namespace of topics and an ACL on the sandbox, for the estate's tests."""

from __future__ import annotations

import uuid

from console.clusters.actions import gateway_for
from console.kafka import AclBinding
from console.topics import actions as topics
from console.topics.batch import TopicSpec


def make_namespace(personas, cluster, count: int) -> str:
    """``count`` one-partition topics in a new namespace (one batched call), every tenth with a
    retention override, and one PREFIXED read ACL on the namespace."""
    ns = f"e{uuid.uuid4().hex[:8]}."
    specs = [
        TopicSpec(f"{ns}t{i:03d}", 1, 1, configs={"retention.ms": "86400000"} if i % 10 == 0 else {})
        for i in range(count)
    ]
    done = topics.create_topics(actor=personas["operator"], cluster=cluster, specs=specs)
    assert all(o.ok for o in done.outcomes)
    gateway_for(cluster).create_acls([AclBinding("TOPIC", ns, "PREFIXED", "User:app", "*", "READ", "ALLOW")])
    return ns
