"""Message browser: the oldest 500 messages of a partition, against a raw Fetch of the same range.

Sandbox: one broker, a 1-partition topic holding 500 messages of 1 KB (JSON values, a key and a
header each, written by a producer with the Java client's default 16 KB batches), in a process of its
own (``harness.RemoteSandbox``). Console side: ``console.messages.reads.browse`` with mode "oldest",
count 500 on partition 0, as an admin (the cluster's admin role, not a superuser) holding a data read
grant: the grant check, the partition bounds, the gateway's Fetch and decoding of every batch, each
message's decoding (JSON), masking (one json_path rule in force) and the audit row of the read.
Shown, not gated: the gateway's ``read_records`` alone (the Kafka layer's part), and the raw side of the
same work (``same_work``: the leader, the bounds, the Fetch and each value parsed, masked and
pretty-printed; what any browser that shows masked JSON must do, without the grant and the audit).

Floor: a raw socket's Fetch of the same range (a plain socket held open across runs), its answer
decoded by kafka-python's protocol and record classes (the decoding every reader of the range must
do; nothing of the console). A warmed confluent-kafka Consumer (``assign`` at offset 0, then
``consume`` until the 500 messages are in) was measured as the other candidate once: median ~0.4 s
here, ~40x the socket (not investigated further), so the socket is the floor.
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

    return {"raw socket Fetch + kafka-python record decoding": raw_socket}


def same_work(bootstrap: str) -> dict:
    """Shown, not gated: the least raw work for the page's result, not only its Fetch - the topic's
    leader (Metadata of the topic), the partition's bounds (ListOffsets earliest and latest, in
    parallel), the Fetch and its record decoding, and each value parsed, its masked field replaced
    and pretty-printed (stdlib json in, orjson out, as the console does). No grant, no audit row."""
    import json as stdlib_json

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
                doc = stdlib_json.loads(record.value)
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
            note="the same 500 records fetched on a plain socket and decoded by kafka-python",
        )
    gate("message_browse", ratio, GOAL)


if __name__ == "__main__":
    main()
