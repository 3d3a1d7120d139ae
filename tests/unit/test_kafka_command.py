"""``manage.py kafka``: the same services and audit as the pages, with exit codes scripts rely on."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.models import AuditEvent
from tests.unit.kafka_cli import kafka

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def uniq(prefix="cli") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def create_topic(name: str, *more: str) -> tuple[str, ...]:
    """The arguments of ``kafka topics create`` for the topic ``name``, then ``more``."""
    return ("topics", "create", name, *more)


def alter_topic(name: str, *more: str) -> tuple[str, ...]:
    """The arguments of ``kafka configs alter`` on the topic ``name``, then ``more``."""
    return ("configs", "alter", "--entity-type", "topics", "--entity-name", name, *more)


def test_create_list_describe_delete_round_trip(personas, kafka_cluster):
    name = uniq()
    code, out = kafka(
        *create_topic(
            name,
            "--partitions",
            "2",
            "--replication-factor",
            "1",
            "--config",
            "retention.ms=5000",
            "--as",
            "operator",
        )
    )
    assert code == 0 and "created" in out
    code, out = kafka("topics", "list", "--query", name, "--output", "json", "--as", "viewer")
    assert code == 0
    assert [(t["name"], t["partitions"]) for t in json.loads(out)["items"]] == [(name, 2)]
    code, out = kafka("topics", "describe", name, "--output", "json", "--as", "viewer")
    data = json.loads(out)
    assert code == 0 and data["configs"] == {"retention.ms": "5000"} and len(data["items"]) == 2
    code, out = kafka("topics", "delete", name, "--as", "operator")
    assert code == 4 and "confirm" in out
    code, out = kafka("topics", "delete", name, "--confirm", name, "--as", "operator")
    assert code == 0 and "deleted" in out
    actions = list(AuditEvent.objects.order_by("id").values_list("action", "outcome", "actor_name"))
    assert actions == [
        ("topic.create", "requested", "operator"),
        ("topic.create", "success", "operator"),
        ("topic.delete", "refused", "operator"),  # the delete without --confirm
        ("topic.delete", "requested", "operator"),
        ("topic.delete", "success", "operator"),
    ]


def test_validate_only_changes_nothing(personas, kafka_cluster):
    name = uniq()
    code, out = kafka(
        *create_topic(name, "--partitions", "1", "--validate-only", "--output", "json", "--as", "operator")
    )
    assert code == 0 and json.loads(out)["items"][0]["status"] == "valid (dry run)"
    assert isinstance(gateway_for(kafka_cluster).describe_topics([name])[name], KafkaOperationError)


def test_exit_codes(personas, kafka_cluster, tmp_path):
    taken = uniq()
    kafka(*create_topic(taken, "--partitions", "1", "--replication-factor", "1", "--as", "operator"))
    assert kafka(*create_topic(taken, "--partitions", "1", "--as", "operator"))[0] == 1  # Kafka refused it
    assert kafka(*create_topic(uniq(), "--as", "viewer"))[0] == 3
    assert kafka(*create_topic("bad name", "--as", "operator"))[0] == 4  # refused by the console policy
    assert kafka("topics", "describe", uniq("missing"))[0] == 6
    assert kafka("topics", "list", "--cluster", "nope")[0] == 6
    assert kafka("topics", "list", "--as", "nobody")[0] == 6
    assert kafka("topics", "add-partitions", taken, "--partitions", "1", "--as", "operator")[0] == 4
    bad = tmp_path / "t.csv"
    bad.write_text("name,partitions\na,many\n")
    code, out = kafka("topics", "create", "--file", str(bad), "--as", "operator")
    assert code == 4 and "line 2, column 2" in out


def test_an_unreachable_cluster_exits_5(personas, offline_cluster):
    assert kafka("topics", "list", "--cluster", "offline")[0] == 5


def test_batch_create_from_a_file(personas, kafka_cluster, tmp_path):
    a, b = uniq(), uniq()
    f = tmp_path / "topics.yaml"
    f.write_text(f"- name: {a}\n  partitions: 1\n  rf: 1\n- name: {b}\n  partitions: 2\n  rf: 1\n")
    code, out = kafka("topics", "create", "--file", str(f), "--output", "json", "--as", "operator")
    assert code == 0 and [i["status"] for i in json.loads(out)["items"]] == ["created", "created"]


def test_configs_describe_and_alter(personas, kafka_cluster):
    name = uniq()
    kafka(*create_topic(name, "--partitions", "1", "--replication-factor", "1", "--as", "operator"))
    code, out = kafka(
        *alter_topic(name, "--add-config", "retention.ms=9000", "--validate-only", "--as", "operator")
    )
    assert code == 0 and "valid (dry run)" in out
    code, out = kafka(
        *alter_topic(name, "--add-config", "retention.ms=9000", "--output", "json", "--as", "operator")
    )
    data = json.loads(out)
    assert code == 0 and data["status"] == "applied" and data["items"][0]["after"] == "9000"
    code, out = kafka(
        "configs", "describe", "--entity-type", "topics", "--entity-name", name, "--output", "json"
    )
    assert {
        "name": "retention.ms",
        "value": "9000",
        "source": "DYNAMIC_TOPIC_CONFIG",
        "read_only": False,
        "sensitive": False,
    } in json.loads(out)["items"]
    assert kafka(*alter_topic(name, "--add-config", "x.y=1", "--as", "operator"))[0] == 4
    code, out = kafka("configs", "describe", "--entity-type", "brokers", "--entity-name", "1")
    assert code == 0 and "broker.id" in out
    assert AuditEvent.objects.filter(action="config.alter").exclude(outcome="requested").count() == 1


def test_it_refuses_a_change_without_as_naming_the_option_and_changes_nothing(personas, kafka_cluster):
    name = uniq()
    code, out = kafka(*create_topic(name, "--partitions", "1", "--replication-factor", "1"))
    assert code == 2
    assert out == (
        "'topics create' changes or can change something: say who is acting with --as USER (a console "
        "user with that permission). The command line never acts as the system actor console-system, "
        "whose actions change control does not hold."
    )
    assert isinstance(gateway_for(kafka_cluster).describe_topics([name])[name], KafkaOperationError)
    assert not [e for e in AuditEvent.objects.all() if f"topic:{name}" in e.targets]
    for change in (
        ("topics", "delete", name, "--confirm", name),
        alter_topic(name, "--add-config", "retention.ms=1"),
        ("acls", "add", "--allow-principal", "User:x", "--operation", "Read", "--topic", name),
        ("reassign", "--cancel"),
        ("elections", "--election-type", "preferred", "--topic", name),
        ("requests", "approve", "1"),
    ):
        code, out = kafka(*change)
        assert code == 2 and "--as USER" in out, change


def test_without_as_reads_still_work_as_the_system_actor(personas, kafka_cluster):
    name = uniq()
    assert (
        kafka(*create_topic(name, "--partitions", "1", "--replication-factor", "1", "--as", "operator"))[0]
        == 0
    )
    events = AuditEvent.objects.count()
    code, out = kafka("topics", "describe", name, "--output", "json")
    assert code == 0 and json.loads(out)["topic"] == name
    assert kafka("topics", "list", "--query", name)[0] == 0
    assert AuditEvent.objects.count() == events  # reads write nothing


def test_it_refuses_to_act_as_the_system_actor_named_with_as(personas, kafka_cluster):
    name = uniq()
    code, out = kafka(
        "topics", "create", name, "--partitions", "1", "--replication-factor", "1", "--as", "console-system"
    )
    assert code == 2
    assert out == (
        "--as cannot name the system actor console-system: name the person acting (its actions are "
        "never held by change control)."
    )
    assert isinstance(gateway_for(kafka_cluster).describe_topics([name])[name], KafkaOperationError)


def test_registering_a_cluster_needs_a_named_user(db):
    with pytest.raises(CommandError, match="--as USER"):
        call_command("register_cluster", "--name", "x", "--bootstrap-servers", "127.0.0.1:1")
    with pytest.raises(CommandError, match="No active console user 'ghost'"):
        call_command("register_cluster", "--name", "x", "--bootstrap-servers", "127.0.0.1:1", "--as", "ghost")


def test_cluster_describe_names_the_quorum_leader_as_active_controller(personas, kafka_cluster, sandbox):
    for _ in range(5):
        code, out = kafka("cluster", "describe", "--output", "json", "--as", "viewer")
        data = json.loads(out)
        assert code == 0 and data["active_controller"] == sandbox.state.active_controller
        assert data["cluster_id"] == sandbox.cluster_id and [b["id"] for b in data["items"]] == [1, 2, 3]
    code, out = kafka("cluster", "describe", "--as", "viewer")
    assert f"active controller: {sandbox.state.active_controller}" in out
