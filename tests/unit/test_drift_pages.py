"""Where changes made outside the console are shown: the cluster overview's and the topic page's box
(for readers of the cluster's audit), and the audit page, its API and CLI filtered to them."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from console.audit import store as audit
from console.clusters.actions import gateway_for
from console.drift import audit_names
from console.identity import tokens
from console.kafka import ConfigChange, ConfigResource, NewTopic
from console.models import AuditEvent
from console.telemetry import snapshots
from console.topics.audit_names import TOPIC_CREATE
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 5, 4, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def drifted(kafka_cluster, personas, telemetry_lake):
    """Two topics made outside the console between two snapshots, one then given an override; and one
    event of the console's own on the trail. Returns the topics' names."""
    gw = gateway_for(kafka_cluster)
    snapshots.collect_for(kafka_cluster, now=NOW)
    names = [f"drift-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    gw.create_topics([NewTopic(n, 1, 1) for n in names])
    snapshots.collect_for(kafka_cluster, now=NOW + timedelta(minutes=5))
    res = ConfigResource("TOPIC", names[0])
    gw.incremental_alter_configs({res: [ConfigChange("retention.ms", "SET", "60000")]})
    snapshots.collect_for(kafka_cluster, now=NOW + timedelta(minutes=10))
    assert AuditEvent.objects.filter(action=audit_names.EXTERNAL_CHANGE).count() == 3
    return names


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _ids(html: str) -> list[int]:
    return [int(part.split('"', 1)[0]) for part in html.split('data-event="')[1:]]


def test_the_overview_and_topic_page_load_the_box(personas, kafka_cluster, drifted):
    client = _client(personas["auditor"])
    overview = client.get(reverse("cluster_overview", kwargs={"name": "sandbox"})).content.decode()
    assert f'hx-get="{reverse("drift_recent", kwargs={"name": "sandbox"})}"' in overview
    page = client.get(
        reverse("topic_detail", kwargs={"name": "sandbox", "topic": drifted[0]})
    ).content.decode()
    assert f'hx-get="{reverse("drift_recent", kwargs={"name": "sandbox"})}?topic={drifted[0]}"' in page


def test_the_box_lists_the_clusters_external_changes_newest_first(personas, kafka_cluster, drifted):
    events = list(AuditEvent.objects.filter(action=audit_names.EXTERNAL_CHANGE).order_by("-id"))
    body = _client(personas["auditor"]).get(reverse("drift_recent", kwargs={"name": "sandbox"}))
    html = body.content.decode()
    assert body.status_code == 200 and _ids(html) == [e.pk for e in events]
    assert f"topic_config {drifted[0]}" in html and "retention.ms: (default) → 60000" in html
    assert f"topic {drifted[1]}" in html and "created (1 partitions, RF 1)" in html
    assert 'href="/audit/?cluster=sandbox&amp;external=on"' in html


def test_the_topic_box_lists_only_that_topics_changes(personas, kafka_cluster, drifted):
    url = reverse("drift_recent", kwargs={"name": "sandbox"}) + f"?topic={drifted[0]}"
    html = _client(personas["admin"]).get(url).content.decode()
    mine = AuditEvent.objects.filter(action=audit_names.EXTERNAL_CHANGE, targets=[f"topic:{drifted[0]}"])
    assert _ids(html) == sorted((e.pk for e in mine), reverse=True) and len(_ids(html)) == 2
    assert f"resource=topic%3A{drifted[0]}" in html


def test_readers_without_the_audit_get_nothing(personas, kafka_cluster, drifted):
    answer = _client(personas["viewer"]).get(reverse("drift_recent", kwargs={"name": "sandbox"}))
    assert (answer.status_code, answer.content) == (200, b"")
    assert (
        _client(personas["outsider"]).get(reverse("drift_recent", kwargs={"name": "sandbox"})).status_code
        == 404
    )


def test_the_audit_page_api_and_cli_filter_external_changes(personas, kafka_cluster, drifted):
    want = list(AuditEvent.objects.filter(action=audit_names.EXTERNAL_CHANGE).values_list("pk", flat=True))
    with transaction.atomic():
        audit.record(
            actor=personas["operator"], action=TOPIC_CREATE, cluster=kafka_cluster, targets=["topic:x"]
        )
    html = _client(personas["auditor"]).get(reverse("audit_list"), {"external": "on"}).content.decode()
    listed = [pk for pk in AuditEvent.objects.values_list("pk", flat=True) if f"/audit/events/{pk}/" in html]
    assert sorted(listed) == sorted(want)

    secret = tokens.create_token(actor=personas["auditor"], name="t", scope="read", days=1).secret
    found = Client().get(
        reverse("api:audit-events"), {"external": "true"}, HTTP_AUTHORIZATION=f"Bearer {secret}"
    )
    assert sorted(e["id"] for e in found.json()["results"]) == sorted(want)
    refused = Client().get(
        reverse("api:audit-events"),
        {"external": "true", "action": "topic.create"},
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert refused.status_code == 400 and "leave the action empty" in refused.content.decode()

    code, out = kafka("audit", "search", "--external", "--output", "json", "--as", "auditor")
    assert code == 0 and sorted(r["id"] for r in json.loads(out)["items"]) == sorted(want)
    assert {r["action"] for r in json.loads(out)["items"]} == {audit_names.EXTERNAL_CHANGE}
