"""SandboxFleet: many independent sandbox clusters served by one process, on one event loop.

Each cluster has its own brokers and controllers (ephemeral ports), its own state, cluster id (from
its own seed), faults and virtual clock; they share only the asyncio loop and its thread, so a
fleet of 50 costs one thread, not 50. ``python -m sandbox --clusters N`` runs one from the command
line; ``running_fleet(N, ...)`` in tests; ``bench/fleet_world.py`` in a process of its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sandbox.cluster import SandboxCluster

TOPIC_PREFIX = "fleet.topic-"


def cluster_names(count: int, prefix: str = "fleet") -> list[str]:
    """``fleet-01`` .. ``fleet-50``: zero-padded to at least two digits, so they sort by number."""
    width = max(2, len(str(count)))
    return [f"{prefix}-{i:0{width}d}" for i in range(1, count + 1)]


class SandboxFleet:
    """``count`` sandbox clusters named ``<prefix>-01``.. on one event loop in one thread.

    Every cluster has ``brokers`` brokers and ``controllers`` controllers on ephemeral ports, and
    ``topics`` topics ``fleet.topic-NNNNN`` of ``partitions`` partitions each (replication factor
    ``replication_factor``, at most the broker count). Its seed is ``<seed>/<name>``, so cluster ids
    and topic ids differ between clusters and stay the same from one run to the next. ``speed``
    and ``racks`` as for ``SandboxCluster``.
    """

    def __init__(
        self,
        count: int,
        *,
        brokers: int = 3,
        controllers: int = 1,
        topics: int = 0,
        partitions: int = 1,
        replication_factor: int = 3,
        speed: float = 0.0,
        racks: Sequence[str] | None = None,
        seed: str = "fleet",
        prefix: str = "fleet",
    ) -> None:
        if count < 1:
            raise ValueError("a fleet has at least one cluster")
        self.topics = topics
        self.partitions = partitions
        self.replication_factor = max(1, min(replication_factor, brokers))
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self.clusters: dict[str, SandboxCluster] = {
            name: SandboxCluster(
                brokers=brokers,
                controllers=controllers,
                port=0,
                speed=speed,
                racks=racks,
                seed=f"{seed}/{name}",
                loop=self._loop,
            )
            for name in cluster_names(count, prefix)
        }

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> SandboxFleet:
        """Start the loop thread, then every cluster's listeners and its topics."""
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.call_soon(started.set)
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="sandbox-fleet-loop", daemon=True)
        self._thread.start()
        started.wait()
        try:
            for cluster in self.clusters.values():
                cluster.start()
                for t in range(self.topics):
                    cluster.create_topic(f"{TOPIC_PREFIX}{t:05d}", self.partitions, self.replication_factor)
        except BaseException:
            self.shutdown()
            raise
        return self

    def shutdown(self) -> None:
        """Stop every cluster, then the loop and its thread."""
        try:
            for cluster in self.clusters.values():
                cluster.shutdown()  # a cluster already shut down returns at once
        finally:
            if self._thread is not None:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(10)
                self._thread = None
            if not self._loop.is_closed():
                self._loop.close()

    def __enter__(self) -> SandboxFleet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # ---- what callers need -----------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> dict[str, str]:
        """Cluster name -> its bootstrap servers (``bench.harness.RemoteSandbox`` sends this)."""
        return {name: c.bootstrap_servers for name, c in self.clusters.items()}

    def describe(self) -> dict[str, dict[str, Any]]:
        """Cluster name -> its id, bootstrap servers and controllers, topic and partition counts."""
        out: dict[str, dict[str, Any]] = {}
        for name, c in self.clusters.items():
            with c.state.lock:
                topics = len(c.state.topics)
                partitions = sum(len(t.partitions) for t in c.state.topics.values())
            out[name] = {
                "cluster_id": c.cluster_id,
                "bootstrap_servers": c.bootstrap_servers,
                "bootstrap_controllers": c.bootstrap_controllers,
                "topics": topics,
                "partitions": partitions,
            }
        return out

    def advance(self, seconds: float) -> None:
        """Move every cluster's virtual clock forward."""
        for cluster in self.clusters.values():
            cluster.advance(seconds)

    def call_on(self, name: str, method: str, *args: Any) -> Any:
        """``clusters[name].<method>(*args)``: one cluster's own methods (faults, topics, clock)."""
        return getattr(self.clusters[name], method)(*args)


@contextmanager
def running_fleet(count: int, **kwargs: Any) -> Iterator[SandboxFleet]:
    """A started ``SandboxFleet(count, **kwargs)``, shut down after."""
    fleet = SandboxFleet(count, **kwargs)
    fleet.start()
    try:
        yield fleet
    finally:
        fleet.shutdown()
