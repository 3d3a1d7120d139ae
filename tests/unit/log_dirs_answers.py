"""DescribeLogDirs answers as a broker sends them: encoded by kafka-python's response classes and
wrapped as ``LogDirsBytesRequest`` brings them (the version, the frame's bytes, where the body
starts), for the readers in ``console/kafka/log_dirs_read.py`` and ``health.ReplicaSizes``."""

from __future__ import annotations

from types import SimpleNamespace

from kafka.protocol.admin import DescribeLogDirsResponse

Result = DescribeLogDirsResponse.DescribeLogDirsResult
Topic = Result.DescribeLogDirsTopic
Part = Topic.DescribeLogDirsPartition

# (topic, partition, size, offset lag, is future)
Record = tuple[str, int, int, int, bool]


def log_dir(
    path: str, records: list[Record], *, error_code: int = 0, total: int = -1, usable: int = -1
) -> Result:
    """One dir of an answer: ``records`` grouped by topic in their order."""
    by_topic: dict[str, list] = {}
    for t, p, size, lag, future in records:
        by_topic.setdefault(t, []).append(
            Part(partition_index=p, partition_size=size, offset_lag=lag, is_future_key=future)
        )
    topics = [Topic(name=t, partitions=ps) for t, ps in by_topic.items()]
    return Result(error_code=error_code, log_dir=path, topics=topics, total_bytes=total, usable_bytes=usable)


def encoded(version: int, dirs: list[Result], error_code: int = 0) -> bytes:
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=error_code, results=dirs).encode(
        version=version
    )


def answer(version: int, data: bytes) -> SimpleNamespace:
    """What ``LogDirsBytesRequest`` brings for the body ``data``."""
    return SimpleNamespace(version=version, buffer=bytearray(b"HEAD" + data), start=4)


def answer_of(dirs: list[Result], version: int = 4) -> SimpleNamespace:
    return answer(version, encoded(version, dirs))
