"""A namespace of topics and an ACL on the sandbox, for the estate's tests."""

from __future__ import annotations

import uuid

import pytest

from console.clusters.actions import gateway_for
from console.kafka import AclBinding
from console.topics import actions as topics
from console.topics.batch import TopicSpec

MADE: list[str] = []  # the namespaces made by the running test (dropped after it: drop_namespaces)


def make_namespace(personas, cluster, count: int) -> str:
    """``count`` one-partition topics in a new namespace (one batched call), every tenth with a
    retention override, and one PREFIXED read ACL on the namespace."""
    ns = f"e{uuid.uuid4().hex[:8]}."
    MADE.append(ns)
    specs = [
        TopicSpec(f"{ns}t{i:03d}", 1, 1, configs={"retention.ms": "86400000"} if i % 10 == 0 else {})
        for i in range(count)
    ]
    done = topics.create_topics(actor=personas["operator"], cluster=cluster, specs=specs)
    assert all(o.ok for o in done.outcomes)
    gateway_for(cluster).create_acls([AclBinding("TOPIC", ns, "PREFIXED", "User:app", "*", "READ", "ALLOW")])
    return ns


@pytest.fixture(autouse=True)
def drop_namespaces(sandbox):
    """After each test, the topics and ACLs of the namespaces it made leave the session's sandbox:
    500 topics left behind made every later test that reads the whole cluster (topic lists, the
    hostile-input snapshots) slower for the rest of the run."""
    MADE.clear()
    yield
    prefixes = tuple(MADE)
    MADE.clear()
    if not prefixes:
        return
    s = sandbox.state
    with s.lock:
        for name in [n for n in s.topics if n.startswith(prefixes)]:
            s.remove_topic(name)
        s.acls = [a for a in s.acls if not a.resource_name.startswith(prefixes)]
        s.record()
