"""Drift detection against Kafka: a topic config and an ACL changed outside the console (here straight
through the admin protocol, as kafka-configs.sh and kafka-acls.sh do) are external-change audit events
after the next snapshot; the first snapshot records only the baseline. Passes on the sandbox and on a
real Kafka shared with others (only this test's own ``drift.`` resources are asserted on)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import pytest

from console.acls import core as acl_core
from console.drift import audit_names
from console.kafka import (
    AclBinding,
    AclBindingFilter,
    ConfigChange,
    ConfigResource,
    KafkaOperationError,
    NewTopic,
)
from console.models import AuditEvent, Cluster
from console.system_actor import SYSTEM_USERNAME
from console.telemetry import snapshots

from .conftest import describe, eventually, unique

pytestmark = [pytest.mark.contract, pytest.mark.django_db]
T0 = datetime(2026, 5, 4, 12, 0, 0, tzinfo=UTC)


def _events(targets: set[str]) -> list[AuditEvent]:
    return [
        e
        for e in AuditEvent.objects.filter(action=audit_names.EXTERNAL_CHANGE).order_by("id")
        if set(e.targets) & targets
    ]


def _override(gw, res: ConfigResource) -> str | None:
    entries = gw.describe_configs([res], include_documentation=False, keys=["retention.ms"])[res]
    if isinstance(entries, KafkaOperationError) or "retention.ms" not in entries:
        return None
    entry = entries["retention.ms"]
    return entry.value if entry.source == "DYNAMIC_TOPIC_CONFIG" else None


def test_a_config_and_an_acl_changed_outside_the_console_are_external_changes(gw, endpoints, telemetry_lake):
    name = unique("drift.ct")
    res = ConfigResource("TOPIC", name)
    binding = AclBinding("TOPIC", name, "LITERAL", f"User:{unique('drift')}", "*", "READ", "ALLOW")
    label = acl_core.label(binding)
    assert not isinstance(gw.create_topics([NewTopic(name, 1, 1)])[name], KafkaOperationError)
    cluster = Cluster.objects.create(name="drift-contract", bootstrap_servers=endpoints.bootstrap_servers)
    try:
        describe(gw, name)
        first = snapshots.collect_for(cluster, now=T0)
        assert not isinstance(first, str), first
        assert _events({f"topic:{name}", f"acl:{label}"}) == []  # the first look is the baseline

        assert not isinstance(
            gw.incremental_alter_configs({res: [ConfigChange("retention.ms", "SET", "3600000")]})[res],
            KafkaOperationError,
        )
        assert not isinstance(gw.create_acls([binding])[binding], KafkaOperationError)
        eventually(lambda: _override(gw, res), lambda v: v == "3600000")
        assert gw.topic_overrides([name]) == {name: {"retention.ms": "3600000"}}  # drift's own read
        eventually(lambda: gw.describe_acls(AclBindingFilter(principal=binding.principal)))
        second = snapshots.collect_for(cluster, now=T0 + timedelta(minutes=5))
        assert not isinstance(second, str), second

        config_event, acl_event = _events({f"topic:{name}", f"acl:{label}"})
        assert (config_event.actor_name, config_event.cluster_name, config_event.targets) == (
            SYSTEM_USERNAME,
            "drift-contract",
            [f"topic:{name}"],
        )
        assert config_event.params == {
            "resource_type": "topic_config",
            "resource": name,
            "change": "altered",
            "before": {},
            "after": {"retention.ms": "3600000"},
            "note": "not made through the console",
        }
        assert (acl_event.actor_name, acl_event.targets) == (SYSTEM_USERNAME, [f"acl:{label}"])
        assert acl_event.params == {
            "resource_type": "acl",
            "resource": label,
            "change": "created",
            "before": None,
            "after": asdict(binding),
            "note": "not made through the console",
        }
    finally:
        gw.delete_acls([AclBindingFilter(principal=binding.principal)])
        gw.delete_topics([name])


def _set_quota(endpoints, user: str, value: float | None) -> None:
    """A user's producer_byte_rate set (or removed: None) through the admin protocol, as
    ``kafka-configs.sh --alter --entity-type users`` does (a raw client: the console has no quota change)."""
    from kafka.protocol.admin import AlterClientQuotasRequest

    from bench.raw_clients import KpRaw

    R = AlterClientQuotasRequest
    entry = R.EntryData(
        entity=[R.EntryData.EntityData(entity_type="user", entity_name=user)],
        ops=[R.EntryData.OpData(key="producer_byte_rate", value=value or 0.0, remove=value is None)],
    )
    raw = KpRaw(endpoints.bootstrap_servers)
    try:
        answer = raw.send(AlterClientQuotasRequest(entries=[entry], validate_only=False))
        assert [e.error_code for e in answer.entries] == [0]
    finally:
        raw.close()


def test_a_client_quota_changed_outside_the_console_is_an_external_change(gw, endpoints, telemetry_lake):
    user = unique("drift.quota")
    cluster = Cluster.objects.create(name="drift-quotas", bootstrap_servers=endpoints.bootstrap_servers)
    try:
        assert not isinstance(snapshots.collect_for(cluster, now=T0), str)
        _set_quota(endpoints, user, 1048576.0)
        eventually(gw.client_quotas, lambda q: f"user={user}" in q)
        assert not isinstance(snapshots.collect_for(cluster, now=T0 + timedelta(minutes=5)), str)
        (event,) = _events({f"quota:user={user}"})
        assert (event.actor_name, event.targets) == (SYSTEM_USERNAME, [f"quota:user={user}"])
        assert event.params == {
            "resource_type": "quota",
            "resource": f"user={user}",
            "change": "created",
            "before": None,
            "after": {"producer_byte_rate": 1048576.0},
            "note": "not made through the console",
        }
    finally:
        _set_quota(endpoints, user, None)
