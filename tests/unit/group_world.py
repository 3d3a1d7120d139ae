"""The consumer-group tests' world on the shared sandbox: topics whose partitions hold given offsets,
and what a group has committed, read from the sandbox's state."""

from __future__ import annotations

import uuid


def uniq(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def log_topic(sandbox, name: str, partitions: int = 2, start: int = 10, end: int = 100) -> str:
    """The topic ``name`` whose partitions hold offsets start..end."""
    sandbox.create_topic(name, partitions=partitions)
    set_log(sandbox, name, start=start, end=end)
    return name


def set_log(sandbox, name: str, *, start: int | None = None, end: int | None = None) -> None:
    """Move the log start and/or end offset of every partition of ``name``."""
    with sandbox.state.lock:
        for p in sandbox.state.topics[name].partitions:
            if start is not None:
                p.log_start_offset = start
            if end is not None:
                p.end_offset = end


def committed(sandbox, gid: str) -> dict | None:
    """The group's committed offsets {(topic, partition): offset}; None once the group is gone."""
    with sandbox.state.lock:
        group = sandbox.state.groups.get(gid)
        return None if group is None else dict(group.offsets)
