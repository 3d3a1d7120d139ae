"""Search across clusters: 50 clusters x 20,000 topics (3 partitions each) and 2,000 groups, from their
telemetry snapshot files, against pyarrow's scan of the same names.

The lake is written synthetically (pipeline.lake.write_snapshot, the collector's layout and schema),
with 100 older snapshots beside each newest file (a day directory's worth); the search reads no
Kafka, so no sandbox runs. Console: the /search/ page as a superuser (every cluster visible) over
topics, groups and principals, the names cached (any search after the first within a snapshot
interval). Floor: the least work for the same answer with the names already in memory -
``pc.match_substring`` over the same 100 distinct-name arrays and 50 principal lists lower-cased
(as the console keeps them when a name has an upper-case letter; ``ignore_case`` scans twice as
long) / ``pc.match_substring_regex`` over the names, the first FLEET_SEARCH_CAP matches of each
taken to Python. The
substring and the regex query are each compared with their own floor; the larger ratio is gated.
GC: setup frozen for both sides; 7 alternating runs. Prints ``RESULT fleet_search ratio=<x>
goal<=<y>`` last; exit 1 above.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from bench.harness import compare, gate, get_ok, setup_console, teardown  # noqa: E402

CLUSTERS = int(os.environ.get("BENCH_FLEET_CLUSTERS", "50"))
TOPICS = int(os.environ.get("BENCH_FLEET_TOPICS", "20000"))
PARTITIONS = 3
GROUPS = 2000
OLDER = int(os.environ.get("BENCH_FLEET_OLDER", "100"))  # earlier snapshots in each day directory
GOAL = 3.0
SUBSTRING, REGEX = "svc-1234", r"^team-[0-3]\.svc-01\d{2}7\.events$"
NOW = datetime(2026, 5, 4, 12, 5, tzinfo=UTC)


def _topics(c: int) -> list[str]:
    return [f"team-{(c + i) % 7}.svc-{i:05d}.events" for i in range(TOPICS)]


def write_lake(lake) -> None:
    """Each cluster's snapshot: its partitions (topic, partition) and groups (group, topic) files."""
    from pipeline import lake as lake_mod

    for c in range(CLUSTERS):
        names = _topics(c)
        topic_col = pa.array(names * PARTITIONS, pa.string())
        n = len(topic_col)
        partitions = pa.table(
            {
                "schema_version": pa.repeat(lake_mod.SCHEMA_VERSION, n).cast(pa.int16()),
                "ts": pa.repeat(pa.scalar(NOW, pa.timestamp("ms", tz="UTC")), n),
                "topic": topic_col,
                "partition": pa.array([p for p in range(PARTITIONS) for _ in names], pa.int32()),
            }
        )
        groups = pa.table(
            {
                "schema_version": pa.repeat(lake_mod.SCHEMA_VERSION, GROUPS).cast(pa.int16()),
                "ts": pa.repeat(pa.scalar(NOW, pa.timestamp("ms", tz="UTC")), GROUPS),
                "group": pa.array([f"app-{g:04d}.svc-{g * 7 % TOPICS:05d}" for g in range(GROUPS)]),
                "topic": pa.array(names[:GROUPS]),
                "partition": pa.repeat(0, GROUPS).cast(pa.int32()),
            }
        )
        full = {}
        for name, table in (("partitions", partitions), ("groups", groups)):
            schema = lake_mod.SCHEMAS[name]
            cols = {
                f.name: table[f.name] if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
                for f in schema
            }
            full[name] = pa.table(cols, schema=schema)
        lake_mod.write_snapshot(lake, f"fleet-{c:02d}", NOW, full, 300)


def register(first) -> list:
    from console.models import Cluster, ClusterSummary

    first.name = "fleet-00"
    first.save()
    rest = Cluster.objects.bulk_create(
        [Cluster(name=f"fleet-{c:02d}", bootstrap_servers="127.0.0.1:1") for c in range(1, CLUSTERS)]
    )
    clusters = [first, *rest]
    ClusterSummary.objects.bulk_create(
        [
            ClusterSummary(
                cluster=cl,
                taken_at=NOW,
                reachable=True,
                principals=[[f"User:svc-{i:05d}", 2] for i in range(200)],
            )
            for cl in clusters
        ]
    )
    return clusters


def older_snapshots(lake) -> None:
    """OLDER earlier snapshots beside each newest file (hard links to it), as a day of 5-minute
    snapshots leaves them: a search must not list and stat them all on every query."""
    from console.telemetry.lakefiles import latest_file

    for c in range(CLUSTERS):
        for dataset in ("partitions", "groups"):
            newest = latest_file(lake, f"fleet-{c:02d}", dataset)
            slot = int(newest.stem.split("-")[1])
            for k in range(1, OLDER + 1):
                os.link(newest, newest.parent / f"snap-{slot - 300 * k}.parquet")


def floors(lake, cap: int) -> dict:
    """The least work for the same answers with the names in memory: (substring floor, regex floor)."""
    from console.telemetry.lakefiles import latest_file

    files = [
        (latest_file(lake, f"fleet-{c:02d}", ds), col)
        for c in range(CLUSTERS)
        for ds, col in (("partitions", "topic"), ("groups", "group"))
    ]
    arrays = [pc.unique(pq.read_table(p, columns=[col]).column(col)) for p, col in files]
    arrays += [pa.array([f"User:svc-{i:05d}" for i in range(200)]) for _ in range(CLUSTERS)]

    folded = [pc.utf8_lower(a) for a in arrays]  # the names lower-cased once, as the console keeps them
    needle = SUBSTRING.lower()

    def scan(arrays_scanned, match):
        return [
            names.filter(match(scanned)).slice(0, cap).to_pylist()
            for names, scanned in zip(arrays, arrays_scanned, strict=True)
        ]

    return {
        "substring": lambda: scan(folded, lambda a: pc.match_substring(a, pattern=needle)),
        "regex": lambda: scan(arrays, lambda a: pc.match_substring_regex(a, pattern=REGEX)),
    }


def main() -> None:
    lake = tempfile.mkdtemp(prefix="bench-fleet-lake-")
    os.environ["TELEMETRY_LAKE_DIR"] = lake
    try:
        client, first = setup_console("127.0.0.1:1")
        register(first)
        write_lake(lake)
        older_snapshots(lake)
        from django.conf import settings

        url = "/search/"
        page = get_ok(client, url, q=SUBSTRING).content.decode()
        assert f"fleet-{CLUSTERS - 1:02d}" in page, "the search did not reach every cluster"
        raw = floors(lake, settings.FLEET_SEARCH_CAP)
        ratios = []
        for label, params in (("substring", {"q": SUBSTRING}), ("regex", {"q": REGEX, "regex": "on"})):
            print(f"-- {label}")
            ours = {f"console /search/ {label} (names cached)": lambda p=params: get_ok(client, url, **p)}
            floor = {f"pyarrow scan, {label} (names in memory)": raw[label]}
            ratios.append(compare(ours, floor, note="pyarrow over the same names"))
        print(
            f"{CLUSTERS} clusters x {TOPICS} topics ({PARTITIONS} partitions), {GROUPS} groups, 200 principals each;"
        )
        print(f"{OLDER} older snapshots beside each newest file")
        gate("fleet_search", max(ratios), GOAL)
    finally:
        teardown(None)
        shutil.rmtree(lake, ignore_errors=True)


if __name__ == "__main__":
    main()
