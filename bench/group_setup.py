"""Setup shared by the consumer-group benchmarks (``bench_group_list``, ``bench_group_reset``).

* ``RemoteGroupSandbox``: ``harness.RemoteSandbox`` (the sandbox in a process of its
  own, as a real cluster runs outside the console's) with a groups estate built by one of the
  builders below instead of the reassignment one.
* ``build_list_estate``: 10 brokers, 100 topics x 1,000 partitions, 10,000 groups committing 10
  partitions each (100,000 committed partitions, every partition committed by one group): 70 %
  empty classic groups, 20 % stable classic groups with 2 members, 10 % KIP-848 consumer groups
  with 2 members; every committed offset lags its log end.
* ``build_reset_estate``: 10 brokers, 10 topics x 1,000 partitions, one empty group
  ``bench-reset`` with a committed offset strictly inside [log start, log end] on each of the
  10,000 partitions (so to-earliest and to-latest both move every offset).
* ``SocketClient``: the thinnest raw client (blocking sockets, kafka-python's codecs), one of the
  raw candidates next to kafka-python over the console's own transport and confluent-kafka.
* ``Phases`` (calls timed one by one) and ``profile_top`` (cProfile's top functions); the measuring
  method itself is ``bench.harness``'s.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import selectors
import socket
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import RemoteSandbox  # noqa: E402

BROKERS = 10
LIST_TOPICS = 100
LIST_PARTITIONS = 1000
GROUPS = 10_000
PER_GROUP = 10  # committed partitions per group: 100,000 in all
RESET_TOPICS = 10
RESET_PARTITIONS = 1000
RESET_GROUP = "bench-reset"


def _log_bounds(t: int, p: int) -> tuple[int, int]:
    """A partition's (log start, log end): deterministic, never equal."""
    start = (t * 7919 + p * 104729) % 5000
    return start, start + 10_000 + (t * 31 + p * 17) % 90_000


def committed_at(t: int, p: int) -> int:
    """Where the benches' groups have committed: strictly inside the log."""
    start, end = _log_bounds(t, p)
    return start + (end - start) // 2


def _sandbox(brokers: int, seed: str):
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=brokers, controllers=1, port=0, speed=0, seed=seed)
    cluster.start()
    return cluster


def _topics(cluster, prefix: str, topics: int, partitions: int) -> None:
    for t in range(topics):
        cluster.create_topic(f"{prefix}-{t:03d}", partitions=partitions, replication_factor=3)
    with cluster.state.lock:
        for t in range(topics):
            for part in cluster.state.topics[f"{prefix}-{t:03d}"].partitions:
                part.log_start_offset, part.end_offset = _log_bounds(t, part.index)


def list_group_parts(i: int) -> list[tuple[str, int]]:
    """Group ``i``'s committed partitions: 10 consecutive partitions of one topic."""
    t, first = divmod(i * PER_GROUP, LIST_PARTITIONS)
    return [(f"groups-{t:03d}", p) for p in range(first, first + PER_GROUP)]


def list_group_id(i: int) -> str:
    return f"bench-group-{i:05d}"


def build_list_estate():
    cluster = _sandbox(BROKERS, "bench-groups")
    _topics(cluster, "groups", LIST_TOPICS, LIST_PARTITIONS)
    for i in range(GROUPS):
        parts = list_group_parts(i)
        t = i * PER_GROUP // LIST_PARTITIONS
        offsets = {(topic, p): committed_at(t, p) for topic, p in parts}
        kind = i % 10
        if kind == 0:  # KIP-848 consumer group, two members
            members = {"app-a": parts[:5], "app-b": parts[5:]}
            cluster.add_group(list_group_id(i), members, offsets, protocol="consumer")
        elif kind in (1, 2):  # classic, stable, two members
            cluster.add_group(list_group_id(i), {"app-a": parts[:5], "app-b": parts[5:]}, offsets)
        else:  # classic, empty: only committed offsets
            cluster.add_group(list_group_id(i), None, offsets)
    return cluster


def build_reset_estate():
    cluster = _sandbox(BROKERS, "bench-reset")
    _topics(cluster, "reset", RESET_TOPICS, RESET_PARTITIONS)
    offsets = {
        (f"reset-{t:03d}", p): committed_at(t, p)
        for t in range(RESET_TOPICS)
        for p in range(RESET_PARTITIONS)
    }
    cluster.add_group(RESET_GROUP, None, offsets)
    return cluster


BUILDERS = {"list": build_list_estate, "reset": build_reset_estate}


class RemoteGroupSandbox(RemoteSandbox):
    """``harness.RemoteSandbox`` (its own process, estate frozen there) holding a groups estate."""

    def __init__(self, estate: str) -> None:
        super().__init__(build_estate, estate)


def build_estate(estate: str):
    return BUILDERS[estate]()


class SocketClient:
    """The thinnest client: one blocking socket per broker, kafka-python's codecs, every request of
    a step written before any answer is read. Versions are the ones the console's client
    negotiated (``versions.api_version(request)``)."""

    def __init__(self, addresses: dict[int, tuple[str, int]], versions) -> None:
        from kafka.protocol.parser import KafkaProtocol

        self.versions = versions
        self.socks = {b: socket.create_connection(a) for b, a in addresses.items()}
        for s in self.socks.values():
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.parsers = {b: KafkaProtocol(client_id="bench-raw") for b in addresses}

    def send_many(self, requests):
        pending: dict[int, list[int]] = defaultdict(list)
        for i, (request, node) in enumerate(requests):
            if request.API_VERSION is None:
                request.API_VERSION = self.versions.api_version(request)
            self.parsers[node].send_request(request)
            pending[node].append(i)
        for node in pending:
            self.socks[node].sendall(self.parsers[node].send_bytes())
        out: list = [None] * len(requests)
        sel = selectors.DefaultSelector()
        for node in pending:
            sel.register(self.socks[node], selectors.EVENT_READ, node)
        left = len(requests)
        while left:
            for key, _ in sel.select():
                node = key.data
                data = key.fileobj.recv(1 << 20)
                if not data:
                    raise EOFError(f"broker {node} closed the connection")
                for _, response in self.parsers[node].receive_bytes(data):
                    out[pending[node].pop(0)] = response
                    left -= 1
                if not pending[node]:
                    sel.unregister(key.fileobj)
        sel.close()
        return out

    def close(self) -> None:
        for s in self.socks.values():
            s.close()


class Phases:
    """Time calls one by one while in the ``with``: ``[(object, attribute)]`` are wrapped (a
    gateway instance's methods, a module's functions) and put back afterwards."""

    def __init__(self, targets) -> None:
        self.targets = list(targets)
        self.times: dict[str, list[float]] = {}
        self._saved: list = []

    def __enter__(self) -> Phases:
        for obj, name in self.targets:
            original = getattr(obj, name)
            self._saved.append((obj, name, vars(obj).get(name), name in vars(obj)))

            def timed(*args, _f=original, _name=name, **kwargs):
                start = time.perf_counter()
                try:
                    return _f(*args, **kwargs)
                finally:
                    self.times.setdefault(_name, []).append(time.perf_counter() - start)

            setattr(obj, name, timed)
        return self

    def __exit__(self, *exc) -> None:
        for obj, name, value, own in reversed(self._saved):
            if own:
                setattr(obj, name, value)
            else:
                delattr(obj, name)
        self._saved.clear()


def profile_top(fn, limit: int = 25, only: str = "") -> str:
    """fn() under cProfile: the top functions (those whose path contains ``only``) by cumulative
    time, then the top functions overall by own time."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(only, limit) if only else stats.sort_stats(
        "cumulative"
    ).print_stats(limit)
    stats.sort_stats("tottime").print_stats(limit)
    return "\n".join(
        line
        for line in out.getvalue().splitlines()
        if line.strip() and not line.startswith(("   Ordered", "   List"))
    )
