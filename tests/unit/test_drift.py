"""Drift detection: changes made to the sandbox behind the console's back (straight through a gateway,
with no audit event) become "external change" audit events at the next snapshot; the console's own
changes in between, also one in flight while the snapshot reads Kafka, do not."""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import pytest

from console.acls import actions as acls
from console.acls import core as acl_core
from console.audit import outcomes
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.drift import audit_names, observe, store
from console.kafka import (
    AclBinding,
    AclBindingFilter,
    ConfigChange,
    ConfigResource,
    KafkaOperationError,
    NewPartitions,
    NewTopic,
    TopicPartition,
)
from console.models import (
    AuditEvent,
    DriftBaseline,
    NotificationChannel,
    NotificationDelivery,
    OperationState,
)
from console.notify import events as notify_events
from console.system_actor import SYSTEM_USERNAME
from console.telemetry import snapshots
from console.topics import actions as topics
from console.topics import delete as topic_delete
from console.topics.batch import TopicSpec
from tests.conftest import run_now
from tests.unit.reassign_world import clear_throttles, make_topic, start

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 5, 4, 12, 0, 0, tzinfo=UTC)
NOTE = "not made through the console"


@pytest.fixture
def world(kafka_cluster, personas, telemetry_lake):
    """The sandbox registered, the personas, and a first look taken (the baseline)."""
    w = World(kafka_cluster, personas)
    w.look()
    return w


class World:
    def __init__(self, cluster, personas):
        self.cluster, self.people, self.gw = cluster, personas, gateway_for(cluster)
        self.looks = 0
        self.seen = 0

    def look(self) -> list[AuditEvent]:
        """One scheduled snapshot (as beat takes it); the external-change events it recorded."""
        self.looks += 1
        result = snapshots.collect_for(self.cluster, now=NOW + timedelta(minutes=5 * self.looks))
        assert not isinstance(result, str) and not result.skipped and result.errors == ()
        events = list(
            AuditEvent.objects.filter(action=audit_names.EXTERNAL_CHANGE, id__gt=self.seen).order_by("id")
        )
        self.seen = max([self.seen] + [e.id for e in events])
        return events

    def topic(self, partitions: int = 2, configs: dict | None = None) -> str:
        name = f"drift-{uuid.uuid4().hex[:8]}"
        outcome = self.gw.create_topics([NewTopic(name, partitions, 2, configs=configs or {})])
        assert not isinstance(outcome[name], KafkaOperationError)
        return name

    def set_config(self, name: str, *changes: ConfigChange) -> None:
        res = ConfigResource("TOPIC", name)
        assert not isinstance(
            self.gw.incremental_alter_configs({res: list(changes)})[res], KafkaOperationError
        )


def details(resource_type, resource, change, before, after) -> dict:
    return {
        "resource_type": resource_type,
        "resource": resource,
        "change": change,
        "before": before,
        "after": after,
        "note": NOTE,
    }


def summary(event: AuditEvent) -> tuple:
    return (event.actor_name, event.cluster_name, event.targets, event.outcome, event.params)


def test_it_records_only_a_baseline_on_the_first_look(kafka_cluster, telemetry_lake):
    name = f"drift-{uuid.uuid4().hex[:8]}"
    gateway_for(kafka_cluster).create_topics([NewTopic(name, 1, 1)])
    World(kafka_cluster, {}).look()

    assert AuditEvent.objects.filter(action=audit_names.EXTERNAL_CHANGE).count() == 0
    row = DriftBaseline.objects.get(cluster=kafka_cluster)
    state = store.decode(row.state)
    assert state["topics"][name] == [1, 1, {}]
    assert row.topics == len(state["topics"]) and not any(t.startswith("__") for t in state["topics"])


def test_it_records_a_topic_created_then_deleted_outside_the_console(world):
    name = world.topic(partitions=2, configs={"retention.ms": "3600000"})
    (created,) = world.look()
    whole = {"partitions": 2, "replication_factor": 2, "configs": {"retention.ms": "3600000"}}
    assert summary(created) == (
        SYSTEM_USERNAME,
        "sandbox",
        [f"topic:{name}"],
        "success",
        details("topic", name, "created", None, whole),
    )
    assert (created.before, created.after) == (None, whole)

    world.gw.delete_topics([name])
    (deleted,) = world.look()
    assert summary(deleted) == (
        SYSTEM_USERNAME,
        "sandbox",
        [f"topic:{name}"],
        "success",
        details("topic", name, "deleted", whole, None),
    )
    assert world.look() == []  # the next look has nothing new


def test_it_records_partitions_added_outside_the_console(world):
    name = world.topic(partitions=2)
    world.look()
    world.gw.create_partitions([NewPartitions(name, 5)])
    (event,) = world.look()
    assert event.params == details(
        "topic",
        name,
        "altered",
        {"partitions": 2, "replication_factor": 2},
        {"partitions": 5, "replication_factor": 2},
    )
    assert event.targets == [f"topic:{name}"]


def test_it_records_a_config_override_added_changed_and_removed(world):
    name = world.topic()
    world.look()
    steps = [
        (ConfigChange("retention.ms", "SET", "60000"), {}, {"retention.ms": "60000"}),
        (
            ConfigChange("retention.ms", "SET", "120000"),
            {"retention.ms": "60000"},
            {"retention.ms": "120000"},
        ),
        (ConfigChange("retention.ms", "DELETE"), {"retention.ms": "120000"}, {}),
    ]
    for change, before, after in steps:
        world.set_config(name, change)
        (event,) = world.look()
        assert summary(event) == (
            SYSTEM_USERNAME,
            "sandbox",
            [f"topic:{name}"],
            "success",
            details("topic_config", name, "altered", before, after),
        )
        assert (event.before, event.after) == (before, after)


def test_it_records_an_acl_added_and_removed_outside_the_console(world):
    binding = AclBinding(
        "TOPIC", f"drift-{uuid.uuid4().hex[:6]}", "LITERAL", "User:mallory", "*", "READ", "ALLOW"
    )
    label = acl_core.label(binding)
    world.gw.create_acls([binding])
    (added,) = world.look()
    assert summary(added) == (
        SYSTEM_USERNAME,
        "sandbox",
        [f"acl:{label}"],
        "success",
        details("acl", label, "created", None, asdict(binding)),
    )
    world.gw.delete_acls([AclBindingFilter("TOPIC", binding.resource_name, "LITERAL", "User:mallory")])
    (removed,) = world.look()
    assert removed.params == details("acl", label, "deleted", asdict(binding), None)


def test_the_consoles_own_changes_are_not_external(world):
    admin = world.people["admin"]
    name = f"drift-{uuid.uuid4().hex[:8]}"
    binding = AclBinding("TOPIC", name, "LITERAL", "User:alice", "*", "WRITE", "ALLOW")
    topics.create_topics(
        actor=admin, cluster=world.cluster, specs=[TopicSpec(name, 2, 2, configs={"retention.ms": "60000"})]
    )
    acls.change_acls(actor=admin, cluster=world.cluster, creates=[binding])
    assert world.look() == []

    topics.add_partitions(actor=admin, cluster=world.cluster, topic=name, total_count=4)
    configs.alter_configs(
        actor=admin,
        cluster=world.cluster,
        resource=ConfigResource("TOPIC", name),
        changes=[ConfigChange("retention.ms", "SET", "90000")],
    )
    acls.change_acls(actor=admin, cluster=world.cluster, deletes=[binding])
    assert world.look() == []

    topic_delete.delete_topics(actor=admin, cluster=world.cluster, names=[name], confirmation=name)
    assert world.look() == []
    assert AuditEvent.objects.filter(action=audit_names.EXTERNAL_CHANGE).count() == 0


def test_the_consoles_quota_changes_are_not_external_and_one_made_outside_is(world):
    from console.kafka.quotas import QuotaAlteration
    from console.quotas import actions as quotas
    from console.quotas import core as quota_core

    admin, user = world.people["admin"], f"drift-{uuid.uuid4().hex[:8]}"
    world.look()
    mine = quota_core.entity_of(user=user, client_id="<default>")  # a look keys it client-id=...,user=...
    assert quotas.alter_quotas(
        actor=admin, cluster=world.cluster, entity=mine, changes={"producer_byte_rate": 4096}
    ).ok
    assert world.look() == []
    other = quota_core.entity_of(user=user + "-x")
    world.gw.alter_client_quotas([QuotaAlteration(other.parts, {"consumer_byte_rate": 1024.0})])
    (outside,) = world.look()
    assert outside.params["resource"] == f"user={user}-x" and outside.params["change"] == "created"
    assert quotas.alter_quotas(
        actor=admin, cluster=world.cluster, entity=mine, changes={"producer_byte_rate": None}
    ).ok
    world.gw.alter_client_quotas([QuotaAlteration(other.parts, {"consumer_byte_rate": None})])
    (removed,) = world.look()
    assert removed.params["resource"] == f"user={user}-x" and removed.params["change"] == "deleted"


def test_a_console_change_in_flight_during_a_look_is_not_external(world):
    """Its "requested" event is written before Kafka acts; the outcome may come after the look."""
    name = world.topic()
    world.look()
    outcomes.requested(
        actor=world.people["operator"],
        action="config.alter",
        cluster=world.cluster,
        targets=[f"topic:{name}"],
        params={"changes": [["SET", "retention.ms", "70000"]]},
    )
    world.set_config(name, ConfigChange("retention.ms", "SET", "70000"))  # Kafka acts; no outcome yet
    assert world.look() == []
    # ... but a change to another aspect of the same topic in that interval is still external
    world.gw.create_partitions([NewPartitions(name, 3)])
    (event,) = world.look()
    assert (event.params["resource_type"], event.params["change"]) == ("topic", "altered")


def test_a_console_change_to_one_topic_does_not_hide_an_outside_change_to_another(world):
    mine, theirs = world.topic(), world.topic()
    world.look()
    configs.alter_configs(
        actor=world.people["operator"],
        cluster=world.cluster,
        resource=ConfigResource("TOPIC", mine),
        changes=[ConfigChange("retention.ms", "SET", "80000")],
    )
    world.set_config(theirs, ConfigChange("retention.ms", "SET", "80000"))
    (event,) = world.look()
    assert event.targets == [f"topic:{theirs}"]


def test_subscribed_channels_are_told(world):
    channel = NotificationChannel.objects.create(
        cluster=world.cluster,
        name="ops",
        kind="webhook",
        events=[notify_events.DRIFT_EXTERNAL_CHANGE],
    )
    name = world.topic()
    world.look()
    (delivery,) = NotificationDelivery.objects.filter(channel=channel)
    assert delivery.event == notify_events.DRIFT_EXTERNAL_CHANGE
    assert name in delivery.payload["text"] and delivery.payload["details"]["count"] == 1


def test_a_look_that_cannot_read_kafka_keeps_the_baseline(world, monkeypatch):
    name = world.topic()

    def broken(*args, **kwargs):
        raise KafkaOperationError(7, "REQUEST_TIMED_OUT", "timed out")

    before = DriftBaseline.objects.get(cluster=world.cluster).taken_at
    with monkeypatch.context() as patched:
        patched.setattr(type(world.gw), "list_partition_reassignments", broken)
        assert world.look() == []  # the snapshot itself is taken
    assert DriftBaseline.objects.get(cluster=world.cluster).taken_at == before
    (event,) = world.look()
    assert event.targets == [f"topic:{name}"]


def test_the_console_change_names_are_the_areas_own():
    from console.acls import audit_names as acl_names
    from console.configs import audit_names as config_names
    from console.quotas import audit_names as quota_names
    from console.reassignment import audit_names as move_names
    from console.topics import audit_names as topic_names

    assert set(observe.CONSOLE_CHANGES) == {
        topic_names.TOPIC_CREATE,
        topic_names.TOPIC_DELETE,
        topic_names.TOPIC_PARTITIONS_ADD,
        config_names.CONFIG_ALTER,
        acl_names.ACL_CREATE,
        acl_names.ACL_DELETE,
        acl_names.ACL_CHANGE,
        move_names.REASSIGNMENT_START,
        move_names.REASSIGNMENT_CANCEL,
        move_names.EXTERNAL_CANCEL,
        move_names.THROTTLE_SET,
        move_names.THROTTLE_REMOVE,
        move_names.THROTTLE_CLEANUP,
        quota_names.QUOTA_ALTER,
    }


def _settled(world, name: str) -> None:
    """Wait until Kafka lists no reassignment of the topic (an empty topic's moves end at once)."""
    deadline = time.monotonic() + 10
    while any(tp.topic == name for tp in world.gw.list_partition_reassignments()):
        assert time.monotonic() < deadline, "the move did not finish"
        time.sleep(0.05)


def test_a_replica_move_is_not_drift_but_a_replication_factor_change_is(world):
    name = world.topic(partitions=1)
    world.look()
    current = world.gw.describe_topics([name])[name].partitions[0].replicas
    spare = next(b for b in (1, 2, 3) if b not in current)
    world.gw.alter_partition_reassignments({TopicPartition(name, 0): (spare, current[0])})  # same RF 2
    _settled(world, name)
    assert world.look() == []
    world.gw.alter_partition_reassignments({TopicPartition(name, 0): (1, 2, 3)})  # RF 3
    _settled(world, name)
    (event,) = world.look()
    assert event.params == details(
        "topic",
        name,
        "altered",
        {"partitions": 1, "replication_factor": 2},
        {"partitions": 1, "replication_factor": 3},
    )


def test_a_console_reassignment_under_throttle_is_not_external(world, frozen):
    """While it moves, Kafka lists the adding replica (RF looks 3) and the topic has the console's
    throttle configs; after, the replicas moved and the throttles are gone: none of it is drift."""
    topic = make_topic(frozen, [[1, 2]])
    world.look()  # the topic made straight on the sandbox: its creation is external
    op, moving = start(world.people, world.cluster, {(topic, 0): (1, 3)})
    try:
        run_now(op.pk)
        assert topic in {tp.topic for tp in world.gw.list_partition_reassignments()}
        assert world.look() == []
        frozen.advance(30)
        run_now(moving.operation_id)
        op.refresh_from_db()
        assert op.state == OperationState.SUCCEEDED, op.error
        assert world.look() == []
    finally:
        clear_throttles(frozen)
