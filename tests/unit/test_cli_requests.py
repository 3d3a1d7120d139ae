"""``manage.py kafka requests``: submit, list, show, approve, reject over the request actions (four eyes)."""

from __future__ import annotations

import json
import uuid
from functools import partial

import pytest

from console.models import AuditEvent, Operation
from console.models.requests import ChangeRequest
from tests.unit.kafka_cli import kafka
from tests.unit.matrix_world import kafka_restored

pytestmark = pytest.mark.django_db


run = partial(kafka, "requests")


def test_submit_list_show_approve_and_reject(personas, kafka_cluster, sandbox):
    name = f"team-a.cli-{uuid.uuid4().hex[:8]}"
    payload = json.dumps({"name": name, "partitions": 1, "replication_factor": 1, "configs": {}})
    with kafka_restored(sandbox):
        code, out = run(
            "submit",
            "--kind",
            "topic.create",
            "--payload",
            payload,
            "--reason",
            "ci",
            "--output",
            "json",
            "--as",
            "requester",
        )
        data = json.loads(out)
        assert code == 0 and data["state"] == "pending" and data["requested_by"] == "requester"
        rid = data["id"]
        assert AuditEvent.objects.filter(action="request.submit", actor_name="requester").exists()
        code, out = run("list", "--output", "json", "--as", "operator")
        assert code == 0 and [r["id"] for r in json.loads(out)["items"]] == [rid]
        code, out = run("approve", str(rid), "--as", "requester")  # four eyes
        assert code == 3
        refused = AuditEvent.objects.order_by("-id").first()
        assert (refused.action, refused.outcome) == ("request.approve", "refused")
        code, out = run("show", str(rid), "--as", "viewer")  # not theirs, not an approver
        assert code == 6
        code, out = run("approve", str(rid), "--comment", "ok", "--output", "json", "--as", "admin")
        data = json.loads(out)
        assert code == 0 and data["state"] == "approved" and data["operation"]
        assert Operation.objects.get(pk=data["operation"]).params == {"request_id": rid}
        code, out = run("reject", str(rid), "--comment", "late", "--as", "admin")
        assert code == 4 and "already been decided" in out
    code, out = run(
        "submit",
        "--kind",
        "topic.create",
        "--payload",
        payload.replace("team-a.", "team-b."),
        "--as",
        "requester",
    )
    assert code == 4 and ChangeRequest.objects.count() == 1
    code, out = run("submit", "--kind", "topic.delete", "--payload", "{not json", "--as", "requester")
    assert code == 2


def test_reject_needs_a_reason_and_show_has_the_timeline(personas, kafka_cluster):
    name = f"team-a.cli-{uuid.uuid4().hex[:8]}"
    payload = json.dumps({"name": name, "partitions": 1, "replication_factor": 1, "configs": {}})
    code, out = run(
        "submit", "--kind", "topic.create", "--payload", payload, "--output", "json", "--as", "requester"
    )
    rid = json.loads(out)["id"]
    code, out = run("reject", str(rid), "--as", "admin")
    assert code == 4 and "say why" in out
    code, out = run("reject", str(rid), "--comment", "no", "--as", "admin")
    assert code == 0
    code, out = run("show", str(rid), "--output", "json", "--as", "requester")
    data = json.loads(out)
    assert data["state"] == "rejected" and data["comment"] == "no"
    assert [s["step"] for s in data["items"]] == ["submitted", "rejected"]
