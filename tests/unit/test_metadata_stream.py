"""console.kafka._metadata.Stream: a Metadata response frame decoded while it arrives, topic by
topic, into exactly what ``decode_metadata`` makes of the whole body - however the bytes are cut
into reads - while the caller keeps only what was not consumed yet; a cut, corrupted or overlong
frame is refused."""

from __future__ import annotations

import gc
import random
import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.kafka._metadata import Stream, decode_metadata
from tests.unit.test_metadata_decode import (
    MALFORMED,
    VERSIONS,
    answer_st,
    body,
    crafted,
    hand_encoded,
    partition,
    random_answer,
    tagged,
    topic,
)


def framed(data: bytes, correlation_id: int = 41, extra: bool = False) -> bytes:
    """Response header v1 (correlation id, tagged fields) + the body: a frame after its length."""
    return struct.pack(">i", correlation_id) + tagged(extra) + data


def streamed(frame: bytes, version: int, cuts: list[int]) -> tuple[Stream, int]:
    """``frame`` fed as reads ending at ``cuts``, each call given every byte not consumed yet (as
    the console's reader does); the stream and the most bytes the caller had to keep."""
    stream, pending, kept, at = Stream(version, len(frame)), b"", 0, 0
    for end in [*sorted(cuts), len(frame)]:
        pending += frame[at:end]
        at = end
        used = stream.feed(pending)
        assert 0 <= used <= len(pending)
        pending = pending[used:]
        kept = max(kept, len(pending))
    return stream, kept


def every(frame: bytes, size: int) -> list[int]:
    return list(range(size, len(frame), size))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("extra", [False, True])
def test_any_cut_into_reads_decodes_as_the_whole_body(version, extra):
    data = hand_encoded(version, extra) if extra else crafted(version).encode()
    want = decode_metadata(data, version)
    frame = framed(data, extra=extra)
    rng = random.Random(version)
    cuts = [every(frame, 1), every(frame, 2), every(frame, 7), every(frame, 64), [], [5], [len(frame) - 1]]
    cuts += [rng.sample(range(1, len(frame)), k) for k in (1, 3, 10, 30)]
    for cut in cuts:
        stream, _ = streamed(frame, version, cut)
        assert stream.done and stream.correlation_id == 41
        assert stream.result() == want


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer_st, st.lists(st.integers(1, 10**6), max_size=8))
def test_a_random_answer_cut_at_random_decodes_as_the_whole_body(spec, cuts):
    version, data = random_answer(spec)
    frame = framed(data, correlation_id=7)
    stream, _ = streamed(frame, version, sorted({c % len(frame) for c in cuts} - {0}))
    assert stream.result() == decode_metadata(data, version)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer_st)
def test_a_frame_that_ends_before_the_answer_is_refused(spec):
    version, data = random_answer(spec)
    for end in range(len(data)):
        frame = framed(data[:end])
        try:
            stream, _ = streamed(frame, version, [len(frame) // 2])
        except ValueError as err:
            assert MALFORMED.match(str(err)), str(err)
            continue
        assert not stream.done
        with pytest.raises(ValueError, match="truncated"):
            stream.result()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    answer_st,
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
    st.integers(1, 10**6),
)
def test_a_corrupted_answer_is_decoded_as_the_whole_body_or_refused_as_it(spec, flips, cut):
    version, data = random_answer(spec)
    corrupt = bytearray(data)
    for at, value in flips:
        corrupt[at % len(corrupt)] = value
    try:
        want = decode_metadata(corrupt, version)
    except ValueError:
        want = None
    frame = framed(bytes(corrupt))
    try:
        stream, _ = streamed(frame, version, [cut % len(frame)] if cut % len(frame) else [])
        got = stream.result()
    except ValueError as err:
        assert want is None, f"refused ({err}) what decode_metadata reads"
        assert MALFORMED.match(str(err)), str(err)
        return
    assert got == want


def test_bytes_past_the_frame_and_feeding_after_a_refusal_are_refused():
    frame = framed(crafted(12).encode())
    with pytest.raises(ValueError, match="more bytes than its frame"):
        Stream(12, len(frame)).feed(frame + b"\0")
    stream = Stream(12, len(frame) + 1)  # a frame one byte longer than its answer
    with pytest.raises(ValueError, match="bytes after the last field"):
        stream.feed(frame + b"\0")
    with pytest.raises(ValueError, match="after an error"):
        stream.feed(b"")
    for version, size in ((8, 10), (14, 10), (12, -1)):
        with pytest.raises(ValueError):
            Stream(version, size)


def test_a_million_partitions_in_reads_of_256_kib_keep_one_read_and_one_topic():
    brokers = [(b, f"broker-{b}.example", 9092, None) for b in range(1, 201)]
    parts = b"".join(
        partition(12, p, p % 200 + 1, [p % 200 + 1, (p + 1) % 200 + 1], [p % 200 + 1], []) for p in range(50)
    )
    data = body(
        12, [topic(12, i, f"topic-{i:06d}", 0, False, parts, 50) for i in range(20_000)], brokers=brokers
    )
    want = decode_metadata(data, 12)
    frame = framed(data)
    read = 256 * 1024
    stream, kept = streamed(frame, 12, every(frame, read))
    assert stream.result() == want and sum(t[4] for t in want[4]) == 1_000_000
    assert kept < read + len(parts) + 100  # one read and the topic it cut, never the answer


def test_a_huge_topic_cut_by_many_reads_decodes_as_the_whole_body():
    parts = b"".join(partition(12, p, 1, [1, 2, 3], [1, 2], []) for p in range(20_000))
    data = body(12, [topic(12, 0, "huge", 0, False, parts, 20_000)])
    frame = framed(data)
    stream, kept = streamed(frame, 12, every(frame, 4096))
    assert stream.result() == decode_metadata(data, 12)
    assert kept > len(parts) - 4096  # the one topic waited for whole


def test_it_leaks_nothing_whether_finished_abandoned_or_refused():
    data = crafted(12).encode()
    frame = framed(data)
    cases = [[], every(frame, 3), [len(frame) // 2]]

    def run(times: int) -> None:
        for _ in range(times):
            for cut in cases:
                streamed(frame, 12, cut)[0].result()
            half = Stream(12, len(frame))
            half.feed(frame[: len(frame) // 2])  # abandoned midway: its topics and buffers freed
            del half
            try:
                Stream(12, len(frame)).feed(frame[:10] + b"\xff" * 5)
            except ValueError:
                pass

    run(5)
    gc.collect()
    tracemalloc.start()
    try:
        run(5)
        before = tracemalloc.take_snapshot()
        run(60)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(d.size_diff for d in after.compare_to(before, "filename") if d.size_diff > 0)
    assert grown < 8 * 1024, f"{grown} bytes kept after {60 * 5} streams"


# -- through the console's Kafka client ------------------------------------------------------------


@pytest.mark.django_db
def test_the_clients_whole_cluster_read_is_decoded_while_it_arrives_as_its_bytes_are(kafka_cluster, sandbox):
    from console.clusters.actions import gateway_for
    from console.kafka import metadata_read
    from console.kafka.metadata_read import MetadataBytesRequest, decode_answer

    for i in range(40):
        sandbox.create_topic(f"stream-{i:03d}-{id(sandbox) % 997}", partitions=50, replication_factor=2)
    kp = gateway_for(kafka_cluster)._kp

    def as_bytes() -> object:  # the same request, its answer handed over undecoded
        request = MetadataBytesRequest()
        request._whole = False
        return kp.send(request)

    from kafka.protocol.parser import KafkaProtocol

    from console.kafka import kp_fixes

    assert KafkaProtocol.receive_bytes is kp_fixes.receive_bytes  # installed over kafka-python 3.0.12's
    kp.send(MetadataBytesRequest())  # connected
    streamed_answer, whole_answer = kp.send(MetadataBytesRequest()), as_bytes()
    assert isinstance(streamed_answer, metadata_read._Decoded)
    assert isinstance(whole_answer, metadata_read._Answer)
    assert decode_answer(streamed_answer) == decode_answer(whole_answer)
    assert sum(t.partitions for t in decode_answer(streamed_answer).topics.values()) >= 2000
    named = kp.send(MetadataBytesRequest(["stream-000"]))
    assert isinstance(named, metadata_read._Answer)  # a poll's named read keeps its bytes
