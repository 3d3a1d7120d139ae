"""Telemetry snapshot of a 100,000-partition sandbox vs the raw batched requests it needs.

Sandbox: 1,000 topics x 100 partitions x RF 2 on 6 brokers, in-process, with data in every log.
Raw: the snapshot's requests through the gateway (one Metadata, ListOffsets earliest and latest
batched per leader, one DescribeLogDirs per broker, one DescribeConfigs) — ``fetch_snapshot``.
Console: the whole ``collect_snapshot`` service (those requests, Arrow columns, three Parquet
files written atomically). Medians of interleaved runs after a warm-up.
Prints ``RESULT telemetry_snapshot ratio=<console/raw> goal<=1.5`` last.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

TOPICS, PARTITIONS, RF, BROKERS = 1_000, 100, 2, 6
RUNS = 3


def main() -> None:
    from sandbox.cluster import SandboxCluster

    sandbox = SandboxCluster(brokers=BROKERS, controllers=1, port=0, speed=0, seed="bench-telemetry")
    sandbox.start()
    try:
        for i in range(TOPICS):
            name = f"bench.t{i:04d}"
            sandbox.create_topic(name, PARTITIONS, RF)
            sandbox.produce_synthetic(name, 1_000_000 if i % 3 else 0)
        sandbox.advance(2)
        os.environ["CONSOLE_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-telemetry-")
        os.environ["TELEMETRY_LAKE_DIR"] = os.path.join(os.environ["CONSOLE_VAR_DIR"], "lake")
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
        import django

        django.setup()
        from django.core.management import call_command

        from console.kafka import get_gateway
        from console.models import Cluster
        from console.services import telemetry
        from console.services.clusters import connection_for

        call_command("migrate", verbosity=0)
        cluster = Cluster.objects.create(
            name="bench", bootstrap_servers=sandbox.bootstrap_servers, request_timeout_s=120
        )
        gw = get_gateway(connection_for(cluster))
        when = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=5 * i) for i in range(100))

        def console() -> float:
            start = time.perf_counter()
            result = telemetry.collect_snapshot(cluster=cluster, now=next(when))
            assert result.partitions == TOPICS * PARTITIONS and not result.errors, result.errors
            return time.perf_counter() - start

        def raw() -> float:
            start = time.perf_counter()
            snap = telemetry.fetch_snapshot(gw)
            assert len(snap.latest) == TOPICS * PARTITIONS
            return time.perf_counter() - start

        console(), raw()
        ours, theirs = [], []
        for _ in range(RUNS):
            ours.append(console())
            theirs.append(raw())
        o, t = statistics.median(ours), statistics.median(theirs)
        lake_bytes = sum(f.stat().st_size for f in Path(os.environ["TELEMETRY_LAKE_DIR"]).rglob("*.parquet"))
        per_snapshot = lake_bytes / (RUNS + 1)
        print(
            f"partitions={TOPICS * PARTITIONS} brokers={BROKERS} snapshot_s={o:.3f} raw_rpcs_s={t:.3f} "
            f"snapshot_bytes={per_snapshot:.0f} bytes_per_day_at_5min={per_snapshot * 288:.0f}"
        )
        print(f"RESULT telemetry_snapshot ratio={o / t:.2f} goal<=1.5")
    finally:
        sandbox.shutdown()


if __name__ == "__main__":
    main()
