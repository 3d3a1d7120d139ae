"""``manage.py kafka messages consume|produce``: kafka-console-consumer's options and output lines,
kafka-console-producer's line reading, the data grants and exit codes."""

from __future__ import annotations

import io
import json
import threading
import time

import pytest

from console.clusters.actions import gateway_for
from console.management.cli.base import NOT_FOUND
from console.management.cli.messages import LineFormat, format_message, line_format
from console.messages import reads as message_reads
from console.messages.core import ShownMessage
from console.models import AuditEvent, DataGrant
from tests.unit.kafka_cli import kafka
from tests.unit.matrix_world import uniq

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic(sandbox, kafka_cluster, personas):
    name = uniq("msgcli")
    sandbox.create_topic(name, partitions=2, replication_factor=1)
    return name


def consume(*args: str) -> tuple[int, str]:
    return kafka("messages", "consume", *args, stderr=True)


def produce_lines(monkeypatch, text: str, *args: str) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    return kafka("messages", "produce", *args, stderr=True)


def message(**fields) -> ShownMessage:
    base = dict(
        partition=0, offset=5, timestamp=1700000000000, timestamp_type="CreateTime", key="k", key_kind="text",
        value="v", value_kind="text", schema_id=None, headers=(), size=2, masked_by=(),
    )  # fmt: skip
    return ShownMessage(**{**base, **fields})


def test_it_formats_a_message_as_kafkas_default_message_formatter():
    every = line_format(
        {"print.timestamp": "true", "print.partition": "true", "print.offset": "true", "print.key": "TRUE "}
    )
    assert format_message(message(), every) == "CreateTime:1700000000000\tPartition:0\tOffset:5\tk\tv\n"
    assert format_message(message(), LineFormat()) == "v\n"
    headers = line_format({"print.headers": "true", "print.key": "true", "key.separator": " | "})
    shown = message(headers=(("a", "1"), ("b", "2")), key="", key_kind="null")
    assert format_message(shown, headers) == "a:1,b:2 | null | v\n"
    assert format_message(message(), headers) == "NO_HEADERS | k | v\n"
    # Kafka 4.1 prints the printed columns joined, then the line; "yes" is no "true" (parseBoolean)
    no_value = line_format({"print.key": "true", "print.value": "false", "print.offset": "yes"})
    assert format_message(message(), no_value) == "k\n"
    assert format_message(message(), line_format({"print.value": "false"})) == ""
    pretty = message(value='{\n  "a": [\n    1\n  ]\n}', value_kind="json", timestamp=None)
    assert format_message(pretty, line_format({"print.timestamp": "true"})) == 'CreateTime:-1\t{"a": [1]}\n'


def test_it_produces_lines_and_consumes_them_as_the_console_consumer_prints_them(monkeypatch, topic):
    code, out = produce_lines(
        monkeypatch, "k1:one\nk2:two\nk3:three\n", "--topic", topic, "--partition", "0",
        "--property", "parse.key=true", "--property", "key.separator=:", "--header", "trace=t1", "--as", "admin",
    )  # fmt: skip
    assert code == 0, out
    assert out.splitlines()[0].split() == ["PARTITION", "OFFSET", "TIMESTAMP"]
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [r[:2] for r in rows] == [["0", "0"], ["0", "1"], ["0", "2"]]
    code, out = consume(
        "--topic", topic, "--partition", "0", "--offset", "1", "--max-messages", "2", "--property",
        "print.partition=true", "--property", "print.offset=true", "--property", "print.key=true",
        "--property", "print.headers=true", "--as", "admin",
    )  # fmt: skip
    assert code == 0, out
    assert out.splitlines() == [
        "Partition:0\tOffset:1\ttrace:t1\tk2\ttwo",
        "Partition:0\tOffset:2\ttrace:t1\tk3\tthree",
        "Processed a total of 2 messages",
    ]
    code, out = consume(
        "--topic", topic, "--from-beginning", "--property", "print.timestamp=true", "--as", "admin"
    )
    stamps = [int(line.split("\t")[0].removeprefix("CreateTime:")) for line in out.splitlines()[:3]]
    assert code == 0 and all(s > 1_600_000_000_000 for s in stamps)
    assert [line.split("\t")[1] for line in out.splitlines()[:3]] == ["one", "two", "three"]
    assert out.splitlines()[3:] == ["Processed a total of 3 messages"]
    assert AuditEvent.objects.filter(action="messages.read", actor_name="admin").count() == 2
    assert AuditEvent.objects.filter(action="messages.produce", outcome="success").count() == 3


def test_a_line_without_its_key_separator_sends_nothing(monkeypatch, topic, sandbox):
    code, out = produce_lines(
        monkeypatch,
        "k1\tone\nno separator\n",
        "--topic",
        topic,
        "--property",
        "parse.key=true",
        "--as",
        "admin",
    )
    assert code == 4 and "No key separator found on line number 2: 'no separator'" in out
    assert not AuditEvent.objects.filter(action="messages.produce").exists()
    assert sum(p.end_offset for p in sandbox.state.topics[topic].partitions) == 0


def test_max_messages_pages_past_one_request(monkeypatch, topic):
    monkeypatch.setattr("console.management.cli.messages.core.MAX_MESSAGES", 2)
    assert (
        produce_lines(monkeypatch, "a\nb\nc\nd\ne\n", "--topic", topic, "--partition", "1", "--as", "admin")[
            0
        ]
        == 0
    )
    code, out = consume(
        "--topic", topic, "--partition", "1", "--offset", "earliest", "--max-messages", "4", "--as", "admin"
    )
    assert (code, out.splitlines()) == (0, ["a", "b", "c", "d", "Processed a total of 4 messages"])
    # without --max-messages a read that does not follow is one request
    code, out = consume("--topic", topic, "--partition", "1", "--offset", "3", "--as", "admin")
    assert (code, out.splitlines()) == (0, ["d", "e", "Processed a total of 2 messages"])


def test_follow_waits_for_new_messages_until_the_timeout(monkeypatch, topic, kafka_cluster):
    gw = gateway_for(kafka_cluster)
    # A read from latest shows only what arrives after its first request found the end (as the tool):
    # the message is sent once that request has answered, however slow the machine.
    browse, first_answered = message_reads.browse, threading.Event()

    def noted_browse(**kwargs):
        result = browse(**kwargs)
        first_answered.set()
        return result

    monkeypatch.setattr(message_reads, "browse", noted_browse)

    def later() -> None:
        assert first_answered.wait(10)
        time.sleep(0.2)
        gw.produce_record(topic, partition=1, key=b"late", value=b"arrived", headers=[("h", b"1")])

    sender = threading.Thread(target=later)
    sender.start()
    started = time.monotonic()
    code, out = consume(
        "--topic", topic, "--partition", "1", "--timeout-ms", "1500", "--property", "print.key=true", "--as", "admin"
    )  # fmt: skip
    sender.join()
    assert code == 0 and out.splitlines() == ["late\tarrived", "Processed a total of 1 messages"]
    assert 1.5 <= time.monotonic() - started < 6
    code, out = consume(
        "--topic", topic, "--from-beginning", "--follow", "--max-messages", "1", "--as", "admin"
    )
    assert (code, out.splitlines()) == (0, ["arrived", "Processed a total of 1 messages"])


def test_filters_decoding_and_json_output(monkeypatch, topic):
    lines = '{"user": "ann", "n": 1}\n{"user": "bob", "n": 2}\nnot json\n'
    assert produce_lines(monkeypatch, lines, "--topic", topic, "--partition", "0", "--as", "admin")[0] == 0
    code, out = consume("--topic", topic, "--from-beginning", "--json-path", "$.user=bob", "--as", "admin")
    assert (code, out.splitlines()) == (0, ['{"user": "bob", "n": 2}', "Processed a total of 1 messages"])
    code, out = consume(
        "--topic", topic, "--from-beginning", "--value-contains", "not", "--decode", "hex", "--as", "admin"
    )
    assert (code, out.splitlines()) == (0, ["6e 6f 74 20 6a 73 6f 6e", "Processed a total of 1 messages"])
    code, out = consume(
        "--topic",
        topic,
        "--partition",
        "0",
        "--offset",
        "0",
        "--max-messages",
        "1",
        "--output",
        "json",
        "--as",
        "admin",
    )
    first = json.loads(out.splitlines()[0])
    assert code == 0 and (first["offset"], first["value"], first["value_kind"]) == (
        0,
        '{"user": "ann", "n": 1}',
        "text",
    )


def test_permissions_and_usage_errors_have_their_exit_codes(monkeypatch, topic, personas, kafka_cluster):
    code, out = consume("--topic", topic, "--from-beginning", "--as", "viewer")
    assert (
        code == 3 and f"You need the 'data.read' permission on cluster 'sandbox' for topic '{topic}'." in out
    )
    code, out = produce_lines(monkeypatch, "", "--topic", topic, "--value", "x", "--as", "viewer")
    assert code == 3 and "data.write" in out
    assert consume("--topic", topic, "--from-beginning")[0] == 2  # no --as
    code, out = consume("--topic", topic, "--offset", "3", "--as", "admin")
    assert code == 2 and "The partition is required when offset is specified." in out
    code, out = consume(
        "--topic", topic, "--partition", "0", "--offset", "3", "--from-beginning", "--as", "admin"
    )
    assert code == 2 and "Options from-beginning and offset cannot be specified together." in out
    assert consume("--topic", topic, "--partition", "0", "--offset", "-3", "--as", "admin")[0] == 2
    code, out = consume("--topic", "no-such-topic-anywhere", "--from-beginning", "--as", "admin")
    assert code == NOT_FOUND and "There is no topic 'no-such-topic-anywhere' on cluster 'sandbox'." in out
    DataGrant.objects.create(cluster=kafka_cluster, user=personas["viewer"], prefix=topic, read=True)
    code, out = consume("--topic", topic, "--from-beginning", "--as", "viewer")
    assert (code, out.splitlines()) == (0, ["Processed a total of 0 messages"])


def test_timestamp_starts_at_the_first_message_at_or_after_that_time(monkeypatch, topic):
    code, out = produce_lines(monkeypatch, "a\nb\n", "--topic", topic, "--partition", "0", "--as", "admin")
    stamps = [int(line.split()[2]) for line in out.splitlines()[1:]]
    assert code == 0 and len(stamps) == 2
    code, out = consume("--topic", topic, "--timestamp", str(stamps[0]), "--as", "admin")
    assert (code, out.splitlines()) == (0, ["a", "b", "Processed a total of 2 messages"])
    code, out = consume("--topic", topic, "--timestamp", "2100-01-01T00:00", "--as", "admin")
    assert (code, out.splitlines()) == (0, ["Processed a total of 0 messages"])
    code, out = consume("--topic", topic, "--timestamp", "yesterday", "--as", "admin")
    assert code == 2 and "--timestamp: 'yesterday' is neither epoch milliseconds nor an ISO 8601 time" in out
