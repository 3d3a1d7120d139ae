"""``manage.py kafka groups …``: kafka-consumer-groups' options over the group actions, with the exit codes
of the other subcommands."""

from __future__ import annotations

import json
import uuid
from functools import partial

import pytest

from console.management.cli import groups as groups_command
from console.models import AuditEvent
from tests.unit.group_world import committed, log_topic
from tests.unit.kafka_cli import kafka

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


run = partial(kafka, "groups", stderr=True)


def setup(sandbox, offsets=None, members=None, end: int = 100) -> tuple[str, str]:
    topic, gid = f"cli-{uuid.uuid4().hex[:8]}", f"cli-group-{uuid.uuid4().hex[:8]}"
    log_topic(sandbox, topic, 2, 10, end)
    sandbox.add_group(gid, members=members, offsets=offsets or {(topic, 0): 40, (topic, 1): 60})
    return topic, gid


def test_list_and_describe_in_table_json_and_csv(sandbox, personas, kafka_cluster):
    topic, gid = setup(sandbox)
    code, out = run("list", "--query", gid, "--output", "json", "--as", "viewer")
    assert code == 0
    [row] = json.loads(out)["items"]
    assert (row["group"], row["state"], row["members"], row["lag"]) == (gid, "Empty", 0, 100)
    code, out = run("describe", "--group", gid, "--output", "csv", "--as", "viewer")
    assert code == 0
    assert out.splitlines() == [
        "group,topic,partition,current_offset,log_end_offset,lag,consumer",
        f"{gid},{topic},0,40,100,60,",
        f"{gid},{topic},1,60,100,40,",
    ]
    code, out = run("describe", "--group", gid, "--as", "viewer")
    assert code == 0 and f"Group {gid} (classic): Empty, 0 members" in out
    assert run("describe", "--group", "no-such-group-cli", "--as", "viewer")[0] == groups_command.NOT_FOUND


def test_reset_is_a_dry_run_unless_executed(sandbox, personas, kafka_cluster):
    topic, gid = setup(sandbox)
    code, out = run("reset-offsets", "--group", gid, "--all-topics", "--shift-by", "-45", "--as", "operator")
    assert code == 0 and "dry run" in out
    assert committed(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60}
    code, out = run(
        "reset-offsets",
        "--group",
        gid,
        "--topic",
        topic,
        "--to-offset",
        "0",
        "--output",
        "csv",
        "--as",
        "operator",
    )
    assert (
        code == 0 and out == f"{topic},0,10\n{topic},1,10\n"
    )  # clamped to the log start, as --export writes
    code, out = run(
        "reset-offsets",
        "--group",
        gid,
        "--topic",
        f"{topic}:1",
        "--to-latest",
        "--execute",
        "--as",
        "operator",
    )
    assert code == 0 and "reset" in out
    assert committed(sandbox, gid) == {(topic, 0): 40, (topic, 1): 100}
    requested, outcome = AuditEvent.objects.filter(action="group.offsets.reset").order_by("id")
    assert (
        outcome.actor_name == "operator"
        and outcome.before == {f"{topic}-1": 60}
        and outcome.after == {f"{topic}-1": 100}
    )


def test_reset_from_a_file_and_to_a_time(sandbox, personas, kafka_cluster, tmp_path):
    topic, gid = setup(sandbox)
    plan = tmp_path / "plan.csv"
    plan.write_text(f"topic,partition,offset\n{topic},0,55\n")
    code, _ = run("reset-offsets", "--group", gid, "--from-file", str(plan), "--execute", "--as", "operator")
    assert code == 0 and committed(sandbox, gid)[(topic, 0)] == 55
    code, out = run(
        "reset-offsets",
        "--group",
        gid,
        "--all-topics",
        "--to-datetime",
        "2999-01-01T00:00:00",
        "--output",
        "json",
        "--as",
        "operator",
    )
    assert code == 0 and [r["new_offset"] for r in json.loads(out)["items"]] == [
        100,
        100,
    ]  # nothing that new: log end


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--all-topics", "--to-latest", "--execute"], 4, "active member"),
        (["--topic", "nope", "--to-latest"], 4, "does not exist"),
        (["--topic", "T:x", "--to-latest"], 4, "not a partition number"),
        (["--to-latest"], 2, "--all-topics or --topic"),
        (["--all-topics", "--to-datetime", "whenever"], 4, "is not a time"),
        (["--all-topics", "--from-file", "/no/such/file"], 2, "Cannot read"),
    ],
)
def test_reset_refusals_have_their_exit_codes(sandbox, personas, kafka_cluster, args, code, says):
    topic, gid = setup(sandbox, members={"busy-app": []})
    args = [a.replace("T:", f"{topic}:") for a in args]
    got, out = run("reset-offsets", "--group", gid, *args, "--as", "operator")
    assert (got, says in out) == (code, True), out
    assert committed(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60}


def test_a_viewer_cannot_reset(sandbox, personas, kafka_cluster):
    topic, gid = setup(sandbox)
    code, out = run(
        "reset-offsets", "--group", gid, "--all-topics", "--to-latest", "--execute", "--as", "viewer"
    )
    assert code == 3 and "group.manage" in out
    assert committed(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60}


def test_delete_groups_each_with_its_outcome(sandbox, personas, kafka_cluster):
    _, idle = setup(sandbox)
    _, busy = setup(sandbox, members={"busy-app": []})
    code, out = run("delete", "--group", idle, "--group", busy, "--output", "json", "--as", "operator")
    assert code == groups_command.FAILED
    items = json.JSONDecoder().raw_decode(out)[0]["items"]  # the JSON, then the command's closing line
    assert {r["group"]: r["status"] for r in items} == {idle: "deleted", busy: "refused"}
    assert idle not in sandbox.state.groups and busy in sandbox.state.groups
    assert run("delete", "--group", busy, "--as", "operator")[0] == groups_command.REFUSED
    assert run("delete", "--group", "no-such-group-cli", "--as", "operator")[0] == groups_command.NOT_FOUND


def test_delete_offsets_of_a_topic(sandbox, personas, kafka_cluster):
    topic, gid = setup(sandbox)
    code, out = run(
        "delete-offsets", "--group", gid, "--topic", topic, "--output", "json", "--as", "operator"
    )
    assert code == 0 and [r["status"] for r in json.loads(out)["items"]] == ["deleted", "deleted"]
    assert committed(sandbox, gid) == {}
    assert (
        run("delete-offsets", "--group", gid, "--topic", topic, "--as", "operator")[0]
        == groups_command.REFUSED
    )
