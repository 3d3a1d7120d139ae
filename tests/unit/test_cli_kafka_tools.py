"""``manage.py kafka`` speaks kafka-*.sh: the tools' option names, the sub-command's usage on a usage error,
the exit codes of docs/cli.md per refusal class, counts checked like the page does, no library noise,
and a stopped broker named as stopped."""

from __future__ import annotations

import io
import json
import logging
import socket
import subprocess
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied

from console import refusals
from console.acls.core import AclValidationError
from console.changes.gate import ApprovalRequired
from console.changes.queue import RequestInvalid
from console.clusters.actions import gateway_for
from console.configs.plan import ConfigPlanError
from console.estate.core import EstateParseError
from console.kafka import KafkaOperationError
from console.management.cli.base import quiet_libraries
from console.models import Cluster
from console.reassignment.actions import PlanRejected
from console.reassignment.elections import ElectionRefused
from console.reassignment.planner import PlanParseError
from console.topics.batch import BatchParseError
from console.topics.delete import ConfirmationError as TopicConfirmationError
from console.topics.policy import PolicyViolation
from sandbox.testing import running_sandbox
from tests.conftest import hold, make_personas
from tests.unit.kafka_cli import kafka

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]

ROOT = Path(__file__).resolve().parents[2]


def uniq(prefix: str = "tools") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def exists(cluster, name: str) -> bool:
    return not isinstance(gateway_for(cluster).describe_topics([name])[name], KafkaOperationError)


def test_it_takes_kafka_topics_option_names(personas, kafka_cluster):
    name = uniq()
    code, out = kafka(
        "topics", "create", "--topic", name, "--partitions", "2", "--replication-factor", "1",
        "--config", "retention.ms=5000", "--config", "cleanup.policy=compact", "--as", "operator",
    )  # fmt: skip
    assert (code, "created" in out) == (0, True)
    code, out = kafka("topics", "describe", "--topic", name, "--output", "json")
    data = json.loads(out)
    assert code == 0 and data["topic"] == name and len(data["items"]) == 2
    assert data["configs"] == {"retention.ms": "5000", "cleanup.policy": "compact"}
    code, out = kafka("configs", "describe", "--topic", name, "--output", "json")
    assert (
        code == 0
        and {"retention.ms": "5000"}.items()
        <= {r["name"]: r["value"] for r in json.loads(out)["items"]}.items()
    )
    code, out = kafka(
        "configs", "alter", "--topic", name, "--add-config", "retention.ms=7000", "--as", "operator"
    )
    assert code == 0
    code, out = kafka("topics", "add-partitions", "--topic", name, "--partitions", "3", "--as", "operator")
    assert code == 0 and "partitions added" in out
    code, out = kafka("topics", "delete", "--topic", name, "--confirm", name, "--as", "operator")
    assert code == 0 and "deleted" in out and not exists(kafka_cluster, name)


def test_it_takes_kafka_topics_replica_assignment_format(personas, kafka_cluster):
    name = uniq()
    code, out = kafka(
        "topics", "create", "--topic", name, "--replica-assignment", "1:2,2:3", "--as", "operator"
    )
    assert code == 0, out
    code, out = kafka("topics", "describe", name, "--output", "json")
    assert [p["replicas"] for p in json.loads(out)["items"]] == ["1,2", "2,3"]
    code, out = kafka(
        "topics", "create", "--topic", uniq(), "--replica-assignment", "1;2", "--as", "operator"
    )
    assert code == 2
    assert (
        "--replica-assignment must look like 1:2,2:3 (kafka-topics: partitions separated by commas, " in out
    )


def test_it_refuses_a_topic_given_twice_differently_and_bootstrap_server(personas, kafka_cluster):
    a, b = uniq(), uniq()
    code, out = kafka("topics", "create", a, "--topic", b, "--partitions", "1", "--as", "operator")
    assert code == 2 and f"The topic is given twice: {a!r} and --topic {b!r}" in out
    code, out = kafka("topics", "list", "--bootstrap-server", "localhost:9092")
    assert code == 2 and "--bootstrap-server" in out and "--cluster" in out
    assert not exists(kafka_cluster, a) and not exists(kafka_cluster, b)


@pytest.mark.parametrize("value", ["-1", "0", "many"])
def test_it_refuses_partitions_and_replication_factor_that_the_page_refuses(personas, kafka_cluster, value):
    name = uniq()
    for flag, other in (("--partitions", "--replication-factor"), ("--replication-factor", "--partitions")):
        code, out = kafka("topics", "create", "--topic", name, flag, value, other, "1", "--as", "operator")
        assert code == 2, out
        assert out.startswith("usage: kafka topics create")
        assert (
            f"{flag}: must be a whole number of at least 1 (leave it out for the broker default), not {value!r}"
            in out
        )
    assert not exists(kafka_cluster, name)


def test_a_usage_error_prints_the_sub_commands_usage(personas, kafka_cluster):
    code, out = kafka("topics", "describe", "--topik", "x", "--as", "viewer", "--outptu", "json")
    assert code == 2
    assert out.startswith("usage: kafka topics describe [-h]")
    assert out.endswith("kafka topics describe: error: unrecognized arguments: --topik --outptu json")


def test_a_usage_error_on_the_command_line_prints_the_sub_commands_usage_and_exits_2():
    run = subprocess.run(
        [sys.executable, "manage.py", "kafka", "topics", "create", "--topik", "x"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("usage: manage.py kafka topics create")
    assert run.stderr.endswith("manage.py kafka topics create: error: unrecognized arguments: --topik\n")


def test_it_exits_4_when_the_console_policy_refused_a_topic_and_1_when_kafka_did(
    personas, kafka_cluster, offline_cluster
):
    taken = uniq()
    on = ("--cluster", "sandbox", "--as", "operator")
    assert kafka("topics", "create", taken, "--partitions", "1", "--replication-factor", "1", *on)[0] == 0
    code, out = kafka("topics", "create", "bad name", "--partitions", "1", *on)
    assert code == 4
    assert out.endswith(
        "Refused by the console before reaching Kafka (see above): nothing was sent for those."
    )
    assert "refused by policy" in out and "Kafka refused" not in out
    code, out = kafka("topics", "create", taken, "--partitions", "1", *on)  # Kafka: TOPIC_ALREADY_EXISTS
    assert code == 1 and out.endswith("Kafka refused some of the request (see above).")
    assert kafka("topics", "list", "--cluster", "offline")[0] == 5


def test_a_held_change_exits_3(personas, kafka_cluster):
    hold(kafka_cluster, personas["admin"], ["topic.create"])
    name = uniq()
    assert kafka("topics", "create", "--topic", name, "--partitions", "1", "--as", "operator")[0] == 3
    assert not exists(kafka_cluster, name)


@pytest.fixture(scope="module")
def own():
    with running_sandbox(brokers=3, controllers=1, port=0) as cluster:
        yield cluster


@pytest.fixture
def own_cluster(db, own):
    cluster = Cluster.objects.create(name="own", bootstrap_servers=own.bootstrap_servers, request_timeout_s=2)
    make_personas(cluster)
    return cluster


@contextmanager
def console_log():
    """What the command line's log handler (settings.LOGGING: the root logger, on stderr) would print."""
    seen = io.StringIO()
    handler = logging.StreamHandler(seen)
    logging.getLogger().addHandler(handler)
    try:
        yield seen
    finally:
        logging.getLogger().removeHandler(handler)


def test_it_writes_no_library_noise_with_a_broker_stopped(own, own_cluster, capfd):
    name = uniq()
    assert (
        kafka("topics", "create", name, "--partitions", "3", "--replication-factor", "3", "--as", "operator")[
            0
        ]
        == 0
    )
    own.stop_broker(2)
    try:
        gateway_for(own_cluster).close()  # the command connects afresh, as a new process does
        capfd.readouterr()
        with console_log() as log:
            code, out = kafka("topics", "describe", name, "--output", "json", stderr=True)
            assert code == 0 and json.loads(out)["topic"] == name
            code, out = kafka("topics", "list", "--output", "json", stderr=True)
            assert code == 0 and name in [t["name"] for t in json.loads(out)["items"]]
        assert log.getvalue() == ""
        assert capfd.readouterr() == ("", "")
    finally:
        own.start_broker(2)


def test_it_writes_only_its_own_error_for_an_unreachable_cluster(db, capfd):
    with socket.socket() as s:  # a port nobody listens on, new to this process's error log
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    Cluster.objects.create(name="gone", bootstrap_servers=f"127.0.0.1:{port}", request_timeout_s=2)
    capfd.readouterr()
    with console_log() as log:
        code, out = kafka("topics", "list", stderr=True)
    assert (code, log.getvalue(), capfd.readouterr()) == (5, "", ("", ""))
    assert out.startswith("NETWORK_EXCEPTION: The cluster could not be reached.")


def test_it_lets_the_libraries_log_through_from_verbosity_2():
    for verbosity, shown in ((1, ""), (2, "said\n")):
        with console_log() as log, quiet_libraries(verbosity):
            logging.getLogger("asyncio").warning("said")
        assert log.getvalue() == shown
    with console_log() as log:
        logging.getLogger("asyncio").warning("after")
    assert log.getvalue() == "after\n"  # the command's own setting ends with it


def test_it_names_a_known_but_stopped_broker_as_stopped(own, own_cluster, tmp_path):
    name = uniq()
    assert kafka("topics", "create", name, "--replica-assignment", "1:2,2:3", "--as", "operator")[0] == 0
    own.stop_broker(2)
    try:
        for args in (
            ("topics", "create", uniq(), "--replica-assignment", "1:2"),
            ("topics", "add-partitions", name, "--partitions", "3", "--replica-assignment", "2:3"),
        ):
            code, out = kafka(*args, "--as", "operator")
            assert code == 4, out
            assert (
                "Replicas on a broker that is not running: broker 2 is not reachable (down or fenced)." in out
            )
            assert "Unknown broker" not in out
        code, out = kafka("topics", "create", uniq(), "--replica-assignment", "1:7", "--as", "operator")
        assert code == 4 and "Unknown broker ids: 7." in out
        plan = tmp_path / "plan.json"
        plan.write_text(
            json.dumps({"version": 1, "partitions": [{"topic": name, "partition": 0, "replicas": [3, 2]}]})
        )
        code, out = kafka("reassign", "--execute", "--reassignment-json-file", str(plan), "--as", "admin")
        assert code == 4, out
        assert "Replicas on a broker that is not running: broker 2 is not reachable (down or fenced)" in out
        assert "Unknown broker" not in out
        move = tmp_path / "move.json"
        move.write_text(json.dumps({"version": 1, "topics": [{"topic": name}]}))
        code, out = kafka(
            "reassign",
            "--generate",
            "--topics-to-move-json-file",
            str(move),
            "--broker-list",
            "1,2",
            "--as",
            "admin",
        )
        assert (code, out) == (
            4,
            "--broker-list names a broker that is not running: broker 2 is not reachable (down or fenced).",
        )
    finally:
        own.start_broker(2)


def test_the_pages_assignment_field_takes_both_formats_and_names_them():
    from django import forms

    from console.forms.topics import parse_assignment

    assert (
        parse_assignment("1:2,2:3")
        == parse_assignment("1,2\n2,3")
        == parse_assignment("1,2;2,3")
        == [[1, 2], [2, 3]]
    )
    with pytest.raises(forms.ValidationError) as err:
        parse_assignment("1,x")
    assert err.value.messages == [
        "Partition 0: '1,x' is not a list of broker ids. Accepted: kafka-topics' 1:2,2:3 (partitions "
        "separated by commas, replicas by colons) or one partition per line (or ';'-separated) with broker "
        "ids separated by commas (1,2)."
    ]


def test_it_runs_one_command_per_refusal_class_with_the_tables_exit_code(
    personas, kafka_cluster, tmp_path, monkeypatch
):
    """Each refusal class the command line can meet, met by one command: the exit code is the one
    console/refusals.py TABLE gives the class (docs/cli.md), and the class is the expected one."""
    taken = uniq()
    assert (
        kafka(
            "topics", "create", taken, "--partitions", "1", "--replication-factor", "1", "--as", "operator"
        )[0]
        == 0
    )
    files = {
        "batch": "name,partitions\na,many\n",
        "plan": '{"version":1,"partitions":[{"topic":"x"}]}',
        "move": json.dumps({"version": 1, "topics": [{"topic": taken}]}),
        "estate": "clusters: [\n",
    }
    for key, text in files.items():
        (tmp_path / key).write_text(text)
    seen: list[type] = []
    real = refusals.answer

    def recorded(exc):
        seen.append(type(exc))
        return real(exc)

    monkeypatch.setattr(refusals, "answer", recorded)
    op = ("--as", "operator")
    cases = [
        (PolicyViolation, ("topics", "add-partitions", taken, "--partitions", "1", *op)),
        (TopicConfirmationError, ("topics", "delete", taken, *op)),
        (BatchParseError, ("topics", "create", "--file", str(tmp_path / "batch"), *op)),
        (ConfigPlanError, ("configs", "alter", "--topic", taken, "--add-config", "x.y=1", *op)),
        (PlanParseError, ("reassign", "--execute", "--reassignment-json-file", str(tmp_path / "plan"), *op)),
        (PlanRejected, ("reassign", "--generate", "--topics-to-move-json-file", str(tmp_path / "move"),
                          "--broker-list", "99", *op)),
        (ElectionRefused, ("elections", "--election-type", "unclean", "--topic", taken, "--as", "admin")),
        (RequestInvalid, ("requests", "submit", "--kind", "topic.create", "--payload", "{}",
                            "--as", "requester")),
        (AclValidationError, ("acls", "add", "--allow-principal", "nobody", "--operation", "Read",
                                "--topic", taken, *op)),
        (EstateParseError, ("estate", "plan", "-f", str(tmp_path / "estate"), *op)),
        (PermissionDenied, ("topics", "create", uniq(), "--partitions", "1", "--as", "viewer")),
        (KafkaOperationError, ("topics", "describe", uniq("missing"))),  # UNKNOWN_TOPIC_OR_PARTITION: 6
    ]  # fmt: skip
    got = []

    def run(expected: type, args: tuple[str, ...]) -> None:
        seen.clear()
        code, _ = kafka(*args)
        got.append((expected.__name__, [k.__name__ for k in seen if issubclass(k, expected)][:1], code))

    for expected, args in cases:
        run(expected, args)
    hold(kafka_cluster, personas["admin"], ["topic.create"])  # last: it holds every later create
    run(ApprovalRequired, ("topics", "create", uniq(), "--partitions", "1", *op))
    want = [(k.__name__, [k.__name__], refusals.row(k).exit) for k, _ in [*cases, (ApprovalRequired, ())]]
    want[-2] = ("KafkaOperationError", ["KafkaOperationError"], refusals.NOT_FOUND)  # by Kafka's error name
    assert got == want
    assert [code for *_, code in got] == [4] * 10 + [3, 6, 3]  # docs/cli.md: refused 4, denied or held 3
