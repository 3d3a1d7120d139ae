"""Topic sizes on the topic list and the topic page come from the latest telemetry snapshot, "as of" its time.

No Spark run is needed: the collector's newest partitions file is read with pyarrow (only the
columns shown) and kept until a newer file replaces it.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.template.defaultfilters import date as date_filter
from django.urls import reverse
from django.utils import timezone

from console.formatting import human_bytes
from console.telemetry import sizes
from console.telemetry import snapshots as telemetry
from console.templatetags.console_format import size
from console.topics import cache as metadata_cache
from console.topics import reads as topic_reads
from pipeline import generate, lake, reports

pytestmark = pytest.mark.django_db


def _topic(sandbox, partitions=3, rate=300_000):
    name = f"sized-{uuid.uuid4().hex[:8]}"
    sandbox.create_topic(name, partitions=partitions, replication_factor=2)
    sandbox.produce_synthetic(name, rate)
    sandbox.advance(5)
    sandbox.produce_synthetic(name, 0)
    return name


def _row(html: str, topic: str) -> str:
    start = html.index(f'data-topic="{topic}"')
    return html[start : html.index("</tr>", start)]


def _snapshot_rows(result, topic: str) -> list[dict]:
    rows = pq.read_table(result.paths["partitions"]).to_pylist()
    return sorted((r for r in rows if r["topic"] == topic), key=lambda r: r["partition"])


def _as_of(ts: datetime) -> str:
    return date_filter(timezone.localtime(ts), "Y-m-d H:i T")


def test_before_any_snapshot_the_pages_say_so(client, personas, kafka_cluster, sandbox, telemetry_lake):
    name = _topic(sandbox, partitions=1)
    client.force_login(personas["viewer"])
    html = client.get(reverse("topic_list", kwargs={"name": "sandbox"}), {"q": name}).content.decode()
    cell = _row(html, name).rsplit("<td", 1)[1]
    assert "no snapshot yet" in cell and "—" not in cell
    assert "sizes: no snapshot yet" in html
    page = client.get(reverse("topic_detail", kwargs={"name": "sandbox", "topic": name})).content.decode()
    card = page[page.index('id="topic-size"') :]
    assert "no snapshot yet" in card[: card.index("</section>")]
    partitions = page[page.index('id="partitions"') :]
    assert "<td>no snapshot yet</td>" in partitions[: partitions.index("</table>")]


def test_sizes_and_as_of_come_from_the_latest_snapshot_before_any_pipeline_run(
    client, personas, kafka_cluster, sandbox, telemetry_lake
):
    name = _topic(sandbox)
    first = telemetry.collect_snapshot(cluster=kafka_cluster)
    rows = _snapshot_rows(first, name)
    total = sum(r["size_bytes"] for r in rows)
    assert total > 0 and reports.current_run(telemetry_lake, "sandbox") is None  # no pipeline run at all
    client.force_login(personas["viewer"])

    html = client.get(reverse("topic_list", kwargs={"name": "sandbox"}), {"q": name}).content.decode()
    assert f'<td class="size">{size(total)}</td>' in _row(html, name)
    assert f"sizes as of {_as_of(first.ts)}" in html
    assert f"as of {date_filter(timezone.localtime(first.ts), 'H:i')}</span></th>" in html

    page = client.get(reverse("topic_detail", kwargs={"name": "sandbox", "topic": name})).content.decode()
    card = page[page.index('id="topic-size"') : page.index("</section>")]
    disk = sum(sum(r["replica_sizes"]) for r in rows)
    assert human_bytes(total) in card and f"as of {_as_of(first.ts)}" in card
    assert f"{size(disk)} on disk, all replicas" in card
    table = page[page.index('id="partitions"') : page.index("</table>", page.index('id="partitions"'))]
    for r in rows:  # every partition's leader replica size, in its row
        row = table[table.index(f"<tr><td>{r['partition']}</td>") :]
        assert f"<td>{size(r['size_bytes'])}</td>" in row[: row.index("</tr>")]

    # A newer snapshot replaces the cached one; a topic created since is "not in snapshot".
    sandbox.produce_synthetic(name, 600_000)
    sandbox.advance(5)
    sandbox.produce_synthetic(name, 0)
    later = telemetry.collect_snapshot(cluster=kafka_cluster, now=first.ts + timedelta(minutes=6))
    newer = sum(r["size_bytes"] for r in _snapshot_rows(later, name))
    newcomer = _topic(sandbox, partitions=1, rate=0)
    metadata_cache.clear()
    html = client.get(reverse("topic_list", kwargs={"name": "sandbox"}), {"q": "sized-"}).content.decode()
    assert newer > total and human_bytes(newer) in _row(html, name)
    assert f"sizes as of {_as_of(later.ts)}" in html
    assert "not in snapshot" in _row(html, newcomer)


def test_the_list_keeps_the_snapshot_until_a_newer_file_and_reads_only_its_columns(
    telemetry_lake, monkeypatch
):
    """100,000 partitions: one read of four columns per snapshot file, then dictionary lookups."""
    ts = datetime(2026, 5, 4, 12, 5, tzinfo=UTC)
    n_topics, per_topic = 20_000, 5
    n = n_topics * per_topic
    topics = [f"team-{t % 50}.events-{t:05d}" for t in range(n_topics) for _ in range(per_topic)]
    cols = {
        "schema_version": pa.array([lake.SCHEMA_VERSION] * n, pa.int16()),
        "ts": pa.array([ts] * n, pa.timestamp("ms", tz="UTC")),
        "topic": topics,
        "partition": [p for _ in range(n_topics) for p in range(per_topic)],
        "leader": [1] * n,
        "replicas": [[1, 2, 3]] * n,
        "isr": [[1, 2, 3]] * n,
        "replica_sizes": [[1000, 1000, 1000]] * n,
        "log_start_offset": [0] * n,
        "log_end_offset": [10] * n,
        "size_bytes": [1000] * n,
        "retention_ms": [None] * n,
        "retention_bytes": [None] * n,
    }
    table = pa.table(cols).cast(lake.PARTITIONS)
    lake.write_snapshot(telemetry_lake, "big", ts, {"partitions": table}, 300)
    reads = []
    real = pq.read_table

    def counting(path, *args, **kwargs):
        reads.append(kwargs.get("columns"))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(sizes.pq, "read_table", counting)
    started = time.perf_counter()
    got = sizes.latest_sizes("big")
    cold = time.perf_counter() - started
    assert got.topic("team-7.events-00007") == sizes.TopicSize(5000, 5, 0) and len(got.topics) == n_topics
    assert cold < 5.0, cold  # ~0.1 s on the development VM
    started = time.perf_counter()
    for _ in range(20):
        assert sizes.latest_sizes("big") is got
    assert (time.perf_counter() - started) / 20 < 0.05
    assert reads == [sizes.COLUMNS] and "log_end_offset" not in sizes.COLUMNS
    later = ts + timedelta(minutes=5)
    newer = table.slice(0, 10).set_column(1, "ts", pa.array([later] * 10, lake.PARTITIONS.field("ts").type))
    lake.write_snapshot(telemetry_lake, "big", later, {"partitions": newer}, 300)
    assert sizes.latest_sizes("big").ts == later and len(reads) == 2


def test_the_newest_snapshot_of_a_file_wins_and_unknown_sizes_are_not_zero(telemetry_lake):
    start = datetime(2026, 4, 1, tzinfo=UTC)
    shape = generate.Shape(topics=3, partitions=2, snapshots=5, interval_s=3600)
    generate.write_lake(telemetry_lake, "gen", shape, start, per_file=5)  # five snapshots in one file
    last_ts, last = list(generate.snapshots(shape, start))[-1]
    got = sizes.latest_sizes("gen")
    assert got.ts == last_ts
    want = {}
    for r in last["partitions"].to_pylist():
        want[r["topic"]] = want.get(r["topic"], 0) + r["size_bytes"]
    assert {t: s.bytes for t, s in got.topics.items()} == want

    ts = start + timedelta(days=1)
    rows = last["partitions"].to_pylist()
    rows[0]["size_bytes"], rows[1]["size_bytes"] = -1, -1  # topic-000: no size for either partition
    rows[2]["size_bytes"] = -1  # topic-001: one of two
    for r in rows:
        r["ts"] = ts
    lake.write_snapshot(
        telemetry_lake, "gen", ts, {"partitions": pa.Table.from_pylist(rows, lake.PARTITIONS)}, 3600
    )
    got = sizes.latest_sizes("gen")
    assert got.topic("topic-000") == sizes.TopicSize(0, 2, 2) and not got.topic("topic-000").known
    one = got.topic("topic-001")
    assert (one.bytes, one.unknown, one.complete) == (rows[3]["size_bytes"], 1, False)
    assert got.partitions("topic-001")[0].bytes is None and got.partitions("topic-001")[1].bytes > 0
    assert got.partitions("nope") == {}


def test_an_unreadable_snapshot_is_said_on_the_page_not_a_500(
    client, personas, kafka_cluster, sandbox, telemetry_lake
):
    name = _topic(sandbox, partitions=1)
    broken = (
        lake.partition_dir(telemetry_lake, "partitions", "sandbox", datetime.now(UTC).date())
        / "snap-1.parquet"
    )
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"PAR1 not really")
    client.force_login(personas["viewer"])
    response = client.get(reverse("topic_list", kwargs={"name": "sandbox"}), {"q": name})
    assert response.status_code == 200
    assert "could not be read" in response.content.decode()
    assert "snapshot unreadable" in _row(response.content.decode(), name)
    page = client.get(reverse("topic_detail", kwargs={"name": "sandbox", "topic": name}))
    assert page.status_code == 200 and b"could not be read" in page.content


def test_list_items_carry_the_size_for_other_callers(personas, kafka_cluster, sandbox, telemetry_lake):
    name = _topic(sandbox, partitions=2)
    telemetry.collect_snapshot(cluster=kafka_cluster)
    page = topic_reads.list_topics(actor=personas["viewer"], cluster=kafka_cluster, query=name)
    [item] = page.items
    assert page.sizes.has_snapshot and item.size.partitions == 2 and item.size_bytes == item.size.bytes > 0
