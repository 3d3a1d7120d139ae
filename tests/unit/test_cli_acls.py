"""``manage.py kafka acls``: kafka-acls' options over the ACL actions (the sandbox's ACLs given back)."""

from __future__ import annotations

import json
import uuid
from functools import partial

import pytest

from console.models import AuditEvent
from tests.unit.kafka_cli import kafka
from tests.unit.matrix_world import kafka_restored

pytestmark = pytest.mark.django_db


@pytest.fixture
def restored(sandbox):
    with kafka_restored(sandbox):
        yield sandbox


run = partial(kafka, "acls")


def first_json(out: str) -> dict:
    return json.JSONDecoder().raw_decode(out)[0]


def test_add_list_remove_with_preview_and_force(personas, kafka_cluster, restored):
    who, topic = f"User:cli-{uuid.uuid4().hex[:8]}", f"cli-acl-{uuid.uuid4().hex[:8]}"
    code, out = run(
        "add", "--allow-principal", who, "--operation", "read", "--operation", "WRITE", "--topic", topic,
        "--output", "json", "--as", "operator",
    )  # fmt: skip
    data = json.loads(out)
    assert code == 0 and data["ok"] is True
    assert sorted((r["action"], r["operation"], r["permission"]) for r in data["items"]) == [
        ("create", "READ", "ALLOW"),
        ("create", "WRITE", "ALLOW"),
    ]
    code, out = run("list", "--topic", topic, "--output", "json", "--as", "operator")
    items = json.loads(out)["items"]
    assert code == 0 and {(i["principal"], i["operation"], i["resource_name"]) for i in items} == {
        (who, "READ", topic),
        (who, "WRITE", topic),
    }
    read_acl = ("--allow-principal", who, "--topic", topic, "--operation", "READ")
    code, out = run("remove", *read_acl, "--output", "json", "--as", "operator")
    preview = first_json(out)
    assert (
        code == 4 and preview["removed"] is False and [i["operation"] for i in preview["items"]] == ["READ"]
    )
    assert "--force" in out
    code, out = run("remove", *read_acl, "--force", "--as", "operator")
    assert code == 0 and "deleted" in out
    code, out = run("list", "--principal", who, "--output", "json", "--as", "operator")
    assert [i["operation"] for i in json.loads(out)["items"]] == ["WRITE"]
    code, out = run("remove", "--topic", topic, "--force", "--as", "operator")
    assert code == 0
    assert json.loads(run("list", "--topic", topic, "--output", "json", "--as", "operator")[1])["items"] == []
    actions = [a for a in AuditEvent.objects.order_by("id").values_list("action", "outcome")]
    assert actions.count(("acl.create", "success")) == 1 and actions.count(("acl.delete", "success")) == 2


def test_refusals_are_exit_codes_and_audited(personas, kafka_cluster, restored):
    code, out = run(
        "add", "--allow-principal", "User:x", "--operation", "READ", "--topic", "t", "--as", "viewer"
    )
    assert code == 3
    refused = AuditEvent.objects.order_by("-id").first()
    assert (refused.action, refused.outcome, refused.actor_name) == ("acl.change", "refused", "viewer")
    code, out = run(
        "add", "--allow-principal", "nobody", "--operation", "READ", "--topic", "t", "--as", "operator"
    )
    assert code == 4 and "principal" in out
    assert AuditEvent.objects.order_by("-id").first().outcome == "refused"
    code, out = run("add", "--allow-principal", "User:x", "--topic", "t", "--as", "operator")
    assert code == 2
    code, out = run("remove", "--force", "--as", "operator")  # a filter matching everything
    assert code == 4 and "must name" in out
    code, out = run("list", "--as", "ghost")
    assert code == 6
