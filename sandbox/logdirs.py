"""JBOD (KIP-113) on the virtual clock: a broker's log dirs, the dir each replica lives in, and
moves between the dirs of one broker (AlterReplicaLogDirs) as Kafka 4.1's ReplicaManager does them.

A broker has ``Node.log_dirs`` (one, ``Node.log_dir``, unless the cluster was made with more). A
replica lives in the dir recorded in ``Partition.dirs`` or else in one the broker spreads its replicas
over (a stable hash of topic and partition). AlterReplicaLogDirs names a dir per replica; per replica
Kafka answers, in this order: LOG_DIR_NOT_FOUND (a dir the broker does not have), KAFKA_STORAGE_ERROR
(the dir, or the replica's own dir, is offline), UNKNOWN_TOPIC_OR_PARTITION (no such partition),
REPLICA_NOT_AVAILABLE (the broker holds no replica of it; kept for compatibility where a fetch would
say NOT_LEADER_OR_FOLLOWER), else NONE. A move to another dir than a running move's target drops that
future replica first; a move to the dir the replica is in does nothing more (so it cancels a move); a
move to a new dir creates a future replica there that copies at the broker's
``replica.alter.log.dirs.io.max.bytes.per.second`` (shared by the broker's moves; unlimited when
unset, within the sandbox's bandwidth) and replaces the current replica once it has caught up with
its log end. DescribeLogDirs lists the future replica in its dir with ``is_future_key`` and offset
lag as Kafka computes it (the current replica's log end minus the future's).
"""

from __future__ import annotations

import zlib
from collections import defaultdict

from sandbox.state import ClusterState, Node, Partition

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
REPLICA_NOT_AVAILABLE = 9
KAFKA_STORAGE_ERROR = 56
LOG_DIR_NOT_FOUND = 57
IO_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"


def dirs_of(node: Node) -> list[str]:
    """A broker's log dirs, in the order of its ``log.dirs``."""
    return list(node.log_dirs) or [node.log_dir]


def dir_of(node: Node, p: Partition, dirs: list[str] | None = None) -> str:
    """The dir a broker's replica of ``p`` lives in (``dirs``: the node's ``dirs_of``, when the caller
    has it: a DescribeLogDirs walks every replica of the broker)."""
    if p.dirs and node.node_id in p.dirs:
        return p.dirs[node.node_id]
    if dirs is None:
        dirs = dirs_of(node)
    if len(dirs) == 1:
        return dirs[0]
    return dirs[zlib.crc32(f"{p.topic}-{p.index}".encode()) % len(dirs)]


def future_of(p: Partition, broker: int) -> tuple[str, float] | None:
    """(target dir, bytes copied) of the broker's future replica of ``p``, if a move runs."""
    got = p.futures.get(broker) if p.futures else None
    return (got[0], got[1]) if got else None


def future_lag(p: Partition, broker: int, copied: float) -> int:
    """The future replica's offset lag: the current replica's log end minus the future's."""
    size = p.sizes.get(broker, 0.0)
    end = p.replica_offset(broker)
    if size <= 0 or copied >= size:
        return 0
    future_end = p.log_start_offset + int((end - p.log_start_offset) * copied / size)
    return max(0, end - future_end)


def alter(st: ClusterState, node: Node, path: str, topic: str, index: int) -> int:
    """One replica of an AlterReplicaLogDirs request: its error code (0: accepted)."""
    if path not in dirs_of(node):
        return LOG_DIR_NOT_FOUND
    if path in node.offline_dirs:
        return KAFKA_STORAGE_ERROR
    p = st.partition(topic, index)
    if p is None:
        return UNKNOWN_TOPIC_OR_PARTITION
    b = node.node_id
    if b not in p.replicas:
        return REPLICA_NOT_AVAILABLE
    if dir_of(node, p) in node.offline_dirs:
        return KAFKA_STORAGE_ERROR
    running = future_of(p, b)
    if running is not None and running[0] != path:
        _drop_future(st, p, b)
        running = None
    if dir_of(node, p) == path or running is not None:
        return NONE
    if p.futures is None:
        p.futures = {}
    p.futures[b] = [path, 0.0]
    st.dir_moves.add((p.topic, p.index, b))
    return NONE


def _drop_future(st: ClusterState, p: Partition, broker: int) -> None:
    if p.futures:
        p.futures.pop(broker, None)
    st.dir_moves.discard((p.topic, p.index, broker))


def _swap(st: ClusterState, p: Partition, broker: int, path: str) -> None:
    """The future replica caught up: it becomes the replica (the old dir's log is deleted)."""
    if p.dirs is None:
        p.dirs = {}
    p.dirs[broker] = path
    _drop_future(st, p, broker)


def io_rate(st: ClusterState, broker: int) -> float:
    """The broker's ``replica.alter.log.dirs.io.max.bytes.per.second`` (the broker's, else the
    cluster default's), unlimited when unset."""
    for key in (str(broker), ""):
        val = st.broker_configs.get(key, {}).get(IO_RATE)
        if val is not None:
            try:
                return float(val) if float(val) > 0 else float("inf")
            except ValueError:
                break
    return float("inf")


def tick(st: ClusterState, dt: float) -> None:
    """Advance every future replica by ``dt`` virtual seconds."""
    if not st.dir_moves:
        return
    per_broker: dict[int, list[tuple[Partition, int]]] = defaultdict(list)
    for topic, index, b in list(st.dir_moves):
        p = st.partition(topic, index)
        node = st.brokers.get(b)
        if p is None or node is None or b not in p.replicas or future_of(p, b) is None:
            if p is not None:
                _drop_future(st, p, b)
            else:
                st.dir_moves.discard((topic, index, b))
            continue
        if node.up:
            per_broker[b].append((p, b))
    for b, moves in per_broker.items():
        rate = min(st.bandwidth_bytes_per_s, io_rate(st, b))
        budget = rate * dt / len(moves)
        for p, _ in moves:
            entry = p.futures[b]  # type: ignore[index]
            size = p.sizes.get(b, 0.0)
            entry[1] = min(entry[1] + budget, size)
            if entry[1] >= size:
                _swap(st, p, b, entry[0])


def describe(st: ClusterState, node: Node, wanted: dict[str, set[int]] | None) -> list[tuple]:
    """Per dir of the broker: (path, error code, {topic: [(partition, size, lag, is future)]},
    bytes used). An offline dir answers KAFKA_STORAGE_ERROR and no replicas."""
    dirs = dirs_of(node)
    by_dir: dict[str, dict[str, list[tuple[int, int, int, bool]]]] = {d: {} for d in dirs}
    used: dict[str, float] = dict.fromkeys(dirs, 0.0)
    for p in st.replicas_on(node.node_id):
        b = node.node_id
        size = p.sizes.get(b, 0.0)
        home = dir_of(node, p, dirs)
        used[home] = used.get(home, 0.0) + size
        fut = future_of(p, b)
        if fut is not None:
            used[fut[0]] = used.get(fut[0], 0.0) + fut[1]
        if wanted is not None and p.index not in wanted.get(p.topic, ()):
            continue
        by_dir.setdefault(home, {}).setdefault(p.topic, []).append((p.index, int(size), 0, False))
        if fut is not None:
            by_dir.setdefault(fut[0], {}).setdefault(p.topic, []).append(
                (p.index, int(fut[1]), future_lag(p, b, fut[1]), True)
            )
    out = []
    for d in dirs:
        if d in node.offline_dirs:
            out.append((d, KAFKA_STORAGE_ERROR, {}, None))
        else:
            out.append((d, NONE, by_dir.get(d, {}), used.get(d, 0.0)))
    return out
