"""The fleet benches' shared world: N sandbox clusters served by one process of their own, each
registered in a throwaway console.

``FleetWorld.start(count, partitions=..., ...)`` starts ``sandbox.fleet.SandboxFleet`` in a spawned
process (``harness.RemoteSandbox``: one event loop serving every cluster, as real clusters run
outside the console's process), waits until every cluster listens, then registers each one in the
bench's database as ``harness.setup_console`` does for one (SQLite in a temp dir, superuser
``bench``), under the fleet's names ``fleet-01``..; ``stop()`` closes the console's clients, stops
the sandbox process and removes the console's directory. Also a ``with`` block::

    with FleetWorld.start(50, partitions=20_000, brokers=3) as world:
        world.names            # ["fleet-01", ...]
        world.servers          # name -> bootstrap servers
        world.clusters         # name -> console.models.Cluster
        world.client           # Django test client logged in as the superuser "bench"
        world.call_on("fleet-03", "create_topic", "x", 10, 3)   # a SandboxCluster method, in the sandbox
        world.advance(1.0)     # every cluster's virtual clock

Per cluster: ``partitions`` partitions in topics ``fleet.topic-NNNNN`` of ``per_topic`` partitions
(the last one takes the remainder), replication factor ``rf``; ``sized=True`` gives every partition
the log sizes and end offsets of ``harness.fill_log_sizes`` (moves then copy bytes); the clock is
stopped unless ``speed`` says otherwise. ``BENCH_FLEET_CLUSTERS`` overrides the count (smaller runs
while developing).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import RemoteSandbox, fill_log_sizes, setup_console, teardown  # noqa: E402

TOPIC_PREFIX = "fleet.topic-"


def fleet_size(default: int) -> int:
    """The cluster count: ``BENCH_FLEET_CLUSTERS`` when set, else ``default``."""
    return int(os.environ.get("BENCH_FLEET_CLUSTERS", default))


def topic_sizes(partitions: int, per_topic: int) -> list[int]:
    """Partition counts of a cluster's topics: ``per_topic`` each, the last one the remainder."""
    full, rest = divmod(partitions, per_topic)
    return [per_topic] * full + ([rest] if rest else [])


def build_fleet(
    count: int,
    brokers: int,
    controllers: int,
    partitions: int,
    per_topic: int,
    rf: int,
    sized: bool,
    speed: float,
):
    """The sandbox process's builder: a started ``SandboxFleet`` with every cluster's topics."""
    from sandbox.fleet import SandboxFleet

    fleet = SandboxFleet(
        count, brokers=brokers, controllers=controllers, speed=speed, seed="bench-fleet"
    ).start()
    factor = max(1, min(rf, brokers))
    for index, cluster in enumerate(fleet.clusters.values()):
        for t, size in enumerate(topic_sizes(partitions, per_topic)):
            cluster.create_topic(f"{TOPIC_PREFIX}{t:05d}", size, factor)
        if sized:
            fill_log_sizes(cluster, seed=index)
    return fleet


class FleetWorld:
    """N registered sandbox clusters and a logged-in console client; see the module docstring."""

    def __init__(self, sandbox: RemoteSandbox) -> None:
        self.sandbox = sandbox
        self.described: dict[str, dict[str, Any]] = sandbox.call("describe")
        self.names = list(self.described)
        self.servers = {name: d["bootstrap_servers"] for name, d in self.described.items()}
        self.client: Any = None
        self.clusters: dict[str, Any] = {}

    @classmethod
    def start(
        cls,
        count: int = 50,
        *,
        partitions: int = 1_000,
        per_topic: int = 100,
        brokers: int = 3,
        controllers: int = 1,
        rf: int = 3,
        sized: bool = False,
        speed: float = 0.0,
        timeout_s: int = 60,
    ) -> FleetWorld:
        """Start the sandbox process, wait until every cluster serves, register them all."""
        started = time.perf_counter()
        sandbox = RemoteSandbox(
            build_fleet, count, brokers, controllers, partitions, per_topic, rf, sized, speed
        )
        try:
            world = cls(sandbox)
            world.register(timeout_s)
        except BaseException:
            teardown(sandbox)
            raise
        print(
            f"fleet world: {count} clusters x {partitions:,} partitions ({brokers} brokers each) serving "
            f"and registered in {time.perf_counter() - started:.1f}s",
            flush=True,
        )
        return world

    def register(self, timeout_s: int) -> None:
        """Every cluster in the console's database (the first through ``harness.setup_console``)."""
        first, *rest = self.names
        self.client, _row = setup_console(self.servers[first], timeout_s, name=first)
        from console.models import Cluster

        # through the brokers only, as setup_console registers one (a connection names brokers or
        # controllers, not both); each cluster's controllers are in ``described``
        rows = [
            Cluster(name=name, bootstrap_servers=self.servers[name], request_timeout_s=timeout_s)
            for name in rest
        ]
        Cluster.objects.bulk_create(rows)
        self.clusters = {c.name: c for c in Cluster.objects.filter(name__in=self.names)}

    def call_on(self, name: str, method: str, *args: Any) -> Any:
        """``SandboxCluster.<method>(*args)`` of cluster ``name``, in the sandbox process."""
        return self.sandbox.call("call_on", name, method, *args)

    def advance(self, seconds: float) -> None:
        """Move every cluster's virtual clock forward."""
        self.sandbox.advance(seconds)

    def stop(self) -> None:
        """Close the console's clients, stop the sandbox process, remove the console's directory."""
        teardown(self.sandbox)

    def __enter__(self) -> FleetWorld:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
