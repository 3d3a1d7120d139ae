"""The cross-cluster search tests' world: two clusters (the shared sandbox and a second one of its own),
each with its own topics and groups under one run's marker, snapshotted into a tmp lake by the
telemetry collector, and each with a summary naming its ACL principals."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from console.clusters.actions import gateway_for
from console.fleet import search as fleet_search
from console.models import Cluster, ClusterSummary
from console.telemetry import names as snapshot_names
from console.telemetry import snapshots as telemetry
from console.topics import cache as metadata_cache
from sandbox.testing import running_sandbox

B = "cluster-b"
NOW = datetime(2026, 5, 4, 12, 7, 30, tzinfo=UTC)
INTERVAL_S = 300


@dataclass
class SearchWorld:
    marker: str  # in every name of this test's topics, groups and principals
    lake: Path
    a: Cluster  # "sandbox", the personas' cluster
    b: Cluster  # cluster-b: no persona holds a role on it
    sandbox_a: object
    sandbox_b: object

    def name(self, rest: str) -> str:
        return f"{self.marker}-{rest}"

    def snapshot(self, cluster: Cluster, now: datetime = NOW) -> None:
        result = telemetry.collect_snapshot(cluster=cluster, now=now, force=True)
        assert not result.skipped and result.errors == ()


def second_sandbox():
    """Cluster B's own sandbox (the module-scoped ``search_other_sandbox`` fixture)."""
    with running_sandbox(brokers=1, controllers=1, speed=0, seed="fleet-search-b") as sb:
        yield sb
        gateway_for(Cluster(name=B, bootstrap_servers=sb.bootstrap_servers, request_timeout_s=5)).close()


def _estate(sandbox, world: SearchWorld, topics: list[str], group: str) -> None:
    for topic in topics:
        sandbox.create_topic(world.name(topic), partitions=2)
    sandbox.add_group(world.name(group), offsets={(world.name(topics[0]), 0): 0})


def make_world(kafka_cluster, sandbox, other_sandbox, tmp_path, monkeypatch):
    """The ``search_world`` fixture (tests/conftest.py): both clusters snapshotted at NOW. Sandbox:
    topics orders, payments (group billing); B: orders-eu, audit (group billing-eu). Summaries:
    sandbox User:<m>-alice (3 ACLs), User:bob; B: User:<m>-carol (1 ACL)."""
    lake = tmp_path / "lake"
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(lake))
    monkeypatch.setenv("TELEMETRY_INTERVAL_S", str(INTERVAL_S))
    snapshot_names.clear_cache()
    fleet_search.clear_cache()
    metadata_cache.clear()
    b = Cluster.objects.create(name=B, bootstrap_servers=other_sandbox.bootstrap_servers, request_timeout_s=5)
    w = SearchWorld(uuid.uuid4().hex[:8], lake, kafka_cluster, b, sandbox, other_sandbox)
    _estate(sandbox, w, ["orders", "payments"], "billing")
    _estate(other_sandbox, w, ["orders-eu", "audit"], "billing-eu")
    w.snapshot(w.a)
    w.snapshot(w.b)
    # the principals as a summary would name them (whatever the snapshot's own summary found)
    for cluster, principals in (
        (w.a, [[f"User:{w.marker}-alice", 3], ["User:bob", 1]]),
        (w.b, [[f"User:{w.marker}-carol", 1]]),
    ):
        ClusterSummary.objects.update_or_create(
            cluster=cluster, defaults={"taken_at": NOW, "reachable": True, "principals": principals}
        )
    yield w
    snapshot_names.clear_cache()
    fleet_search.clear_cache()
    metadata_cache.clear()
