"""Audit search over 1,000,000 events: filtered first page vs the bare indexed SQL query; flat-memory export.

A throwaway SQLite console is filled with 1,000,000 hash-chained events and their AuditTarget index
rows (bulk-inserted, hashes computed as audit.record() does). The resource filters (exact, bare name,
narrow prefix, a prefix matching every event) join through the AuditTarget index. Six filters match
nothing (an actor with no events, an actor in a cluster with none, a cluster and action that never
meet, an outcome no event has, a resource and a prefix no event names): there no page ever fills, so
a plan walking events newest first reads the whole trail. For each filter the
console side is ``audit_review.search_events`` (scoping, the resource plan probe, building the SELECT,
decoding the rows the page renders) and the raw side is plain hand-written SQL for the same page (the
list's columns, newest first, one row more than a page; never the console's own query builder) on a
bare ``sqlite3`` connection to the same file; for the resource filters both natural ways of writing
it (ids from the target index, or an index probe per event) are timed and the faster is the floor.
Each floor query must return exactly the console's rows. GC: setup frozen for both sides; 15
alternating runs per filter, min / median / max printed. The RESULT ratio is over the whole filter
set (sum of console medians / sum of floor medians); every filter's own ratio is printed too (a query
the index answers in 0.05 ms shows a large ratio from the console's fixed ~0.2 ms, hence the workload
ratio), and every filter's console median is gated under 100 ms. Then the whole trail is streamed
through the JSON Lines exporter while peak memory is tracked (printed, not gated).
Prints ``RESULT audit_search ratio=<console/raw> goal<=2`` last; exit 1 on any missed goal.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
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


# The floor: for each filter, the plain SQL a developer would write by hand for the same page (the
# list's columns, newest first, one more row than a page), run on a bare sqlite3 connection to the
# same database file. Where a resource filter can be written two ways (the matching ids from the
# index, or a probe of the index per event walked newest first), both are timed and the faster is
# the floor. Every floor query must return exactly the console's rows.
COLUMNS = "id, created_at, actor_name, on_behalf_of, cluster_name, action, targets, outcome"
EVENTS_T, TARGETS_T = "console_auditevent", "console_audittarget"
TOP = "\U0010ffff"


def floor_queries(page: int) -> dict[str, list[tuple[str, list]]]:
    tail = f"ORDER BY id DESC LIMIT {page + 1}"

    def resource(column: str, cond: str, values: list) -> list[tuple[str, list]]:
        return [
            (
                f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE id IN "
                f"(SELECT event_id FROM {TARGETS_T} WHERE {cond}) {tail}",
                values,
            ),
            (
                f"SELECT {COLUMNS} FROM {EVENTS_T} e WHERE EXISTS (SELECT 1 FROM {TARGETS_T} t "
                f"WHERE t.event_id = e.id AND t.{cond}) {tail}",
                values,
            ),
        ]

    return {
        "cluster+action": [
            (
                f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE cluster_name = ? AND action = ? {tail}",
                ["cluster-07", "acl.create"],
            )
        ],
        # The actor filter also finds the user's API-token events ("user123 [token ...") and events
        # done on their behalf: the floor must answer the same question.
        "actor": actor_floors("user123", tail),
        "outcome": [(f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE outcome = ? {tail}", ["failure"])],
        "time range": [
            (
                f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE created_at >= ? AND created_at < ? {tail}",
                ["2026-03-01 00:00:00", "2026-03-02 00:00:00"],
            )
        ],
        "resource": resource("target", "target = ?", ["topic:app.04242"]),
        "resource bare": resource("name", "name = ?", ["app.04242"]),
        "resource prefix": resource(
            "target", "target >= ? AND target < ?", ["topic:app.0424", "topic:app.0424" + TOP]
        ),
        "wide prefix": resource("target", "target >= ? AND target < ?", ["topic:app.", "topic:app." + TOP]),
        "none": [(f"SELECT {COLUMNS} FROM {EVENTS_T} {tail}", [])],
        # Filters that match nothing: the page never fills, so a plan that walks events newest
        # first reads the whole trail (an actor with no events took 182 ms before the actor
        # filter was split into its three indexed conditions).
        "actor, no events": actor_floors("nobody", tail),
        "actor+cluster, none": actor_floors("user123", tail, ("cluster_name = ?", "cluster-none")),
        "cluster+action, none": [
            (
                f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE cluster_name = ? AND action = ? {tail}",
                ["cluster-07", "acl.nothing"],
            )
        ],
        "outcome, none": [(f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE outcome = ? {tail}", ["cancelled"])],
        "resource, none": resource("target", "target = ?", ["topic:nothing"]),
        "prefix, none": resource("target", "target >= ? AND target < ?", ["topic:zz", "topic:zz" + TOP]),
    }


def actor_floors(actor: str, tail: str, extra: tuple[str, str] | None = None) -> list[tuple[str, list]]:
    """An actor's page written by hand: one OR, the union of the three conditions' ids, or the union
    of each condition's own newest page (the token range sorted by id, not walked by it)."""
    cond, more = (f" AND {extra[0]}", [extra[1]]) if extra else ("", [])
    token = [actor + " [token ", actor + " [token " + TOP]
    limit = tail.rsplit(" ", 1)[1]
    pages = " UNION ".join(
        f"SELECT id FROM (SELECT id FROM {EVENTS_T} WHERE {where}{cond} ORDER BY {order} DESC LIMIT {limit})"
        for where, order in (
            ("actor_name = ?", "id"),
            ("actor_name >= ? AND actor_name < ?", "id + 0"),
            ("on_behalf_of = ? AND on_behalf_of > ''", "id"),
        )
    )
    return [
        (
            f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE id IN ({pages}) {tail}",
            [actor, *more, *token, *more, actor, *more],
        ),
        (
            f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE (actor_name = ? OR (actor_name >= ? AND actor_name < ?) "
            f"OR on_behalf_of = ?){cond} {tail}",
            [actor, *token, actor, *more],
        ),
        (
            f"SELECT {COLUMNS} FROM {EVENTS_T} WHERE id IN (SELECT id FROM {EVENTS_T} WHERE actor_name = ?{cond} "
            f"UNION SELECT id FROM {EVENTS_T} WHERE actor_name >= ? AND actor_name < ?{cond} "
            f"UNION SELECT id FROM {EVENTS_T} WHERE on_behalf_of = ? AND on_behalf_of > ''{cond}) {tail}",
            [actor, *more, *token, *more, actor, *more],
        ),
    ]


def main() -> None:
    import sqlite3

    from bench.harness import Runs, alternate, freeze, gate

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
        "actor, no events": AuditFilter(actor="nobody"),
        "actor+cluster, none": AuditFilter(actor="user123", cluster="cluster-none"),
        "cluster+action, none": AuditFilter(cluster="cluster-07", action="acl.nothing"),
        "outcome, none": AuditFilter(outcome="cancelled"),
        "resource, none": AuditFilter(resource="topic:nothing"),
        "prefix, none": AuditFilter(resource="topic:zz*"),
    }
    raw_conn = sqlite3.connect(connection.settings_dict["NAME"])  # its own connection, no Django
    queries = floor_queries(audit_review.PAGE_SIZE)
    total_ours = total_raw = 0.0
    slow = []
    freeze()
    for label, f in filters.items():

        def ours(f=f):
            return audit_review.search_events(actor=user, audit_filter=f)

        page = ours()
        want = [e.id for e in page.events]
        sides = {"console": ours}
        for i, (sql, params) in enumerate(queries[label]):
            got = [row[0] for row in raw_conn.execute(sql, params).fetchall()][: audit_review.PAGE_SIZE]
            assert got == want, (label, i, got[:5], want[:5])
            sides[f"raw{i}"] = lambda sql=sql, params=params: raw_conn.execute(sql, params).fetchall()
        m: Runs = alternate(sides, runs=RUNS)
        floor = m.fastest([k for k in sides if k != "console"])
        ours_s, raw_s = m.median("console"), m.median(floor)
        total_ours += ours_s
        total_raw += raw_s
        lo, hi = min(m.times["console"]), max(m.times["console"])
        print(
            f"{label:20s} rows={len(want):3d} console_ms min/median/max={lo * 1000:.2f}/{ours_s * 1000:.2f}/{hi * 1000:.2f} "
            f"raw_sql_ms median={raw_s * 1000:7.2f} ({floor} of {len(sides) - 1}) ratio={ours_s / raw_s:.2f}"
        )
        slow.append((f"{label} console median seconds (< 100 ms)", ours_s, 0.1))
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
        f"export jsonl (not gated): {size / 1e6:.0f} MB in {time.perf_counter() - t:.1f}s; peak RSS {rss_before:.0f} MB before, "
        f"{rss_early:.0f} MB after 1,000 rows, {rss_after:.0f} MB after all {EVENTS} rows"
    )
    print(f"filter set: console_ms={total_ours * 1000:.1f} raw_sql_ms={total_raw * 1000:.1f}")
    gate("audit_search", total_ours / total_raw, 2, slow)


if __name__ == "__main__":
    try:
        main()
    finally:  # the throwaway database is ~700 MB
        if os.environ.get("CONSOLE_VAR_DIR", "").startswith(tempfile.gettempdir()):
            shutil.rmtree(os.environ["CONSOLE_VAR_DIR"], ignore_errors=True)
