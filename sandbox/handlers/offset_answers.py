"""OffsetFetch's answer from version 8 (many groups per request, KIP-709) written straight to bytes.

Built as kafka-python response objects and encoded by kafka-python, 10,000 groups' 100,000
committed offsets took the sandbox ~1.6 s (a Java broker writes them in milliseconds): an artefact
that made every client reading all groups' offsets look slow against the sandbox alone. The layout
is OffsetFetchResponse.json's for versions 8 and 9 (flexible: compact arrays and strings, tagged
fields), the same bytes kafka-python writes (tests/sandbox/test_offset_fetch_groups.py compares them).
Serves no API: ``groups.offset_fetch`` answers with it.
"""

from __future__ import annotations

import struct

from sandbox.apis import Encoded

#: (topic, [(partition, committed offset)]) - an offset of -1 for a partition without one
Topics = list[tuple[str, list[tuple[int, int]]]]

_HEAD = struct.Struct(">i")  # throttle_time_ms
_PARTITION = struct.Struct(">iqi")  # partition_index, committed_offset, committed_leader_epoch (-1)
_PARTITION_TAIL = b"\x01\x00\x00\x00"  # metadata "" (compact: length + 1), error_code 0, no tags
_ERROR = struct.Struct(">hB")  # a group's error_code and its (empty) tagged fields


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _string(s: str) -> bytes:
    data = s.encode()
    return _uvarint(len(data) + 1) + data


def groups_answer(groups: list[tuple[str, int, Topics]]) -> Encoded:
    """OffsetFetch v8/v9's answer for ``[(group id, error code, topics)]`` (no topics with an error)."""
    parts = [_HEAD.pack(0), _uvarint(len(groups) + 1)]
    add = parts.append
    pack, tail = _PARTITION.pack, _PARTITION_TAIL
    for group_id, code, topics in groups:
        add(_string(group_id))
        add(_uvarint(len(topics) + 1))
        for name, partitions in topics:
            add(_string(name))
            add(_uvarint(len(partitions) + 1))
            for index, offset in partitions:
                add(pack(index, offset, -1))
                add(tail)
            add(b"\x00")  # the topic's tagged fields
        add(_ERROR.pack(code, 0))
    add(b"\x00")  # the response's tagged fields
    return Encoded(b"".join(parts), True)
