"""console.kafka._metadata.decode_metadata: a Metadata response body (versions 9-13) decoded in C
straight into the console's packed form, compared field by field and byte by byte with what
kafka-python's own decoder and ``marshal.dumps(..., 2)`` give, on the sandbox's answers and on
crafted ones, plus every truncation, random corruption, a 1M-partition-sized answer and leaks."""

from __future__ import annotations

import gc
import io
import marshal
import re
import socket
import struct
import time
import tracemalloc
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from console.kafka._metadata import decode_metadata
from sandbox.testing import running_sandbox

VERSIONS = range(9, 14)
MALFORMED = re.compile(r"^malformed Metadata response: .+ at byte \d+$")
Broker = MetadataResponse.MetadataResponseBroker
Topic = MetadataResponse.MetadataResponseTopic
Partition = Topic.MetadataResponsePartition


# -- what the decoder must answer, from kafka-python's decoded response ----------------------------


def expected(resp: Any, version: int) -> tuple:
    topics = []
    for t in resp.topics:
        parts = [
            (p.partition_index, p.leader_id, list(p.replica_nodes), list(p.isr_nodes)) for p in t.partitions
        ]
        lowest = min(parts, key=lambda p: p[0], default=None)
        topics.append(
            (
                t.name,
                t.error_code,
                t.is_internal,
                marshal.dumps(parts, 2),
                len(parts),
                len(lowest[2]) if lowest else 0,
                sum(len(p[3]) < len(p[2]) for p in parts),
                sum(p[1] < 0 for p in parts),
            )
        )
    brokers = [(b.node_id, b.host, b.port, b.rack) for b in resp.brokers]
    error = resp.error_code if version >= 13 else 0
    return (resp.throttle_time_ms, resp.cluster_id, resp.controller_id, brokers, topics, error, counts(resp))


def counts(resp: Any) -> list[tuple[int, int, int, int, int, int]]:
    """Per broker (replicas, leaders, under-replicated, out of ISR, offline) over the named topics'
    partitions, counted from kafka-python's objects as the Brokers page counts them."""
    c: dict[int, list[int]] = {}
    for t in resp.topics:
        if t.name is None:
            continue
        for p in t.partitions:
            reps, isr, leader = p.replica_nodes, p.isr_nodes, p.leader_id
            for r in reps:
                row = c.setdefault(r, [0] * 5)
                row[0] += 1
                row[4] += leader < 0
                if len(isr) < len(reps):
                    row[2] += 1
                    row[3] += r not in isr
            if leader >= 0:
                c.setdefault(leader, [0] * 5)[1] += 1
    return [(b, *row) for b, row in sorted(c.items())]


def assert_decodes_as_kafka_python(body: bytes, version: int) -> tuple:
    got = decode_metadata(body, version)
    assert got == expected(MetadataResponse.decode(body, version=version), version)
    assert all(type(t[2]) is bool and type(t[3]) is bytes for t in got[4])
    return got


# -- crafted answers: kafka-python's encoder, and a hand encoder that adds unknown tagged fields ----

# (name, error, internal, [(index, leader, replicas, isr, offline)])
TOPICS = [
    (
        "orders",
        0,
        False,
        [(1, 2, [2, 3, 1], [2, 3], []), (0, 1, [1, 2, 3], [1, 2, 3], []), (2, -1, [3], [], [3])],
    ),
    ("__consumer_offsets", 0, True, [(0, 1, [1], [1], [])]),
    ("empty", 0, False, []),
    ("zażółć-ünïcödé", 0, False, [(0, 2**31 - 1, [2**31 - 1, -(2**31)], [-(2**31)], [-(2**31)])]),
    ("denied", 29, False, []),
    (None, 100, False, []),  # a topic id unknown to the broker: null name (v12+)
]
BROKERS = [(1, "broker-1.example", 9092, "rack-a"), (2, "10.0.0.2", 9093, None), (3, "ü.example", 1, "räck")]


def crafted(version: int, topics=TOPICS, brokers=BROKERS, cluster_id: str | None = "cid-1") -> Any:
    if version < 12:
        topics = [t for t in topics if t[0] is not None]
    return MetadataResponse(
        version=version,
        throttle_time_ms=7,
        brokers=[Broker(node_id=n, host=h, port=p, rack=r) for n, h, p, r in brokers],
        cluster_id=cluster_id,
        controller_id=2,
        topics=[
            Topic(
                error_code=e,
                name=name,
                topic_id=uuid.UUID(int=i + 1),
                is_internal=internal,
                partitions=[
                    Partition(
                        error_code=0,
                        partition_index=i,
                        leader_id=ld,
                        leader_epoch=4,
                        replica_nodes=r,
                        isr_nodes=isr,
                        offline_replicas=off,
                    )
                    for i, ld, r, isr, off in parts
                ],
                authorized_operations=None,
            )
            for i, (name, e, internal, parts) in enumerate(topics)
        ],
        authorized_operations=None,
        error_code=35 if version >= 13 else 0,
    )


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def cstr(s: str | None) -> bytes:
    return b"\0" if s is None else uvarint(len(s.encode()) + 1) + s.encode()


def ids(xs: list[int]) -> bytes:
    return uvarint(len(xs) + 1) + struct.pack(f">{len(xs)}i", *xs)


def tagged(extra: bool) -> bytes:
    """An empty tagged-field section, or two fields no version of Metadata defines."""
    return (
        b"\x02" + uvarint(7) + uvarint(3) + b"abc" + uvarint(300) + uvarint(200) + bytes(200)
        if extra
        else b"\0"
    )


def partition(version: int, index: int, leader: int, replicas, isr, offline, extra: bool = False) -> bytes:
    return struct.pack(">hiii", 0, index, leader, 4) + ids(replicas) + ids(isr) + ids(offline) + tagged(extra)


def topic(version: int, i: int, name, error: int, internal: bool, parts: bytes, n: int, extra=False) -> bytes:
    head = struct.pack(">h", error) + cstr(name) + (uuid.UUID(int=i + 1).bytes if version >= 10 else b"")
    ops = struct.pack(">i", -(2**31))
    return head + bytes([internal]) + uvarint(n + 1) + parts + ops + tagged(extra)


def body(version: int, topics: list[bytes], brokers=BROKERS, extra=False, cluster_id="cid-1") -> bytes:
    out = [struct.pack(">i", 7), uvarint(len(brokers) + 1)]
    out += [
        struct.pack(">i", n) + cstr(h) + struct.pack(">i", p) + cstr(r) + tagged(extra)
        for n, h, p, r in brokers
    ]
    out += [cstr(cluster_id), struct.pack(">i", 2), uvarint(len(topics) + 1), *topics]
    out += [
        struct.pack(">i", -(2**31)) if version <= 10 else b"",
        struct.pack(">h", 35) if version >= 13 else b"",
    ]
    return b"".join([*out, tagged(extra)])


def encoded_topics(version: int, topics, extra: bool) -> list[bytes]:
    """``(name, error, internal, partitions)`` specs as hand-encoded topic entries."""
    return [
        topic(
            version,
            i,
            name,
            e,
            internal,
            b"".join(partition(version, *p, extra) for p in parts),
            len(parts),
            extra,
        )
        for i, (name, e, internal, parts) in enumerate(topics)
    ]


def hand_encoded(version: int, extra: bool) -> bytes:
    topics = [t for t in TOPICS if version >= 12 or t[0] is not None]
    return body(version, encoded_topics(version, topics, extra), extra=extra)


@pytest.mark.parametrize("version", VERSIONS)
def test_it_decodes_crafted_answers_as_kafka_python_does(version):
    encoded = crafted(version).encode()
    assert hand_encoded(version, extra=False) == encoded  # the hand encoder writes what kafka-python does
    got = assert_decodes_as_kafka_python(encoded, version)
    assert got[:4] == (7, "cid-1", 2, BROKERS)
    assert got[5] == (35 if version >= 13 else 0)
    orders, offsets, empty, unicode_topic, denied, *unknown = got[4]
    parts = [(1, 2, [2, 3, 1], [2, 3]), (0, 1, [1, 2, 3], [1, 2, 3]), (2, -1, [3], [])]
    assert orders == ("orders", 0, False, marshal.dumps(parts, 2), 3, 3, 2, 1)  # rf of partition 0
    assert marshal.loads(orders[3]) == parts
    assert offsets == ("__consumer_offsets", 0, True, marshal.dumps([(0, 1, [1], [1])], 2), 1, 1, 0, 0)
    assert empty == ("empty", 0, False, marshal.dumps([], 2), 0, 0, 0, 0)
    big = [(0, 2**31 - 1, [2**31 - 1, -(2**31)], [-(2**31)])]
    assert unicode_topic == ("zażółć-ünïcödé", 0, False, marshal.dumps(big, 2), 1, 2, 1, 0)
    assert denied == ("denied", 29, False, marshal.dumps([], 2), 0, 0, 0, 0)
    assert unknown == ([(None, 100, False, marshal.dumps([], 2), 0, 0, 0, 0)] if version >= 12 else [])


@pytest.mark.parametrize("version", VERSIONS)
def test_it_skips_unknown_tagged_fields_everywhere(version):
    encoded = hand_encoded(version, extra=True)
    assert decode_metadata(encoded, version) == decode_metadata(crafted(version).encode(), version)
    assert_decodes_as_kafka_python(encoded, version)


def test_it_reads_any_bytes_like_object_and_no_cluster_id_or_brokers():
    encoded = crafted(13, brokers=[], cluster_id=None).encode()
    want = decode_metadata(encoded, 13)
    assert want[:4] == (7, None, 2, [])
    assert decode_metadata(bytearray(encoded), 13) == want
    assert decode_metadata(memoryview(b"xx" + encoded)[2:], 13) == want


@pytest.mark.parametrize("version", [0, 8, 14, -1, 2**70])
def test_it_refuses_a_version_outside_9_to_13(version):
    with pytest.raises(ValueError, match="not one of 9-13"):
        decode_metadata(crafted(12).encode(), version)


def _replace(data: bytes, old: bytes, new: bytes) -> bytes:
    assert data.count(old) == 1
    return data.replace(old, new)


def malformed_cases() -> list[tuple[str, int, bytes, str]]:
    v12, v11 = crafted(12).encode(), crafted(11).encode()
    host = cstr("broker-1.example")
    return [
        ("trailing", 12, v12 + b"\0", f"bytes after the last field at byte {len(v12)}"),
        ("empty", 12, b"", "truncated throttle time at byte 0"),
        ("null host", 12, _replace(v12, host, b"\0"), "null broker host at byte 9"),
        (
            "host too long",
            12,
            _replace(v12, host, uvarint(10**6) + b"broker-1.example"),
            "truncated broker host at byte 9",
        ),
        ("bad UTF-8", 12, _replace(v12, host, cstr("broker-1.example")[:1] + b"\xff" * 16), "invalid UTF-8"),
        (
            "null name before v12",
            11,
            _replace(v11, cstr("orders"), b"\0"),
            "null topic name before version 12",
        ),
        (
            "varint over 32 bits",
            12,
            v12[:4] + b"\xff\xff\xff\xff\x10" + v12[5:],
            "varint over 32 bits at byte 4",
        ),
        ("varint cut", 12, v12[:4] + b"\x80", "null or truncated broker array at byte 4"),
        (
            "too many brokers",
            12,
            v12[:4] + uvarint(2**32 - 1) + v12[5:],
            "broker count beyond the bytes left at byte 4",
        ),
        ("null brokers", 12, v12[:4] + b"\0" + v12[5:], "null or truncated broker array at byte 4"),
    ]


@pytest.mark.parametrize("case", malformed_cases(), ids=lambda c: c[0])
def test_it_refuses_a_malformed_answer_naming_what_and_where(case):
    _, version, data, message = case
    with pytest.raises(ValueError) as err:
        decode_metadata(data, version)
    assert MALFORMED.match(str(err.value)), str(err.value)
    assert message in str(err.value)


# -- random answers: every truncation and random corruption ----------------------------------------

node = st.integers(-(2**31), 2**31 - 1)
name_st = st.text(min_size=0, max_size=12)
parts_st = st.lists(
    st.tuples(node, node, st.lists(node, max_size=4), st.lists(node, max_size=4), st.lists(node, max_size=2)),
    max_size=4,
)
answer_st = st.tuples(
    st.sampled_from(VERSIONS),
    st.lists(st.tuples(node, name_st, node, st.none() | name_st), max_size=3),
    st.lists(
        st.tuples(st.none() | name_st, st.integers(-(2**15), 2**15 - 1), st.booleans(), parts_st), max_size=4
    ),
    st.booleans(),
)


def random_answer(spec) -> tuple[int, bytes]:
    version, brokers, topics, extra = spec
    topics = [t if t[0] is not None or version >= 12 else ("x", *t[1:]) for t in topics]
    return version, body(version, encoded_topics(version, topics, extra), brokers=brokers, extra=extra)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer_st)
def test_it_refuses_every_truncation_of_a_random_answer(spec):
    version, data = random_answer(spec)
    assert_decodes_as_kafka_python(data, version)
    for end in range(len(data)):
        with pytest.raises(ValueError) as err:
            decode_metadata(data[:end], version)
        assert MALFORMED.match(str(err.value)), str(err.value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer_st, st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4))
def test_it_decodes_a_corrupted_answer_as_kafka_python_does_or_refuses_it(spec, flips):
    version, data = random_answer(spec)
    corrupt = bytearray(data)
    for at, value in flips:
        corrupt[at % len(corrupt)] = value
    try:
        got = decode_metadata(corrupt, version)
    except ValueError as err:
        assert MALFORMED.match(str(err)), str(err)
        return
    assert got == expected(MetadataResponse.decode(bytes(corrupt), version=version), version)


# -- the sandbox's own answers ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def degraded_sandbox():
    """Three brokers on two racks, topics of RF 1 and 3, an internal topic; broker 3 stopped, so
    partitions it led alone are offline and the ISRs it was in have shrunk."""
    with running_sandbox(brokers=3, controllers=1, racks=["r1", "r2"]) as cluster:
        cluster.create_topic("rf3", 6, 3)
        cluster.create_topic("rf1", 6, 1)
        cluster.create_topic("__consumer_offsets", 3, 3)
        cluster.stop_broker(3)
        yield cluster


def _recv(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        assert chunk, "the sandbox closed the connection"
        buf += chunk
    return bytes(buf)


def raw_metadata_body(bootstrap: str, version: int) -> bytes:
    """A full Metadata request at ``version`` on a raw socket; the response body after its header."""
    host, port = bootstrap.split(",")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        req = MetadataRequest(topics=None, allow_auto_topic_creation=False)
        req.with_header(correlation_id=1, client_id="test")
        sock.sendall(req.encode(version=version, header=True, framed=True))
        frame = _recv(sock, struct.unpack(">i", _recv(sock, 4))[0])
    header = io.BytesIO(frame)
    MetadataResponse.parse_header(header, version=version)
    return frame[header.tell() :]


@pytest.mark.parametrize("version", VERSIONS)
def test_it_decodes_the_sandboxs_answers_as_kafka_python_does(degraded_sandbox, version):
    got = assert_decodes_as_kafka_python(
        raw_metadata_body(degraded_sandbox.bootstrap_servers, version), version
    )
    throttle, cluster_id, controller, brokers, topics, error, by_broker = got
    assert (throttle, cluster_id, error) == (0, degraded_sandbox.cluster_id, 0)
    assert controller in (1, 2)
    assert [(b[0], b[3]) for b in brokers] == [(1, "r1"), (2, "r2")]
    by_name = {t[0]: t for t in topics}
    assert sorted(by_name) == ["__consumer_offsets", "rf1", "rf3"]
    assert by_name["rf3"][2:] == (False, by_name["rf3"][3], 6, 3, 6, 0)  # every ISR lost broker 3
    assert by_name["rf1"][4:] == (6, 1, 0, 2)  # the two partitions on broker 3 have no leader
    assert by_name["__consumer_offsets"][2] is True
    assert sum(c[1] for c in by_broker) == sum(t[4] * (t[5] or 1) for t in topics)  # RF 1 and 3, all full
    assert by_broker[2][0] == 3 and by_broker[2][3] == by_broker[2][4] == 9  # out of every RF 3 ISR


def test_it_counts_each_brokers_partitions_by_hand():
    """The crafted answer's counts worked out by hand: 'orders' p0 (1,[1,2,3],[1,2,3]), p1
    (2,[2,3,1],[2,3]: under, 1 out of ISR), p2 (-1,[3],[]: offline, under, 3 out of ISR);
    '__consumer_offsets' p0 (1,[1],[1]); the unicode topic's p0 (max,[max,min],[min]: under, max out);
    the null-named topic (v12+) has no partitions and would not be counted anyway."""
    top, bottom = 2**31 - 1, -(2**31)
    for version in VERSIONS:
        *_, by_broker = decode_metadata(crafted(version).encode(), version)
        assert by_broker == [
            (bottom, 1, 0, 1, 0, 0),
            (1, 3, 2, 1, 1, 0),
            (2, 2, 1, 1, 0, 0),
            (3, 3, 0, 2, 1, 1),
            (top, 1, 1, 1, 1, 0),
        ], version


def test_it_leaves_a_null_named_topic_out_of_the_counts():
    named = [("t", 0, False, [(0, 1, [1, 2], [1], [])])]
    unnamed = [(None, 100, False, [(0, 3, [3], [3], [])])]
    *_, by_broker = decode_metadata(crafted(12, named + unnamed).encode(), 12)
    assert by_broker == [(1, 1, 1, 1, 0, 0), (2, 1, 0, 1, 1, 0)]


# -- size, speed and leaks -------------------------------------------------------------------------


def big_answer(brokers: int = 200, topics: int = 20_000, per_topic: int = 50) -> bytes:
    """A Metadata v12 answer of topics x per_topic partitions at RF 3 over ``brokers`` brokers; in
    every 100th topic partition 0 has no leader and partition 1 a short ISR."""
    layouts = []
    for shift in range(brokers):
        reps = [[(shift + p + k) % brokers + 1 for k in range(3)] for p in range(per_topic)]
        healthy = b"".join(partition(12, p, r[0], r, r, []) for p, r in enumerate(reps))
        sick = partition(12, 0, -1, reps[0], [], reps[0]) + partition(
            12, 1, reps[1][0], reps[1], reps[1][:1], []
        )
        sick += b"".join(partition(12, p, r[0], r, r, []) for p, r in enumerate(reps) if p > 1)
        layouts.append((healthy, sick))
    encoded = [
        topic(12, i, f"topic-{i:06d}", 0, False, layouts[i % brokers][i % 100 == 0], per_topic)
        for i in range(topics)
    ]
    return body(
        12,
        encoded,
        brokers=[(b, f"broker-{b}.example", 9092, f"rack-{b % 5}") for b in range(1, brokers + 1)],
    )


def test_it_decodes_a_million_partitions_to_the_right_counts():
    data = big_answer()
    start = time.perf_counter()
    _, _, _, brokers, topics, _, by_broker = decode_metadata(data, 12)
    seconds = time.perf_counter() - start
    print(f"{len(data) / 1e6:.1f} MB, 1,000,000 partitions decoded in {seconds:.3f} s")
    assert len(brokers) == 200 and brokers[-1] == (200, "broker-200.example", 9092, "rack-0")
    assert len(topics) == 20_000
    assert sum(t[4] for t in topics) == 1_000_000
    assert {t[5] for t in topics} == {3}
    assert (sum(t[6] for t in topics), sum(t[7] for t in topics)) == (400, 200)  # in 1% of the topics
    assert topics[100][:3] == ("topic-000100", 0, False) and topics[100][6:] == (2, 1)
    assert marshal.loads(topics[1][3])[0] == (0, 2, [2, 3, 4], [2, 3, 4])
    assert len(by_broker) == 200 and sum(c[1] for c in by_broker) == 3_000_000
    assert sum(c[2] for c in by_broker) == 1_000_000 - 200  # 200 partitions without a leader
    assert sum(c[3] for c in by_broker) == 400 * 3 and sum(c[5] for c in by_broker) == 200 * 3
    assert sum(c[4] for c in by_broker) == 200 * 3 + 200 * 2  # empty ISRs, then ISRs of one


def test_it_leaks_nothing_on_success_or_refusal():
    """Every way out: a whole answer, each truncation (a broker, a name, a packed topic half-built),
    bytes left over, invalid UTF-8."""
    data = crafted(12).encode()
    cases = [data, data + b"\0", _replace(data, cstr("orders"), b"\x07order\xff")]
    cases += [data[:end] for end in range(len(data))]

    def run(times: int) -> None:
        for _ in range(times):
            for case in cases:
                try:
                    decode_metadata(case, 12)
                except ValueError:
                    pass

    def traced() -> tracemalloc.Snapshot:  # what was allocated from this file: the decodes' results
        return tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, __file__)])

    run(5)
    gc.collect()
    tracemalloc.start()
    try:
        run(5)
        before = traced()
        run(60)
        gc.collect()
        grown = sum(d.size_diff for d in traced().compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    # one object kept per decode on any one path would be over 60 x 28 bytes
    assert grown < 1024, f"{grown} bytes kept after {60 * len(cases)} decodes"


def test_a_topic_named_twice_is_counted_as_kept():
    """Kafka never names a topic twice; if an answer did, ``WholeMetadata`` keeps the last and its
    per-broker counts are those of what it keeps, not of both."""
    from console.kafka import metadata_read

    twice = [("t", 0, False, [(0, 1, [1, 2], [1, 2], [])]), ("t", 0, False, [(0, 2, [2, 3], [2], [])])]
    whole = metadata_read.decode(12, crafted(12, twice).encode())
    assert marshal.loads(whole.topics["t"].packed) == [(0, 2, [2, 3], [2])]
    assert whole.broker_counts == ((2, 1, 1, 1, 0, 0), (3, 1, 0, 1, 1, 0))
    once = metadata_read.decode(12, crafted(12, twice[1:]).encode())
    assert once.broker_counts == whole.broker_counts
