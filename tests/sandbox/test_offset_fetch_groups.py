"""The sandbox writes OffsetFetch v8/v9 answers (many groups per request) straight to bytes
(``sandbox.handlers.offset_answers``): the same bytes kafka-python's own encoder writes for the same
answer, whatever the sizes (one-byte and longer varints) and errors."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.group import OffsetFetchResponse

from sandbox.handlers.groups import fetched_topics
from sandbox.handlers.offset_answers import groups_answer

GROUP = OffsetFetchResponse.OffsetFetchResponseGroup
TOPIC = GROUP.OffsetFetchResponseTopics
PARTITION = TOPIC.OffsetFetchResponsePartitions

ANSWERS = {
    "no groups": [],
    "an error, no topics": [("g-1", 16, [])],
    "committed and not": [("g-1", 0, [("orders", [(0, 40), (1, -1), (2, 7)]), ("pay", [(3, 2**40)])])],
    "a group with nothing committed": [("g-1", 0, []), ("g-2", 0, [("t", [(0, 1)])])],
    "long names, many partitions": [
        ("grüppe-" + "x" * 300, 0, [("t" * 200, [(p, p * 3) for p in range(300)])]),
        *((f"g-{i}", 69 if i % 7 == 0 else 0, []) for i in range(200)),
    ],
}


def _kafka_python(groups, version: int) -> bytes:
    """The same answer as kafka-python's objects (as the handler built them), encoded by kafka-python."""
    return OffsetFetchResponse(
        version=version,
        throttle_time_ms=0,
        groups=[
            GROUP(group_id=gid, error_code=code, topics=fetched_topics(TOPIC, PARTITION, topics))
            for gid, code, topics in groups
        ],
    ).encode(version=version)


@pytest.mark.parametrize("version", [8, 9])
@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_it_writes_the_bytes_kafka_python_writes(case, version):
    answer = groups_answer(ANSWERS[case])
    assert answer.flexible is True
    assert answer.body == _kafka_python(ANSWERS[case], version)
