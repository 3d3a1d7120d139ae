"""A poll's ListPartitionReassignments answer read from its bytes and its requests encoded once
(``console/kafka/reassign_reads.py``): the partitions kafka-python's own decoding of the same bytes
lists, crafted and random; every truncation a KafkaOperationError; a request sent twice is the
bytes kafka-python would send each time."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from kafka.protocol.admin import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse

from console.kafka import KafkaOperationError
from console.kafka.log_dirs_read import LogDirsBytesRequest
from console.kafka.metadata_read import _Answer
from console.kafka.reassign_reads import PollPlan, _read_listing, read_listed

Topic = ListPartitionReassignmentsResponse.OngoingTopicReassignment
Part = Topic.OngoingPartitionReassignment


def _encoded(
    rows: list[tuple[str, int, list[int], list[int], list[int]]], error_code: int = 0, message=None
) -> bytes:
    by_topic: dict[str, list] = {}
    for t, p, reps, adding, removing in rows:
        by_topic.setdefault(t, []).append(
            Part(partition_index=p, replicas=reps, adding_replicas=adding, removing_replicas=removing)
        )
    topics = [Topic(name=t, partitions=ps) for t, ps in by_topic.items()]
    return ListPartitionReassignmentsResponse(
        throttle_time_ms=0, error_code=error_code, error_message=message, topics=topics
    ).encode(version=0)


def _kafka_python(data: bytes) -> set[tuple[str, int]]:
    decoded = ListPartitionReassignmentsResponse.decode(data, version=0)
    return {(t.name, p.partition_index) for t in decoded.topics for p in t.partitions}


def _answer(data: bytes) -> SimpleNamespace:
    return _Answer(0, bytearray(data), 0)


def _random_rows(rng: random.Random, n: int) -> list:
    rows = []
    for i in range(n):
        reps = rng.sample(range(1, 400), rng.randint(0, 5))
        rows.append(
            (
                f"t-{rng.randint(0, 30)}-é" if i % 7 == 0 else f"topic-{rng.randint(0, 30)}",
                rng.randint(0, 2**31 - 1) if i % 5 == 0 else i,
                reps,
                reps[: rng.randint(0, len(reps))],
                rng.sample(range(1, 400), rng.randint(0, 3)),
            )
        )
    return rows


def test_crafted_answers_read_as_kafka_python_decodes_them():
    crafted = [
        [],
        [("orders", 0, [1, 2, 3], [3], [1])],
        [("orders", 0, [], [], []), ("orders", 7, [1], [], []), ("pay", 2, [4, 5, 6, 7], [6, 7], [4, 5])],
        # a replica list longer than 127 entries: a two-byte length
        [("big", 1, list(range(1, 300)), list(range(150, 300)), list(range(1, 150)))],
    ]
    for rows in crafted:
        data = _encoded(rows)
        code, message, listed = _read_listing(memoryview(data), 0)
        assert (code, message) == (0, None)
        assert listed == _kafka_python(data) == {(t, p) for t, p, *_ in rows}


def test_random_answers_read_as_kafka_python_decodes_them():
    rng = random.Random(36)
    for _ in range(30):
        data = _encoded(_random_rows(rng, rng.randint(0, 400)))
        assert _read_listing(memoryview(data), 0)[2] == _kafka_python(data)


def test_every_truncation_is_refused_with_a_clear_error():
    data = _encoded([("orders", 0, [1, 2, 3], [3], [1]), ("pay", 300, list(range(200)), [], [2])])
    for cut in range(len(data)):
        with pytest.raises(KafkaOperationError, match="unreadable ListPartitionReassignments answer"):
            read_listed(_answer(data[:cut]))
    assert read_listed(_answer(data)) == {("orders", 0), ("pay", 300)}


def test_a_length_past_the_end_and_another_version_are_refused():
    data = bytearray(_encoded([("orders", 0, [1, 2, 3], [3], [1])]))
    at = data.index(b"orders") - 1  # the topic name's compact length
    data[at] = 100
    with pytest.raises(KafkaOperationError, match="unreadable"):
        read_listed(_answer(bytes(data)))
    with pytest.raises(KafkaOperationError, match="version 1 not read"):
        read_listed(SimpleNamespace(version=1, buffer=bytearray(_encoded([])), start=0))


def test_the_answer_error_is_raised_and_the_buffer_released():
    answer = _answer(_encoded([], error_code=41, message="no controller here"))
    with pytest.raises(KafkaOperationError) as err:
        read_listed(answer)
    assert err.value.code == 41 and answer.buffer is None


def test_the_plan_reads_an_unchanged_answer_once_and_a_changed_one_again(monkeypatch):
    import console.kafka.reassign_reads as module

    plan = PollPlan([("orders", 0), ("orders", 1)], {1: [("orders", 0)]}, 30_000)
    reads = []
    real = module.read_listed
    monkeypatch.setattr(module, "read_listed", lambda a: reads.append(1) or real(a))
    both = _encoded([("orders", 0, [1, 2], [2], []), ("orders", 1, [1, 3], [3], [])])
    one = _encoded([("orders", 1, [1, 3], [3], [])])
    assert plan.listed(_answer(both)) == {("orders", 0), ("orders", 1)}
    got = plan.listed(_answer(both))
    assert got == {("orders", 0), ("orders", 1)} and len(reads) == 1
    got.clear()  # the caller's copy: the kept set is not changed
    assert plan.listed(_answer(both)) == {("orders", 0), ("orders", 1)} and len(reads) == 1
    assert plan.listed(_answer(one)) == {("orders", 1)} and len(reads) == 2
    with pytest.raises(KafkaOperationError, match="gone"):
        plan.listed(KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "gone"))


def test_a_planned_request_sends_what_kafka_python_would_send_each_time():
    tps = [("orders", p) for p in range(50)] + [("pay", 3)]
    LT = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
    DT = LogDirsBytesRequest.DescribableLogDirTopic
    for version in (0, 1, 4):
        plan = PollPlan(tps, {1: tps[:10], 2: tps[10:]}, 30_000)
        plain_listing = ListPartitionReassignmentsRequest(
            timeout_ms=30_000,
            topics=[
                LT(name="orders", partition_indexes=list(range(50))),
                LT(name="pay", partition_indexes=[3]),
            ],
        )
        plain_dirs = LogDirsBytesRequest(
            topics=[DT(topic="orders", partitions=list(range(10, 50))), DT(topic="pay", partitions=[3])]
        )
        pairs = (
            [(plan.dirs[2], plain_dirs)]
            if version
            else [(plan.listing, plain_listing), (plan.dirs[2], plain_dirs)]
        )
        for planned, plain in pairs:
            for request in (planned, plain):
                request.API_VERSION = version  # as kafka-python's connection sets it, before the first send
            for correlation in (7, 8, 1234):  # each send: a new header, the same body
                for request in (planned, plain):
                    request.with_header(correlation_id=correlation, client_id="console")
                assert planned.encode(framed=True, header=True) == plain.encode(framed=True, header=True)
                assert planned.encode() == plain.encode()


def test_the_plan_reads_an_unchanged_isr_answer_once(monkeypatch):
    from console.kafka import reassign_reads

    plan = PollPlan([("orders", 0)], {1: [("orders", 0)]}, 30_000, {"orders": {0}})
    calls = []

    def fake(names, answer, only):
        calls.append((names, only))
        answer.buffer = None
        return {"orders": {0: (1, (1, 2))}} if len(calls) < 3 else KafkaOperationError(-1, "X", "bad")

    monkeypatch.setattr(reassign_reads, "isr_answer", fake)
    first = plan.isr(["orders"], _answer(b"same bytes"))
    assert plan.isr(["orders"], _answer(b"same bytes")) is first and len(calls) == 1
    assert calls[0] == (["orders"], {"orders": {0}})
    plan.isr(["orders", "pay"], _answer(b"same bytes"))  # other topics asked: read again
    assert len(calls) == 2
    assert isinstance(plan.isr(["orders"], _answer(b"other bytes")), KafkaOperationError)
    plan.isr(["orders"], _answer(b"other bytes"))  # an error is not kept
    assert len(calls) == 4
    gone = KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "gone")
    assert plan.isr(["orders"], gone) is not None and len(calls) == 5
