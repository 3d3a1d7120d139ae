"""Audit search over 1,000,000 events: filtered first page vs the bare indexed SQL query; flat-memory export.

A throwaway SQLite console is filled with 1,000,000 hash-chained events and their AuditTarget index
rows (bulk-inserted, hashes computed as audit.record() does). The resource filters (exact, bare name,
narrow prefix, a prefix matching every event) join through the AuditTarget index. For each filter the
console side is ``audit_review.search_events`` (scoping, the resource plan probe, building the SELECT,
decoding the rows the page renders) and the raw side is that same SELECT (``audit_review.page_query``)
run on a bare sqlite3 cursor. Medians of interleaved runs. The RESULT ratio is over the whole filter
set (sum of console medians / sum of raw medians); every filter's own ratio is printed too (a query the
index answers in 0.05 ms shows a large ratio from the console's fixed ~0.2 ms, hence the workload ratio).
Then the whole trail is streamed through the JSON Lines exporter while peak memory is tracked.
Prints ``RESULT audit_search ratio=<console/raw> goal<=2`` last.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

EVENTS = int(os.environ.get("BENCH_AUDIT_EVENTS", "1000000"))
RUNS = 15
CLUSTERS = [f"cluster-{i:02d}" for i in range(20)]
ACTIONS = [
    "topic.create",
    "topic.delete",
    "config.alter",
    "acl.create",
    "acl.delete",
    "acl.change",
    "request.submit",
    "request.approve",
    "reassignment.execute.requested",
    "health.check.succeeded",
]
ACTORS = [f"user{i:03d}" for i in range(500)]
OUTCOMES = ["success"] * 17 + ["failure", "partial", "requested"]


def setup():
    os.environ["CONSOLE_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-audit-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return get_user_model().objects.create_superuser("bench", password="bench")


def fill(n: int) -> None:
    """Insert n chained events hashed exactly as AuditEvent.compute_hash() does (without record()'s per-event lock)."""
    import random

    from django.db import connection, transaction

    from console.audit.store import GENESIS_HASH
    from console.models import AuditChainHead, AuditEvent
    from console.models.audit import keyed_hash

    rnd = random.Random(7)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    prev = GENESIS_HASH
    cols = [
        "id", "created_at", "actor_id", "actor_name", "on_behalf_of", "source_ip", "cluster_id", "cluster_name",
        "action", "targets", "params", "before", "after", "outcomes", "outcome", "operation_id", "request_id",
        "prev_hash", "hash",
    ]  # fmt: skip
    sql = f"INSERT INTO console_auditevent ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})"
    target_sql = "INSERT INTO console_audittarget (event_id, target, name) VALUES (%s, %s, %s)"
    dumps = json.dumps
    batch, targets = [], []
    with transaction.atomic():
        for i in range(1, n + 1):
            created = start + timedelta(seconds=30 * i)
            target = f"topic:app.{rnd.randrange(100_000):05d}"
            partitions = rnd.randrange(12)
            row = {
                "id": i,
                "created_at": created.isoformat(timespec="microseconds"),
                "actor_id": None,
                "actor_name": rnd.choice(ACTORS),
                "on_behalf_of": "",
                "source_ip": "10.0.0.1",
                "cluster_id": None,
                "cluster_name": rnd.choice(CLUSTERS),
                "action": rnd.choice(ACTIONS),
                "targets": [target],
                "params": {"partitions": partitions},
                "before": None,
                "after": {"partitions": partitions},
                "outcomes": {target: {"ok": True}},
                "outcome": rnd.choice(OUTCOMES),
                "operation_id": None,
                "request_id": "",
                "prev_hash": prev,
            }
            prev = keyed_hash(row)  # the chain's own rule (HMAC under AUDIT_HMAC_KEY)
            batch.append([
                i, str(created.replace(tzinfo=None)), None, row["actor_name"], "", "10.0.0.1", None, row["cluster_name"], row["action"],
                dumps(row["targets"]), dumps(row["params"]), None, dumps(row["after"]), dumps(row["outcomes"]),
                row["outcome"], None, "", row["prev_hash"], prev,
            ])  # fmt: skip
            targets.append((i, target, target.split(":", 1)[1]))  # what audit.record() indexes
            if len(batch) == 20_000:
                with connection.cursor() as cur:
                    cur.executemany(sql, batch)
                    cur.executemany(target_sql, targets)
                batch, targets = [], []
        if batch:
            with connection.cursor() as cur:
                cur.executemany(sql, batch)
                cur.executemany(target_sql, targets)
        AuditChainHead.objects.update_or_create(pk=1, defaults={"last_id": n, "last_hash": prev})
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    last = AuditEvent.objects.get(pk=n)
    if last.compute_hash() != last.hash:
        raise SystemExit("the bench's hashing differs from AuditEvent.compute_hash()")


def median_pair(ours_fn, raw_fn) -> tuple[float, float]:
    ours_fn(), raw_fn()
    a, b = [], []
    for _ in range(RUNS):
        t = time.perf_counter()
        ours_fn()
        a.append(time.perf_counter() - t)
        t = time.perf_counter()
        raw_fn()
        b.append(time.perf_counter() - t)
    return statistics.median(a), statistics.median(b)


def main() -> None:
    user = setup()
    from django.db import connection

    from console.audit import export as audit_export
    from console.audit import review as audit_review
    from console.audit.review import AuditFilter

    t = time.perf_counter()
    fill(EVENTS)
    print(f"filled {EVENTS} events in {time.perf_counter() - t:.1f}s")
    filters = {
        "cluster+action": AuditFilter(cluster="cluster-07", action="acl.create"),
        "actor": AuditFilter(actor="user123"),
        "outcome": AuditFilter(outcome="failure"),
        "time range": AuditFilter(
            since=datetime(2026, 3, 1, tzinfo=UTC), until=datetime(2026, 3, 2, tzinfo=UTC)
        ),
        "resource": AuditFilter(resource="topic:app.04242"),
        "resource bare": AuditFilter(resource="app.04242"),
        "resource prefix": AuditFilter(resource="topic:app.0424*"),
        "wide prefix": AuditFilter(resource="topic:app.*"),
        "none": AuditFilter(),
    }
    worst = worst_extra = total_ours = total_raw = 0.0
    connection.ensure_connection()
    raw_conn = connection.connection  # the same SQLite database, without the ORM
    for label, f in filters.items():
        raw_sql, params = audit_review.page_query(actor=user, audit_filter=f)
        raw_sql = raw_sql.replace("%s", "?")

        def raw(raw_sql=raw_sql, params=params):
            return raw_conn.execute(raw_sql, params).fetchall()

        def ours(f=f):
            return audit_review.search_events(actor=user, audit_filter=f).events

        n = len(ours())
        ours_s, raw_s = median_pair(ours, raw)
        ratio = ours_s / raw_s
        worst = max(worst, ratio)
        worst_extra = max(worst_extra, ours_s - raw_s)
        total_ours += ours_s
        total_raw += raw_s
        print(
            f"{label:15s} rows={n:3d} console_ms={ours_s * 1000:7.2f} raw_sql_ms={raw_s * 1000:7.2f} ratio={ratio:.2f}"
        )
        if ours_s > 0.1:
            print(f"  over the 100 ms goal: {label}")
    qs = audit_review.filtered_events(actor=user, audit_filter=AuditFilter())
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    size = 0
    rss_early = rss_before
    for n, chunk in enumerate(audit_export.export_jsonl(qs)):
        size += len(chunk)
        if n == 1000:
            rss_early = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"export jsonl: {size / 1e6:.0f} MB in {time.perf_counter() - t:.1f}s; peak RSS {rss_before:.0f} MB before, "
        f"{rss_early:.0f} MB after 1,000 rows, {rss_after:.0f} MB after all {EVENTS} rows"
    )
    print(
        f"filter set: console_ms={total_ours * 1000:.1f} raw_sql_ms={total_raw * 1000:.1f}; "
        f"worst single-filter ratio={worst:.2f}, worst added latency={worst_extra * 1000:.2f} ms"
    )
    print(f"RESULT audit_search ratio={total_ours / total_raw:.3f} goal<=2")


if __name__ == "__main__":
    try:
        main()
    finally:  # the throwaway database is ~700 MB
        if os.environ.get("CONSOLE_VAR_DIR", "").startswith(tempfile.gettempdir()):
            shutil.rmtree(os.environ["CONSOLE_VAR_DIR"], ignore_errors=True)
