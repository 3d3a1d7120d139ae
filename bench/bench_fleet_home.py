"""Fleet home: 50 registered clusters, each summarized by the real collector, against one cluster's cold
overview floor.

Estate: ``bench/fleet_world.py`` (50 sandbox clusters of ``BENCH_FLEET_PARTITIONS`` partitions, default
20,000, on ``BENCH_FLEET_BROKERS`` brokers, default 6, in topics of 100 partitions, RF 3: the clusters
of bench_fleet_snapshots; one process of their own, one event loop), each registered in a throwaway
console. Every cluster's summary is
written by the telemetry collector (``snapshots.collect_for``: a real snapshot into the bench's lake);
two clusters have a broker stopped first (unhealthy), one is then pointed at a closed port and
collected again (unreachable, its last figures kept); a third of the clusters have a running
operation and a held change (rows in the database, as the page counts them).

Console side: ``GET /fleet/`` through Django's test client as an operator bound to all 50 clusters
(middleware, session, the view: ``fleet.home.fleet`` - one query for the actor's bindings, one for the
clusters with their summaries and counts - and the page). The page is checked first: 50 rows, each
cluster's state and partitions as its summary says.
Floor: one cluster's cold overview as ``overview_page`` and ``overview_1m`` measure it on the wire
(``bench_overview_page.wire_floor``: Metadata, DescribeCluster, DescribeQuorum and an ApiVersions to
every broker of fleet-01, written to plain sockets at once, every answer read whole, nothing decoded,
the collector paused) - what opening one cluster live costs at the least, where the fleet home shows
all 50 from the database.
Shown, not gated: ``fleet.home.fleet`` alone (the rows, no page).
GC: setup frozen for both sides; 7 alternating runs. Prints ``RESULT fleet_home ratio=<page/floor>
goal<=0.1`` last; exit 1 above.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_overview_page import wire_floor  # noqa: E402
from bench.fleet_world import FleetWorld, fleet_size  # noqa: E402
from bench.harness import compare, gate, get_ok  # noqa: E402

CLUSTERS = fleet_size(50)
PARTITIONS = int(os.environ.get("BENCH_FLEET_PARTITIONS", "20000"))
BROKERS = int(os.environ.get("BENCH_FLEET_BROKERS", "6"))
PER_TOPIC = 100
GOAL = 0.1


def summarize(world: FleetWorld) -> dict[str, str]:
    """Every cluster's summary through the collector; the states the page must show."""
    from django.utils import timezone

    from console.models import Cluster
    from console.telemetry import snapshots

    os.environ["TELEMETRY_LAKE_DIR"] = tempfile.mkdtemp(prefix="lake-", dir=os.environ["CONSOLE_VAR_DIR"])
    names = world.names
    unhealthy, unreachable = set(names[1:3]), names[3] if len(names) > 3 else None
    for name in unhealthy:
        world.call_on(name, "stop_broker", BROKERS)
    started = time.perf_counter()
    for name in names:
        result = snapshots.collect_for(world.clusters[name])
        if isinstance(result, str):
            raise SystemExit(f"the snapshot of {name} failed: {result}")
    print(
        f"{len(names)} clusters snapshotted by the collector in {time.perf_counter() - started:.1f}s",
        flush=True,
    )
    for name in unhealthy:
        world.call_on(name, "start_broker", BROKERS)
    states = dict.fromkeys(names, "healthy") | dict.fromkeys(unhealthy, "unhealthy")
    if unreachable:
        cluster = world.clusters[unreachable]
        Cluster.objects.filter(pk=cluster.pk).update(bootstrap_servers="127.0.0.1:1", request_timeout_s=2)
        cluster.refresh_from_db()
        later = timezone.now() + timedelta(hours=1)  # the next interval: this one has its snapshot
        assert isinstance(snapshots.collect_for(cluster, now=later), str)
        states[unreachable] = "unreachable"
    return states


def operator_client(world: FleetWorld):
    """A logged-in operator bound to every cluster; a third of the clusters have a running operation
    and a held change."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from console.models import ChangeRequest, Operation, Role, RoleBinding

    user = get_user_model().objects.create_user("fleet-operator", password="bench")
    clusters = [world.clusters[n] for n in world.names]
    RoleBinding.objects.bulk_create([RoleBinding(cluster=c, user=user, role=Role.OPERATOR) for c in clusters])
    busy = clusters[::3]
    Operation.objects.bulk_create([Operation(kind="topic.create", cluster=c, state="running") for c in busy])
    ChangeRequest.objects.bulk_create(
        [
            ChangeRequest(
                cluster=c, kind="change.config", resource="t", requested_by=user, requested_by_name="x"
            )
            for c in busy
        ]
    )
    client = Client()
    client.force_login(user)
    return client, user


def check_page(client, world: FleetWorld, states: dict[str, str]) -> None:
    from console.models import ClusterSummary

    body = get_ok(client, "/fleet/").content.decode()
    shown = dict(re.findall(r'<tr data-cluster="([^"]+)" data-state="([^"]+)">', body))
    assert shown == states, (shown, states)
    partitions = {s.cluster.name: s.partitions for s in ClusterSummary.objects.select_related("cluster")}
    assert set(partitions.values()) == {PARTITIONS}, partitions
    assert body.count(f"<td>{PARTITIONS}</td>") == len(world.names), "a row without its partitions"


def main() -> None:
    with FleetWorld.start(CLUSTERS, partitions=PARTITIONS, per_topic=PER_TOPIC, brokers=BROKERS) as world:
        states = summarize(world)
        client, user = operator_client(world)
        check_page(client, world, states)
        from console.fleet import home

        ratio = compare(
            {f"console fleet home page ({len(world.names)} clusters)": lambda: get_ok(client, "/fleet/")},
            {
                "raw socket reads of one cluster's overview": wire_floor(
                    world.servers[world.names[0]], BROKERS
                )
            },
            shown={"fleet.home.fleet alone": lambda: home.fleet(user)},
            note=f"fleet-01: {PARTITIONS:,} partitions, {BROKERS} brokers",
        )
    gate("fleet_home", ratio, GOAL)


if __name__ == "__main__":
    main()
