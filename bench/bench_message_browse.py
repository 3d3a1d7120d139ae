"""Message browser: the oldest 500 messages of a partition, against a raw Fetch of the same range.

Sandbox: one broker, a 1-partition topic holding 500 messages of 1 KB (JSON values, a key and a
header each, written by a producer with the Java client's default 16 KB batches), in a process of its
own (``harness.RemoteSandbox``). Console side: ``console.messages.reads.browse`` with mode "oldest",
count 500 on partition 0, as an admin (the cluster's admin role, not a superuser) holding a data read
grant: the grant check, the rules in force, the topic's leaders and the partition's log start (a read
from the oldest asks for the log starts alone; its end is the high watermark of its Fetch answer), the
gateway's Fetch and decoding of every batch, each message's decoding (JSON), masking (one json_path
rule in force) and the audit row of the read.
Shown, not gated: the gateway's ``read_records`` alone (the Kafka layer's part), and the raw side of the
same work (``same_work``: the leader, the bounds, the Fetch and each value parsed, masked and
pretty-printed; what any browser that shows masked JSON must do, without the grant and the audit).

Floors (the fastest of this run is the floor): a raw socket's Fetch of the same range (a plain socket
held open across runs), its answer decoded by kafka-python's protocol and record classes; and a
warmed confluent-kafka Consumer (created once, no group joined, nothing committed) that ``assign``s
the partition at offset 0 and ``consume``s until the 500 messages are in, ``unassign`` after each run
(untimed). librdkafka decodes in C; with ``fetch.wait.max.ms`` 0 its one Fetch of the range (its debug
log shows one "Fetch topic ... at offset 0" and "Enqueue 500 message(s)" per run) takes ~0.7-1 ms
here and on Kafka 4.1, against ~3 ms for the socket + kafka-python (~2.6 ms with the console's own
batch decoder in kafka-python's place). With the default 500 ms (the ~0.4 s once measured here) or any other
wait, back-to-back runs cost about that wait, on the sandbox and on Kafka 4.1 alike (5 ms: ~7.5 ms,
100 ms: ~102 ms): librdkafka has one Fetch per broker in flight, and after the range is read it sends
one at the high watermark that the broker holds for the whole wait; the next run's Fetch at offset 0
goes after it (runs 0.2 s apart take ~2 ms even with a 100 ms wait). kafka-python's KafkaConsumer
(``seek`` to 0, ``poll``) takes ~6.6 ms.
GC: setup frozen for both sides. 7 alternating runs, median gated.
Prints ``RESULT message_browse ratio=<console/floor> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import compare, console_on, gate  # noqa: E402
from bench.raw_clients import Wire  # noqa: E402

TOPIC = "bench.messages"
COUNT = 500
VALUE_BYTES = 1024
GOAL = 1.5
FETCH_BYTES = 4 * 1024 * 1024  # the browser's read limit (console.messages.core.MAX_BYTES)


def build_sandbox():
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=1, controllers=1, port=0, speed=0, seed="bench-messages")
    cluster.start()
    cluster.create_topic(TOPIC, 1, 1)
    return cluster


def fill(bootstrap: str) -> None:
    """500 messages of 1 KB: JSON with a padded note, a key and a header; 16 KB batches (Java's default)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "batch.size": 16384, "linger.ms": 5})
    for i in range(COUNT):
        body = {"order": i, "customer": {"email": f"user{i}@example.com", "tier": "gold"}, "note": ""}
        body["note"] = "x" * (VALUE_BYTES - len(json.dumps(body)))
        producer.produce(TOPIC, key=f"key-{i}".encode(), value=json.dumps(body).encode(), partition=0,
                         headers=[("trace-id", f"t-{i:06d}".encode())])  # fmt: skip
    if producer.flush(60):
        raise SystemExit("the bench messages were not all written")


def console_sides(cluster) -> tuple[dict, dict]:
    """The gated browse and the shown gateway read."""
    import time

    from django.contrib.auth import get_user_model

    from console.clusters.actions import gateway_for
    from console.messages import actions, reads
    from console.messages.core import BrowseQuery
    from console.models import Role, RoleBinding

    boss = get_user_model().objects.get(username="bench")
    admin = get_user_model().objects.create_user("data-admin", password="bench")
    RoleBinding.objects.create(cluster=cluster, user=admin, role=Role.ADMIN)
    actions.grant(actor=boss, cluster=cluster, user=admin, prefix="", read=True)
    actions.add_rule(
        actor=boss, cluster=cluster, kind="json_path", expression="$.customer.email", prefix="bench."
    )
    query = BrowseQuery(mode="oldest", partition=0, count=COUNT)
    gw = gateway_for(cluster)

    def browse() -> None:
        result = reads.browse(actor=admin, cluster=cluster, topic=TOPIC, query=query)
        assert len(result.messages) == COUNT and result.masked, (len(result.messages), result.stopped)

    def read_records() -> None:
        got = gw.read_records(
            TOPIC, {0: 0}, max_records=COUNT, max_bytes=FETCH_BYTES, deadline_s=time.monotonic() + 5
        )
        assert len(got[0].records) == COUNT, got[0]

    return {"console browse (oldest 500, masked, audited)": browse}, {
        "console gateway read_records (shown)": read_records
    }


def raw_fetch():
    """The floors' Fetch (v12, a consumer's) of partition 0 from offset 0, kafka-python's protocol class."""
    from kafka.protocol.consumer import FetchRequest

    topic_cls = FetchRequest.FetchTopic
    return FetchRequest(
        replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=FETCH_BYTES, isolation_level=0, session_id=0,
        session_epoch=-1, forgotten_topics_data=[], rack_id="",
        topics=[topic_cls(topic=TOPIC, partitions=[
            topic_cls.FetchPartition(partition=0, fetch_offset=0, log_start_offset=-1, partition_max_bytes=FETCH_BYTES)
        ])],
    )  # fmt: skip


def floors(bootstrap: str) -> dict:
    from kafka.protocol.consumer import FetchResponse
    from kafka.record.memory_records import MemoryRecords

    wire = Wire(bootstrap, sockets_per_broker=1)
    request = raw_fetch()

    def raw_socket() -> None:
        (size,) = wire.exchange([(0, request, 12)])
        buffer = wire._buffers[(0, 0)]
        answer = FetchResponse.decode(bytes(buffer[:size]), version=12, header=True)
        records = MemoryRecords(bytes(answer.responses[0].partitions[0].records))
        n = 0
        while (batch := records.next_batch()) is not None:
            for record in batch:
                n += record.value is not None
        assert n == COUNT, n

    return {
        "raw socket Fetch + kafka-python record decoding": raw_socket,
        "confluent-kafka Consumer assign at 0 + consume 500": confluent_consumer(bootstrap),
    }


def confluent_consumer(bootstrap: str) -> tuple:
    """The warmed librdkafka consumer's read of the range: (prepare, run, cleanup) for ``alternate``."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-browse-floor",  # never joined (assign), nothing committed
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "fetch.wait.max.ms": 0,  # else each run waits for the Fetch in flight (module docstring)
            "fetch.max.bytes": FETCH_BYTES,
            "max.partition.fetch.bytes": FETCH_BYTES,
            "enable.partition.eof": False,
        }
    )

    def run(_) -> None:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        first, last, n = None, None, 0
        while n < COUNT:
            for message in consumer.consume(COUNT - n, timeout=5):
                if message.error() is not None:
                    raise RuntimeError(message.error())
                n += message.value() is not None
                first = message.offset() if first is None else first
                last = message.offset()
        assert (first, last, n) == (0, COUNT - 1, COUNT), (first, last, n)

    def stop(_, __) -> None:
        consumer.unassign()  # no fetching (at the high watermark) while the other sides run

    run(None)  # warm: connections, metadata, the leader
    stop(None, None)
    return (lambda: None, run, stop)


def same_work(bootstrap: str) -> dict:
    """Shown, not gated: the least raw work for the page's result, not only its Fetch - the topic's
    leader (Metadata of the topic), the partition's bounds (ListOffsets earliest and latest, in
    parallel), the Fetch and its record decoding, and each value parsed, its masked field replaced
    and pretty-printed (orjson in and out). No grant, no audit row."""
    import orjson
    from kafka.protocol.consumer import FetchResponse
    from kafka.protocol.consumer.offsets import ListOffsetsResponse
    from kafka.protocol.metadata import MetadataRequest, MetadataResponse
    from kafka.record.memory_records import MemoryRecords

    from bench.raw_clients import raw_list_offsets

    wire = Wire(bootstrap, sockets_per_broker=2)
    meta = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(topic_id=None, name=TOPIC)],
        allow_auto_topic_creation=False,
    )
    fetch = raw_fetch()

    def answer(key: tuple[int, int], size: int, cls, version: int):
        return cls.decode(bytes(wire._buffers[key][:size]), version=version, header=True)

    def raw_same_work() -> None:
        (size,) = wire.exchange([(0, meta, 12)])
        assert answer((0, 0), size, MetadataResponse, 12).topics[0].partitions[0].leader_id >= 0
        sizes = wire.exchange(
            [(0, raw_list_offsets({TOPIC: [0]}, -2), 7), (0, raw_list_offsets({TOPIC: [0]}, -1), 7)]
        )
        bounds = [
            answer((0, i), s, ListOffsetsResponse, 7).topics[0].partitions[0].offset
            for i, s in enumerate(sizes)
        ]
        assert bounds == [0, COUNT], bounds
        (size,) = wire.exchange([(0, fetch, 12)])
        records = MemoryRecords(
            bytes(answer((0, 0), size, FetchResponse, 12).responses[0].partitions[0].records)
        )
        shown = []
        while (batch := records.next_batch()) is not None:
            for record in batch:
                doc = orjson.loads(record.value)
                doc["customer"]["email"] = "***"
                shown.append(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
        assert len(shown) == COUNT, len(shown)

    return {
        "raw same work: Metadata + ListOffsets + Fetch + decode + each value parsed, masked, shown (shown)": raw_same_work
    }


def main() -> None:
    with console_on(build_sandbox) as (sandbox, _client, cluster):
        fill(sandbox.bootstrap_servers)
        ours, shown = console_sides(cluster)
        ratio = compare(
            ours,
            floors(sandbox.bootstrap_servers),
            shown={**shown, **same_work(sandbox.bootstrap_servers)},
            note="the same 500 records, fetched and decoded by the fastest raw client of this run",
        )
    gate("message_browse", ratio, GOAL)


if __name__ == "__main__":
    main()
