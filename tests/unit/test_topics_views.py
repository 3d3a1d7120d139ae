"""Topic pages through the Django client: rendering, htmx fragments, errors as pages (never a 500)."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.models import AuditEvent
from console.topics import actions as topics
from console.topics.batch import TopicSpec

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def uniq(prefix: str = "v") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def url(view: str, cluster, **kwargs) -> str:
    return reverse(view, kwargs={"name": cluster.name, **kwargs})


def make(personas, cluster, *specs):
    result = topics.create_topics(actor=personas["operator"], cluster=cluster, specs=list(specs))
    assert result.all_ok, result


def test_it_lists_topics_with_search_and_a_refresh_link(client, personas, kafka_cluster):
    name = uniq("page")
    make(personas, kafka_cluster, TopicSpec(name, 2, 1))
    client.force_login(personas["viewer"])
    response = client.get(url("topic_list", kafka_cluster), {"q": name})
    assert response.status_code == 200
    body = response.content.decode()
    assert f'data-topic="{name}"' in body
    assert "refresh=1" in body
    assert "Create topic" not in body  # viewers see no mutation buttons
    assert response["Vary"].count("HX-Request") == 1


def test_htmx_gets_only_the_table_fragment(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    response = client.get(url("topic_list", kafka_cluster), {"q": "x"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="topic-table">')
    assert "<html" not in body


def test_an_unreachable_cluster_shows_the_error_on_the_page(client, personas, offline_cluster):
    client.force_login(personas["admin"])
    response = client.get(url("topic_list", offline_cluster))
    assert response.status_code == 200
    assert b"NETWORK_EXCEPTION" in response.content


def test_the_detail_page_shows_partitions_and_a_missing_topic_is_a_404_with_the_reason(
    client, personas, kafka_cluster
):
    name = uniq("det")
    make(personas, kafka_cluster, TopicSpec(name, 2, 2))
    client.force_login(personas["viewer"])
    response = client.get(url("topic_detail", kafka_cluster, topic=name))
    assert response.status_code == 200
    assert response.content.decode().count("<tr>") >= 3
    missing = client.get(url("topic_detail", kafka_cluster, topic=uniq("nope")))
    assert missing.status_code == 404
    assert b"This topic does not exist" in missing.content


def test_a_cluster_page_reads_the_cluster_row_once_and_the_navigation_still_names_it(
    client, personas, kafka_cluster
):
    """The navigation uses the cluster row its view read (it used to read the same row again)."""
    name = uniq("nav")
    make(personas, kafka_cluster, TopicSpec(name, 1, 1))
    client.force_login(personas["viewer"])
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url("topic_detail", kafka_cluster, topic=name))
    assert response.status_code == 200
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "console_cluster"' in q["sql"]]
    assert len(reads) == 1, reads
    overview = reverse("cluster_overview", kwargs={"name": kafka_cluster.name})
    assert (
        f'<a href="{overview}" class="current-cluster">{kafka_cluster.name}</a>' in response.content.decode()
    )


def test_create_with_validate_only_then_create(client, personas, kafka_cluster):
    name = uniq("form")
    client.force_login(personas["operator"])
    data = {"name": name, "partitions": "3", "replication_factor": "1", "cfg__retention.ms": "60000"}
    dry = client.post(url("topic_create", kafka_cluster), {**data, "action": "validate"})
    assert dry.status_code == 200 and b"Dry run" in dry.content
    gw = gateway_for(kafka_cluster)
    assert isinstance(gw.describe_topics([name])[name], KafkaOperationError)
    done = client.post(url("topic_create", kafka_cluster), {**data, "action": "create"})
    assert done.status_code == 302 and done["Location"] == url("topic_detail", kafka_cluster, topic=name)
    entries = gw.describe_configs(
        [__import__("console.kafka", fromlist=["ConfigResource"]).ConfigResource("TOPIC", name)]
    )
    assert next(iter(entries.values()))["retention.ms"].value == "60000"


def test_create_form_errors_render_with_200(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    response = client.post(
        url("topic_create", kafka_cluster), {"name": "..", "partitions": "-3", "action": "create"}
    )
    assert response.status_code == 200
    assert b"&#x27;.&#x27; or &#x27;..&#x27;" in response.content or b"'.' or '..'" in response.content
    taken = uniq("taken")
    make(personas, kafka_cluster, TopicSpec(taken, 1, 1))
    again = client.post(url("topic_create", kafka_cluster), {"name": taken, "action": "create"})
    assert again.status_code == 200 and b"already exists" in again.content


def test_batch_create_from_yaml_shows_a_result_per_topic(client, personas, kafka_cluster):
    a, b = uniq("ba"), uniq("bb")
    client.force_login(personas["operator"])
    text = (
        f"topics:\n  - name: {a}\n    partitions: 2\n    replication_factor: 1\n  - name: {b}\n    rf: 77\n"
    )
    response = client.post(url("topic_batch_create", kafka_cluster), {"text": text, "action": "create"})
    body = response.content.decode()
    assert response.status_code == 200
    assert f'data-topic="{a}"' in body and f'data-topic="{b}"' in body
    assert "refused by policy" in body and "applied in part" in body


def test_batch_parse_errors_name_line_and_column(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    response = client.post(
        url("topic_batch_create", kafka_cluster),
        {"text": "name,partitions\nok,1\nbad,many\n", "format": "csv", "action": "create"},
    )
    assert response.status_code == 200
    assert b"line 3, column 2" in response.content


def test_delete_asks_for_the_typed_name_then_deletes(client, personas, kafka_cluster):
    name = uniq("gone")
    make(personas, kafka_cluster, TopicSpec(name, 1, 1))
    client.force_login(personas["operator"])
    preview = client.post(url("topic_delete", kafka_cluster), {"names": [name]})
    assert preview.status_code == 200 and b"Type <code>" in preview.content
    wrong = client.post(url("topic_delete", kafka_cluster), {"names": [name], "confirmation": "nope"})
    assert wrong.status_code == 200 and b"to confirm the deletion" in wrong.content
    done = client.post(url("topic_delete", kafka_cluster), {"names": [name], "confirmation": name})
    assert done.status_code == 200 and b"deleted" in done.content
    ended = AuditEvent.objects.filter(action="topic.delete").exclude(outcome__in=("requested", "refused"))
    assert ended.count() == 1
    assert AuditEvent.objects.filter(action="topic.delete", outcome="refused").count() == 1  # the wrong name


def test_add_partitions_page_warns_about_keyed_data(client, personas, kafka_cluster):
    name = uniq("more")
    make(personas, kafka_cluster, TopicSpec(name, 1, 1))
    client.force_login(personas["operator"])
    page = client.get(url("topic_add_partitions", kafka_cluster, topic=name))
    assert b"Keyed data will move" in page.content
    assert b"has <strong>1</strong> partition now" in page.content
    done = client.post(
        url("topic_add_partitions", kafka_cluster, topic=name), {"total_count": "3", "action": "apply"}
    )
    assert done.status_code == 302
    shrink = client.post(
        url("topic_add_partitions", kafka_cluster, topic=name), {"total_count": "2", "action": "apply"}
    )
    assert shrink.status_code == 200 and b"more than the current 3" in shrink.content


def test_a_page_view_costs_at_most_one_metadata_fetch_and_one_configs_batch(
    client, personas, kafka_cluster, monkeypatch
):
    from console.kafka import KafkaGateway

    prefix = uniq("count")
    make(personas, kafka_cluster, *[TopicSpec(f"{prefix}.{i:02d}", 1, 1) for i in range(30)])
    calls = []
    for method in ("list_topics_metadata", "describe_configs", "describe_topics", "list_offsets"):
        real = getattr(KafkaGateway, method)

        def spy(self, *args, _real=real, _name=method, **kwargs):
            calls.append(_name)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(KafkaGateway, method, spy)
    client.force_login(personas["viewer"])
    client.get(url("topic_list", kafka_cluster), {"q": prefix})
    assert calls == ["list_topics_metadata", "describe_configs"]
    calls.clear()
    client.get(url("topic_list", kafka_cluster), {"q": prefix, "sort": "partitions", "desc": "1"})
    assert calls == []  # metadata and the page's configs come from the cache
    client.get(url("topic_list", kafka_cluster), {"q": prefix, "refresh": "1"})
    assert calls == ["list_topics_metadata", "describe_configs"]


@pytest.mark.parametrize(
    ("method", "view", "kwargs", "data"),
    [
        ("get", "topic_list", {}, {"q": "x", "page": "abc", "per_page": "999999"}),
        ("get", "topic_detail", {"topic": "orders"}, {}),
        ("get", "topic_configs", {"topic": "orders"}, {}),
        (
            "post",
            "topic_configs",
            {"topic": "orders"},
            {"key_0": "retention.ms", "value_0": "1", "action": "apply"},
        ),
        ("get", "broker_configs", {"broker": "1"}, {}),
        ("get", "broker_configs_default", {}, {}),
        ("post", "topic_create", {}, {"name": "orders", "partitions": "1", "action": "create"}),
        ("post", "topic_batch_create", {}, {"text": "- name: a\n", "action": "create"}),
        ("post", "topic_delete", {}, {"names": ["orders"]}),
        ("post", "topic_delete", {}, {"names": ["orders"], "confirmation": "orders"}),
        ("post", "topic_add_partitions", {"topic": "orders"}, {"total_count": "3", "action": "apply"}),
    ],
)
def test_an_unreachable_cluster_never_gives_a_500(
    client, personas, offline_cluster, method, view, kwargs, data
):
    client.force_login(personas["admin"])
    response = getattr(client, method)(url(view, offline_cluster, **kwargs), data)
    assert response.status_code in (200, 404), response.content[:300]
    assert b"NETWORK_EXCEPTION" in response.content or b"could not be reached" in response.content


def test_odd_names_and_broker_ids_are_errors_on_the_page(client, personas, kafka_cluster):
    client.force_login(personas["admin"])
    assert client.get(url("topic_detail", kafka_cluster, topic="bad name!")).status_code in (200, 404)
    response = client.get(url("broker_configs", kafka_cluster, broker="abc"))
    assert response.status_code == 200 and b"INVALID_REQUEST" in response.content


def test_the_size_column_comes_from_the_latest_snapshot_not_the_hourly_pipeline(
    client, personas, kafka_cluster, sandbox, tmp_path, monkeypatch
):
    from console.formatting import human_bytes
    from console.telemetry import sizes
    from console.telemetry import snapshots as telemetry
    from pipeline import reports

    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path))
    sizes.clear_cache()
    name = uniq("sized")
    make(personas, kafka_cluster, TopicSpec(name, 1, 1))
    # An old pipeline run knows another size: the page must not show it.
    monkeypatch.setattr(
        reports, "read_report", lambda root, cluster, report: [{"topic": name, "size_bytes": 3 * 1024 * 1024}]
    )
    client.force_login(personas["viewer"])
    body = client.get(url("topic_list", kafka_cluster), {"q": name}).content.decode()
    assert "3.0 MiB" not in body and "no snapshot yet" in body
    sandbox.produce_synthetic(name, 200_000)
    sandbox.advance(3)
    sandbox.produce_synthetic(name, 0)
    snap = telemetry.collect_snapshot(cluster=kafka_cluster)
    size = sizes.latest_sizes("sandbox").topic(name).bytes
    body = client.get(url("topic_list", kafka_cluster), {"q": name}).content.decode()
    assert size > 0 and human_bytes(size) in body and "3.0 MiB" not in body
    assert f"sizes as of {snap.ts:%Y-%m-%d %H:%M} UTC" in body
    detail = client.get(url("topic_detail", kafka_cluster, topic=name)).content.decode()
    assert human_bytes(size) in detail and f"as of {snap.ts:%Y-%m-%d %H:%M} UTC" in detail
    sizes.clear_cache()
