"""``manage.py kafka messages produce|consume`` against the sandbox or a real Kafka 4.1: what the console
produced arrives with its key and headers, and ``consume`` prints what Apache Kafka's own
``kafka-console-consumer.sh`` prints for the same partition, offsets and ``--property`` flags (the tool
is run when ``$KAFKA_HOME/bin`` has it: /opt/realkafka by default; skipped otherwise).

Against a real cluster: ``KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:39092 .venv/bin/python -m pytest
tests/contract/test_messages_cli.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from console.models import Cluster
from tests.conftest import make_personas
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db

KAFKA_HOME = Path(os.environ.get("KAFKA_HOME", "/opt/realkafka/kafka_2.13-4.1.0"))
TOOL = KAFKA_HOME / "bin" / "kafka-console-consumer.sh"
PROPERTIES = ("print.timestamp", "print.partition", "print.offset", "print.headers", "print.key")
LINES = 'k1\tfirst value\nk2\t{"n": 2, "s": "two"}\nk3\tthird, with a tab\there\n'


def tool_consume(servers: str, topic: str, *args: str) -> tuple[str, str]:
    """kafka-console-consumer.sh's stdout and stderr (no group: --partition)."""
    env = {
        **os.environ,
        "KAFKA_JMX_OPTS": "-Djava.rmi.server.hostname=127.0.0.1",
        "KAFKA_HEAP_OPTS": "-Xmx256m",
    }
    done = subprocess.run(
        [str(TOOL), "--bootstrap-server", servers, "--topic", topic, *args],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


@pytest.fixture
def registered(endpoints, topics):
    cluster = Cluster.objects.create(name="contract", bootstrap_servers=endpoints.bootstrap_servers)
    make_personas(cluster)
    return endpoints, topics.create(partitions=2)


def test_consume_prints_what_kafka_console_consumer_prints(registered, monkeypatch):
    endpoints, topic = registered
    monkeypatch.setattr("sys.stdin", io.StringIO(LINES))
    code, out = kafka(
        "messages", "produce", "--topic", topic, "--partition", "1", "--property", "parse.key=true",
        "--header", "trace=abc", "--header", "origin=contract", "--as", "admin",
    )  # fmt: skip
    assert code == 0, out
    assert [line.split()[:2] for line in out.splitlines()[1:]] == [["1", "0"], ["1", "1"], ["1", "2"]]
    flags = [a for p in PROPERTIES for a in ("--property", f"{p}=true")]
    code, ours = kafka(
        "messages", "consume", "--topic", topic, "--partition", "1", "--offset", "0", "--max-messages", "3",
        *flags, "--as", "admin", stderr=True,
    )  # fmt: skip
    assert code == 0, ours
    lines = ours.splitlines()
    assert lines[-1] == "Processed a total of 3 messages"
    assert [line.split("\t")[1:] for line in lines[:3]] == [
        ["Partition:1", "Offset:0", "trace:abc,origin:contract", "k1", "first value"],
        ["Partition:1", "Offset:1", "trace:abc,origin:contract", "k2", '{"n": 2, "s": "two"}'],
        ["Partition:1", "Offset:2", "trace:abc,origin:contract", "k3", "third, with a tab", "here"],
    ]
    assert all(line.startswith("CreateTime:") for line in lines[:3])
    if not TOOL.exists():
        pytest.skip(f"no {TOOL}: the comparison with Kafka's own tool needs KAFKA_HOME")
    stdout, stderr = tool_consume(
        endpoints.bootstrap_servers, topic, "--partition", "1", "--offset", "0", "--max-messages", "3", *flags
    )
    assert stdout.splitlines() == lines[:3]
    assert "Processed a total of 3 messages" in stderr
    for props in (("print.partition=true", "print.key=true", "print.value=false"), ("print.value=false",)):
        flags = [a for p in props for a in ("--property", p)]
        code, ours = kafka(
            "messages", "consume", "--topic", topic, "--partition", "1", "--offset", "1", "--max-messages", "2",
            *flags, "--as", "admin",
        )  # fmt: skip
        stdout, _ = tool_consume(
            endpoints.bootstrap_servers,
            topic,
            "--partition",
            "1",
            "--offset",
            "1",
            "--max-messages",
            "2",
            *flags,
        )
        assert code == 0 and ours.removesuffix("Processed a total of 2 messages\n") == stdout, props


def test_from_the_beginning_starts_at_the_log_start_as_kafka_console_consumer_does(registered):
    """``--from-beginning`` (the browser's oldest read: the log starts asked for alone, the end from
    the Fetch answers) after the partition's head was deleted: what Kafka's own tool prints."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    endpoints, topic = registered
    from console.clusters.actions import gateway_for

    gw = gateway_for(Cluster.objects.get(name="contract"))
    for i in range(8):
        gw.produce_record(topic, partition=0, key=f"k{i}".encode(), value=f"v{i}".encode())
    admin = AdminClient(endpoints.client_config())
    for future in admin.delete_records([TopicPartition(topic, 0, 3)]).values():
        future.result(30)
    flags = [a for p in ("print.offset", "print.key") for a in ("--property", f"{p}=true")]
    code, ours = kafka(
        "messages", "consume", "--topic", topic, "--partition", "0", "--from-beginning", "--max-messages",
        "10", "--timeout-ms", "3000", *flags, "--as", "admin", stderr=True,
    )  # fmt: skip
    assert code == 0, ours
    lines = ours.splitlines()
    assert lines[:5] == [f"Offset:{i}\tk{i}\tv{i}" for i in range(3, 8)]
    assert lines[-1] == "Processed a total of 5 messages"
    if not TOOL.exists():
        pytest.skip(f"no {TOOL}: the comparison with Kafka's own tool needs KAFKA_HOME")
    stdout, _ = tool_consume(
        endpoints.bootstrap_servers, topic, "--partition", "0", "--from-beginning", "--max-messages", "5",
        *flags,
    )  # fmt: skip
    assert stdout.splitlines() == lines[:5]
