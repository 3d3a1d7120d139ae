"""Effective access against what Kafka's authorizer really does, user by user.

Needs a SASL listener with an authorizer: ``KAFKA_SASL_BOOTSTRAP_SERVERS`` (kafka-local's
``$BOOTSTRAP_SASL``; PLAIN users ``admin``, ``alice``, ``bob`` with password ``<name>-secret``,
or ``KAFKA_SASL_USERS="name:password,..."``) and the cluster's authorizer settings as its admins
state them in the console (``KAFKA_SUPER_USERS``, ``KAFKA_ALLOW_IF_NO_ACL``; kafka-local's by
default). The sandbox has neither SASL nor an authorizer (every principal may do everything), so
without that variable the test says so and does not run.

For each user and topic the console's verdict for DESCRIBE must equal Kafka's answer to that
user's Metadata request; with the settings unstated, a verdict that depends on them is UNKNOWN,
never "denied".
"""

from __future__ import annotations

import os
import uuid

import pytest

from console.kafka import (
    AclBinding,
    AclBindingFilter,
    ClusterConnection,
    KafkaOperationError,
    NewTopic,
    get_gateway,
)
from console.models import Cluster
from tests.conftest import make_personas
from tests.contract.conftest import describe, eventually

pytestmark = [pytest.mark.contract, pytest.mark.django_db]

SASL = os.environ.get("KAFKA_SASL_BOOTSTRAP_SERVERS", "").strip()
USERS = dict(
    item.split(":", 1)
    for item in os.environ.get(
        "KAFKA_SASL_USERS", "admin:admin-secret,alice:alice-secret,bob:bob-secret"
    ).split(",")
)


def _as_user(name: str):
    return get_gateway(
        ClusterConnection(
            bootstrap_servers=SASL,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_username=name,
            sasl_password=USERS[name],
            request_timeout_s=15,
            connect_timeout_s=5,
        )
    )


def _kafka_allows_describe(name: str, topic: str) -> bool:
    got = _as_user(name).describe_topics([topic])[topic]
    if isinstance(got, KafkaOperationError):
        assert got.name == "TOPIC_AUTHORIZATION_FAILED", got
        return False
    return True


@pytest.mark.skipif(
    not SASL,
    reason="needs a SASL listener with Kafka's authorizer (set KAFKA_SASL_BOOTSTRAP_SERVERS); "
    "the sandbox has no authorizer",
)
def test_effective_access_agrees_with_kafka_for_each_sasl_user(endpoints, gw):
    from console.acls.actions import effective_access

    admin = _as_user("admin")
    open_topic, guarded = (f"ct-ea-{uuid.uuid4().hex[:10]}-{s}" for s in ("open", "guarded"))
    assert all(
        not isinstance(v, KafkaOperationError)
        for v in admin.create_topics([NewTopic(open_topic, 1, 1), NewTopic(guarded, 1, 1)]).values()
    )
    acls = [
        AclBinding("TOPIC", guarded, "LITERAL", "User:alice", "*", "DESCRIBE", "ALLOW"),
        AclBinding("TOPIC", guarded, "LITERAL", "User:bob", "*", "DESCRIBE", "ALLOW"),
        AclBinding("TOPIC", guarded, "LITERAL", "User:bob", "*", "DESCRIBE", "DENY"),
    ]
    try:
        assert all(not isinstance(v, KafkaOperationError) for v in admin.create_acls(acls).values())
        describe(gw, open_topic)
        describe(gw, guarded)
        stated = Cluster.objects.create(
            name="contract",
            bootstrap_servers=endpoints.bootstrap_servers,
            acl_super_users=os.environ.get("KAFKA_SUPER_USERS", "User:ANONYMOUS;User:admin"),
            acl_allow_if_no_acl=os.environ.get("KAFKA_ALLOW_IF_NO_ACL", "true"),
        )
        actor = make_personas(stated)["admin"]

        def verdict(cluster, user, topic):
            found = effective_access(
                actor=actor,
                cluster=cluster,
                principal=f"User:{user}",
                resource_type="TOPIC",
                resource_name=topic,
            )
            return next(o for o in found.operations if o.operation == "DESCRIBE")

        checked = []
        for user in ("admin", "alice", "bob"):
            for topic in (open_topic, guarded):
                truth = eventually(  # ACLs reach every broker asynchronously
                    lambda u=user, t=topic: _kafka_allows_describe(u, t),
                    lambda allowed, u=user, t=topic: allowed == (u != "bob" or t != guarded),
                    timeout=15,
                )
                said = verdict(stated, user, topic)
                checked.append((user, topic.rsplit("-", 1)[1], said.outcome, truth))
                assert said.allowed is truth, checked
        assert ("bob", "guarded", "DENIED", False) in checked and (
            "admin",
            "guarded",
            "SUPER_USER",
            True,
        ) in checked

        unstated = Cluster.objects.create(
            name="contract-unstated", bootstrap_servers=endpoints.bootstrap_servers
        )
        assert verdict(unstated, "bob", open_topic).outcome == "UNKNOWN"  # never "denied" on a guess
        unknown = verdict(unstated, "bob", guarded)  # even a DENY yields to a super user
        assert unknown.outcome == "UNKNOWN" and "super.users" in unknown.note
    finally:
        admin.delete_acls(
            [AclBindingFilter(resource_type="TOPIC", resource_name=guarded, pattern_type="LITERAL")]
        )
        admin.delete_topics([open_topic, guarded])


@pytest.mark.skipif(
    not SASL,
    reason="needs a SASL listener with Kafka's authorizer (set KAFKA_SASL_BOOTSTRAP_SERVERS); "
    "the sandbox has no authorizer",
)
def test_it_gives_the_verdict_kafka_gives_a_client_from_an_address_a_binding_names(endpoints, gw):
    """alice may DESCRIBE from any host but not from 127.0.0.1, where this test connects from: asked
    for any host, the console says so, and its verdict for 127.0.0.1 is what Kafka answers alice."""
    from console.acls.actions import effective_access

    admin = _as_user("admin")
    topic = f"ct-ea-{uuid.uuid4().hex[:10]}-hosted"
    assert not isinstance(admin.create_topics([NewTopic(topic, 1, 1)])[topic], KafkaOperationError)
    allow = AclBinding("TOPIC", topic, "LITERAL", "User:alice", "*", "DESCRIBE", "ALLOW")
    deny = AclBinding("TOPIC", topic, "LITERAL", "User:alice", "127.0.0.1", "DESCRIBE", "DENY")
    try:
        assert all(not isinstance(v, KafkaOperationError) for v in admin.create_acls([allow, deny]).values())
        describe(gw, topic)
        truth = eventually(lambda: _kafka_allows_describe("alice", topic), lambda a: a is False, timeout=15)
        cluster = Cluster.objects.create(
            name="contract-hosts",
            bootstrap_servers=endpoints.bootstrap_servers,
            acl_super_users=os.environ.get("KAFKA_SUPER_USERS", "User:ANONYMOUS;User:admin"),
            acl_allow_if_no_acl=os.environ.get("KAFKA_ALLOW_IF_NO_ACL", "true"),
        )
        found = effective_access(
            actor=make_personas(cluster)["admin"],
            cluster=cluster,
            principal="User:alice",
            resource_type="TOPIC",
            resource_name=topic,
        )
        said = next(o for o in found.operations if o.operation == "DESCRIBE")
        assert found.hosts == ["127.0.0.1"] and deny in found.applying
        assert [(h.host, h.outcome, h.allowed) for h in said.hosts] == [("127.0.0.1", "DENIED", truth)]
        assert said.verdict == "allowed from any host except 127.0.0.1: denied by a DENY"
    finally:
        admin.delete_acls(
            [AclBindingFilter(resource_type="TOPIC", resource_name=topic, pattern_type="LITERAL")]
        )
        admin.delete_topics([topic])
