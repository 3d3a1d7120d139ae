"""Telemetry snapshot of a 100,000-partition sandbox vs the raw batched requests it needs.

Sandbox: 1,000 topics x 100 partitions x RF 2 on 6 brokers, in-process, with data in every log.
Raw: the snapshot's requests through the gateway (one Metadata, ListOffsets earliest and latest
batched per leader, one DescribeLogDirs per broker, one DescribeConfigs), timed inside the run.
Console: the whole ``collect_snapshot`` service of the same run (those requests, Arrow columns,
three Parquet files written atomically). Both figures come from the same snapshot (one run of
100k partitions takes tens of seconds). ``BENCH_PARTITIONS_TOPICS`` (default 1000) scales the sandbox down for a quick look.
Prints ``RESULT telemetry_snapshot ratio=<snapshot/raw requests> goal<=1.5`` last.
"""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

TOPICS = int(os.environ.get("BENCH_PARTITIONS_TOPICS", 1_000))
PARTITIONS, RF, BROKERS = 100, 2, 6


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

        from console.clusters.actions import gateway_for
        from console.models import Cluster
        from console.telemetry import snapshots as telemetry

        call_command("migrate", verbosity=0)
        cluster = Cluster.objects.create(
            name="bench", bootstrap_servers=sandbox.bootstrap_servers, request_timeout_s=300
        )
        gateway_for(cluster).describe_cluster()  # connections up, like a long-lived worker
        result = telemetry.collect_snapshot(cluster=cluster, now=datetime(2026, 1, 1, tzinfo=UTC))
        assert result.partitions == TOPICS * PARTITIONS and not result.errors, result.errors
        snapshot_bytes = sum(Path(p).stat().st_size for p in result.paths.values())
        print(
            f"partitions={result.partitions} brokers={BROKERS} snapshot_s={result.total_seconds:.3f} "
            f"raw_rpcs_s={result.rpc_seconds:.3f} snapshot_bytes={snapshot_bytes} "
            f"bytes_per_day_at_5min={snapshot_bytes * 288}"
        )
        print(f"RESULT telemetry_snapshot ratio={result.total_seconds / result.rpc_seconds:.2f} goal<=1.5")
    finally:
        sandbox.shutdown()


if __name__ == "__main__":
    main()
