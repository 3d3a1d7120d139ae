"""Adding an area touches only its own package plus one registration line per door.

tests/toy_area is a whole area (a list action, a mutation, one held kind, an API view, a page, a
command line) that nothing in console/ knows. Registered here as docs/architecture.md ("Adding an
area") says - the held module loaded, one API route and one page route (tests/toy_area/urls.py), one
CLI module - it works through every door with the console's permissions, change control and audit.
"""

from __future__ import annotations

import importlib
import io
import json
import sys
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client, override_settings

from console import operations
from console.changes import gate
from console.changes import kinds as held_kinds
from console.management.commands import kafka as kafka_command
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from console.requests import actions as requests
from console.topics import actions as topics
from console.topics.batch import TopicSpec
from tests.conftest import hold
from tests.toy_area import actions as toy_actions
from tests.unit import test_layout

pytestmark = pytest.mark.django_db
TOY = Path(__file__).resolve().parents[1] / "toy_area"


@pytest.fixture
def toy(monkeypatch):
    """The toy area registered for one test: its held module loaded (apps.HELD_MODULES' one line),
    the test route table (one line per web door), the kafka command with its CLI module (one line);
    the registries are given back afterwards."""
    monkeypatch.setattr(gate, "KINDS", dict(gate.KINDS))
    monkeypatch.setattr(gate, "PERMISSIONS", dict(gate.PERMISSIONS))
    monkeypatch.setattr(held_kinds, "_KINDS", dict(held_kinds._KINDS))
    sys.modules.pop("tests.toy_area.held", None)
    held = importlib.import_module("tests.toy_area.held")
    command = kafka_command.command_class((*kafka_command.CLI_MODULES, "tests.toy_area.cli"))()
    with override_settings(ROOT_URLCONF="tests.toy_area.urls"):
        yield held, command


@pytest.fixture
def topic(personas, kafka_cluster):
    name = f"toy.{uuid.uuid4().hex[:10]}"
    topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 1, 1)])
    return name


def kafka(command, *args: str) -> tuple[int, str]:
    """The kafka command (with the toy's CLI module) run as scripts see it: exit code and output."""
    out = io.StringIO()
    try:
        call_command(command, *args, stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return exc.returncode, f"{out.getvalue()}\n{exc}"
    return 0, out.getvalue()


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def retention(cluster, topic: str) -> str:
    return toy_actions.retention_of(cluster, [topic])[topic]


def test_it_lists_through_the_api_the_page_and_the_command_line(toy, personas, kafka_cluster, topic):
    _, command = toy
    before = retention(kafka_cluster, topic)
    api = client_for(personas["viewer"]).get(f"/api/v1/clusters/{kafka_cluster.name}/retention/")
    assert api.status_code == 200
    assert {"topic": topic, "retention_ms": before} in api.json()["results"]
    page = client_for(personas["viewer"]).get(f"/c/{kafka_cluster.name}/retention/")
    assert page.status_code == 200
    assert f"<td>{topic}</td><td>{before}</td>" in page.content.decode()
    code, out = kafka(command, "retention", "list", "--as", "viewer", "--output", "json")
    assert code == 0, out
    assert {"topic": topic, "retention_ms": before} in json.loads(out)["items"]


def test_it_changes_where_nothing_holds_it_with_the_audit_trail(toy, personas, kafka_cluster, topic):
    _, command = toy
    code, out = kafka(command, "retention", "set", topic, "--retention-ms", "7200000", "--as", "operator")
    assert code == 0, out
    assert retention(kafka_cluster, topic) == "7200000"
    events = list(AuditEvent.objects.filter(action="retention.set").order_by("pk"))
    assert [(e.outcome, e.actor_name, e.targets) for e in events] == [
        ("requested", "operator", [f"topic:{topic}"]),
        ("success", "operator", [f"topic:{topic}"]),
    ]
    denied = client_for(personas["viewer"]).post(
        f"/api/v1/clusters/{kafka_cluster.name}/retention/",
        {"topic": topic, "retention_ms": 3600000},
        content_type="application/json",
    )
    assert denied.status_code == 403
    bad = client_for(personas["operator"]).post(
        f"/api/v1/clusters/{kafka_cluster.name}/retention/",
        {"topic": topic, "retention_ms": 5},
        content_type="application/json",
    )
    assert bad.status_code in (400, 422) and "at least 60000" in bad.content.decode()
    assert retention(kafka_cluster, topic) == "7200000"


def test_its_held_kind_goes_through_change_control_on_every_door(toy, personas, kafka_cluster, topic):
    _, command = toy
    before = retention(kafka_cluster, topic)
    hold(kafka_cluster, personas["admin"], ["retention"])
    code, out = kafka(command, "retention", "set", topic, "--retention-ms", "7200000", "--as", "operator")
    assert code == 3, out  # held: refused without a choice
    answer = client_for(personas["operator"]).post(
        f"/api/v1/clusters/{kafka_cluster.name}/retention/",
        {"topic": topic, "retention_ms": 7200000, "reason": "two hours for the replay"},
        content_type="application/json",
    )
    assert answer.status_code == 202, answer.content
    req = ChangeRequest.objects.get(pk=answer.json()["id"])
    assert (req.kind, req.gated, req.state, req.payload) == (
        "change.retention",
        True,
        RequestState.PENDING,
        {"topic": topic, "retention_ms": 7200000},
    )
    assert req.review["rows"] == [[topic, before, "7200000"]]
    assert retention(kafka_cluster, topic) == before  # nothing ran yet
    requests.decide(actor=personas["admin"], request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert (req.state, req.result["ok"]) == (RequestState.SUCCEEDED, True)
    assert retention(kafka_cluster, topic) == "7200000"
    code, out = kafka(
        command, "retention", "set", topic, "--retention-ms", "3600000",
        "--submit-for-approval", "one hour is enough", "--as", "operator",
    )  # fmt: skip
    assert code == 0, out
    assert ChangeRequest.objects.filter(kind="change.retention", state=RequestState.PENDING).count() == 1


def test_it_touches_only_its_package_and_uses_the_areas_public_faces():
    """The toy imports console's areas only through their public faces, and nothing in console/
    imports the toy: its registration lines are the test's (tests/toy_area/urls.py and the fixture)."""
    bad = []
    for path in TOY.glob("*.py"):
        for name, line in test_layout._imports(path):
            parts = name.split(".")
            if len(parts) > 2 and parts[0] == "console" and parts[1] in test_layout.AREAS:
                public = importlib.import_module(f"console.{parts[1]}").__all__
                if parts[2] not in public:
                    bad.append(f"{path.name}:{line} imports {name}")
            if any(p.startswith("_") and not p.startswith("__") for p in parts):
                bad.append(f"{path.name}:{line} imports a private name {name}")
    assert bad == []
    mentions = [
        str(p)
        for p in test_layout.CONSOLE.rglob("*.py")
        if "toy_area" in p.read_text() or "retention.set" in p.read_text()
    ]
    assert mentions == []
