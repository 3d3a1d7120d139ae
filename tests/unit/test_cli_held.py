"""``manage.py kafka``: an action the cluster's change control holds goes through the same door as
pages and API (console/changes/door.py): refused without a choice, submitted for approval with
``--submit-for-approval``, run at once by an admin with ``--break-glass``."""

from __future__ import annotations

import json
import uuid

import pytest

from console.clusters.actions import gateway_for
from console.kafka import ConfigResource
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from tests.conftest import hold
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db


def topic_names(cluster) -> set[str]:
    return {t.name for t in gateway_for(cluster).list_topics_metadata().topics}


def test_it_refuses_a_held_topic_creation_without_a_choice(personas, kafka_cluster):
    hold(kafka_cluster, personas["admin"], ["topic.create"])
    name = f"cli-held-{uuid.uuid4().hex[:8]}"
    code, out = kafka(
        "topics", "create", name, "--partitions", "1", "--replication-factor", "1", "--as", "operator"
    )
    assert code == 3
    assert "approval" in out.lower()
    assert not ChangeRequest.objects.filter(resource__contains=name).exists()
    assert name not in topic_names(kafka_cluster)


def test_it_submits_a_held_topic_creation_for_approval(personas, kafka_cluster):
    hold(kafka_cluster, personas["admin"], ["topic.create"])
    name = f"cli-held-{uuid.uuid4().hex[:8]}"
    code, out = kafka(
        "topics", "create", name, "--partitions", "2", "--replication-factor", "1",
        "--submit-for-approval", "capacity for the orders team", "--as", "operator", "--output", "json",
    )  # fmt: skip
    assert code == 0, out
    doc = json.loads(out)
    req = ChangeRequest.objects.get(pk=doc["items"][0]["change"])
    assert doc["held"] is True
    assert doc["items"][0] == {
        "change": req.pk,
        "kind": "change.topic.create",
        "resource": req.resource,
        "state": "pending",
        "approvals_required": 1,
        "message": "",
    }
    assert (req.gated, req.state, req.reason, req.requested_by_name) == (
        True,
        RequestState.PENDING,
        "capacity for the orders team",
        "operator",
    )
    assert name in req.resource
    assert AuditEvent.objects.filter(action="change.submit", actor_name="operator").count() == 1
    assert name not in topic_names(kafka_cluster)  # nothing ran: it waits for an approver


def break_glass_create(personas, kafka_cluster, who: str) -> tuple[str, int, str]:
    """Topic creation held on the cluster, ``who`` creates a topic with --break-glass: (topic, exit code, output)."""
    hold(kafka_cluster, personas["admin"], ["topic.create"])
    name = f"cli-glass-{uuid.uuid4().hex[:8]}"
    code, out = kafka(
        "topics", "create", name, "--partitions", "1", "--replication-factor", "1",
        "--break-glass", "incident 4711: the ingest topic is missing", "--as", who,
    )  # fmt: skip
    return name, code, out


def test_an_admin_breaks_glass_from_the_command_line(personas, kafka_cluster):
    name, code, out = break_glass_create(personas, kafka_cluster, "admin")
    assert code == 0, out
    req = ChangeRequest.objects.get(resource__contains=name)
    assert (req.state, req.result["ok"]) == (RequestState.SUCCEEDED, True)
    assert f"Break glass: change #{req.pk} succeeded" in out
    assert AuditEvent.objects.filter(action="change.break_glass", actor_name="admin").count() == 1
    assert name in topic_names(kafka_cluster)


def test_an_operator_cannot_break_glass(personas, kafka_cluster):
    name, code, _ = break_glass_create(personas, kafka_cluster, "operator")
    assert code == 3
    assert not ChangeRequest.objects.filter(resource__contains=name).exists()
    assert name not in topic_names(kafka_cluster)


def test_where_nothing_holds_it_the_action_runs(personas, kafka_cluster):
    name = f"cli-free-{uuid.uuid4().hex[:8]}"
    code, out = kafka(
        "topics", "create", name, "--partitions", "1", "--replication-factor", "1",
        "--submit-for-approval", "just in case", "--as", "operator",
    )  # fmt: skip
    assert code == 0, out
    assert not ChangeRequest.objects.exists()
    assert name in topic_names(kafka_cluster)


def test_a_held_config_change_and_acl_are_submitted_with_their_dry_run(personas, kafka_cluster):
    name = f"cli-held-{uuid.uuid4().hex[:8]}"
    assert (
        kafka("topics", "create", name, "--partitions", "1", "--replication-factor", "1", "--as", "operator")[
            0
        ]
        == 0
    )
    hold(kafka_cluster, personas["admin"], ["config", "acl"])
    code, out = kafka(
        "configs", "alter", "--entity-type", "topics", "--entity-name", name, "--add-config", "retention.ms=7200000",
        "--submit-for-approval", "keep two hours", "--as", "operator",
    )  # fmt: skip
    assert code == 0, out
    config = ChangeRequest.objects.get(kind="change.config")
    assert config.payload == {
        "resource": {"type": "TOPIC", "name": name},
        "changes": [{"name": "retention.ms", "op": "SET", "value": "7200000"}],
    }
    assert config.review["rows"]  # the diff the approvers see
    code, out = kafka(
        "acls", "add", "--allow-principal", "User:cli-held", "--operation", "READ", "--topic", name,
        "--submit-for-approval", "the reader of the new topic", "--as", "operator",
    )  # fmt: skip
    assert code == 0, out
    acl = ChangeRequest.objects.get(kind="change.acl")
    assert (acl.state, acl.reason) == (RequestState.PENDING, "the reader of the new topic")
    res = ConfigResource("TOPIC", name)
    assert (
        gateway_for(kafka_cluster).describe_configs([res])[res]["retention.ms"].value != "7200000"
    )  # not yet
