"""The one ListOffsets request builder of the gateway's offset reads (``list_offsets``,
``offsets_by_leader``, ``offsets_by_row``): what it asks, and that a bad spec or isolation level
is a clear error."""

from __future__ import annotations

import pytest

from console.kafka import KafkaOperationError
from console.kafka.topics import list_offsets_request, offset_timestamp


def test_one_request_asks_every_partition_at_the_timestamp_as_a_consumer():
    request = list_offsets_request({"a": [0, 2], "b": [1]}, -2, "READ_COMMITTED", 12.5)
    assert request.replica_id == -1 and request.isolation_level == 1 and request.timeout_ms == 12500
    asked = [(t.name, p.partition_index, p.timestamp) for t in request.topics for p in t.partitions]
    assert asked == [("a", 0, -2), ("a", 2, -2), ("b", 1, -2)]
    assert list_offsets_request({"a": [0]}, 5, "READ_UNCOMMITTED", 1).isolation_level == 0


def test_specs_and_isolation_levels():
    assert [
        offset_timestamp(s, "READ_UNCOMMITTED") for s in ("latest", "earliest", "max_timestamp", 123)
    ] == [
        -1,
        -2,
        -3,
        123,
    ]
    for spec, isolation in (("newest", "READ_UNCOMMITTED"), (True, "READ_UNCOMMITTED"), ("latest", "DIRTY")):
        with pytest.raises(KafkaOperationError) as exc:
            offset_timestamp(spec, isolation)
        assert exc.value.name == "INVALID_REQUEST"
