"""The cluster overview: brokers, controller and partition health, or Kafka's error as text."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from console.clusters.actions import gateway_for
from console.models import RoleBinding

pytestmark = pytest.mark.django_db


def test_it_shows_brokers_counts_and_the_controller(client, personas, kafka_cluster, sandbox):
    client.force_login(personas["viewer"])
    response = client.get(reverse("cluster_overview", kwargs={"name": kafka_cluster.name}))
    assert response.status_code == 200
    overview = response.context["overview"]
    assert overview.error is None
    assert overview.info.cluster_id == sandbox.cluster_id
    assert [b.id for b in response.context["brokers"]] == [1, 2, 3]
    assert overview.summary.partition_count >= overview.summary.topic_count
    body = response.content.decode()
    for b in (1, 2, 3):  # each broker links to its page (the table builds the links from the list's URL)
        assert (
            f'<a href="{reverse("broker_detail", kwargs={"name": kafka_cluster.name, "broker": b})}">{b}</a>'
            in body
        )


def test_the_active_controller_is_the_quorum_leader_on_every_reload(client, personas, kafka_cluster, sandbox):
    """Metadata names a random live broker as "controller" under KRaft (the sandbox does too);
    the page must show the quorum's leader, the same one on every reload, and no broker badge."""
    client.force_login(personas["viewer"])
    url = reverse("cluster_overview", kwargs={"name": kafka_cluster.name})
    shown = set()
    for _ in range(10):
        response = client.get(url)
        shown.add(response.context["controller_id"])
        assert b'<span class="badge">active controller</span>' not in response.content  # brokers 1-3
    assert shown == {sandbox.state.active_controller} and sandbox.state.active_controller >= 100
    metadata_ids = {gateway_for(kafka_cluster).describe_cluster().controller_id for _ in range(30)}
    assert metadata_ids <= {1, 2, 3} and len(metadata_ids) > 1  # what the page must not use


def test_test_connection_names_the_quorum_leader(client, personas, kafka_cluster, sandbox):
    client.force_login(personas["viewer"])
    url = reverse("cluster_test", kwargs={"name": kafka_cluster.name})
    for _ in range(5):
        body = client.post(url, headers={"HX-Request": "true"}).content.decode()
        assert f"active controller {sandbox.state.active_controller}," in body


def test_an_unreachable_cluster_renders_the_error_not_a_500(client, personas, offline_cluster):
    RoleBinding.objects.create(cluster=offline_cluster, user=personas["viewer"], role="viewer")
    client.force_login(personas["viewer"])
    started = time.monotonic()
    response = client.get(reverse("cluster_overview", kwargs={"name": offline_cluster.name}))
    assert time.monotonic() - started < 8
    assert response.status_code == 200
    assert b"Kafka could not be reached" in response.content
    assert b"127.0.0.1:1" in response.content


def test_test_connection_answers_an_htmx_fragment(client, personas, kafka_cluster, sandbox):
    client.force_login(personas["viewer"])
    response = client.post(
        reverse("cluster_test", kwargs={"name": kafka_cluster.name}), headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<div class="report ok"')
    assert sandbox.cluster_id in body and "3 brokers" in body


def test_registering_through_the_form_audits_it(client, personas, sandbox):
    from console.models import AuditEvent, Cluster

    client.force_login(personas["admin"])
    data = {
        "name": "second",
        "bootstrap_servers": sandbox.bootstrap_servers,
        "security_protocol": "PLAINTEXT",
        "request_timeout_s": "5",
        "action": "save",
    }
    tested = client.post(reverse("cluster_new"), {**data, "action": "test"})
    assert tested.status_code == 200 and b"Connected" in tested.content
    assert not Cluster.objects.filter(name="second").exists()
    saved = client.post(reverse("cluster_new"), data)
    assert saved.status_code == 302
    event = AuditEvent.objects.get(action="cluster.register", cluster_name="second")
    assert event.actor_name == "admin" and event.after["bootstrap_servers"] == sandbox.bootstrap_servers
    again = client.post(reverse("cluster_new"), data)
    assert again.status_code == 200 and b"already exists" in again.content


def test_in_controller_mode_it_lists_the_controllers_and_says_what_needs_brokers(client, personas, sandbox):
    from console.models import Cluster

    cluster = Cluster.objects.create(
        name="quorum", bootstrap_controllers=sandbox.bootstrap_controllers, request_timeout_s=5
    )
    client.force_login(personas["admin"])
    response = client.get(reverse("cluster_overview", kwargs={"name": cluster.name}))
    assert response.status_code == 200
    assert [b.id for b in response.context["brokers"]] == [101, 102, 103]
    assert response.context["controller_id"] == sandbox.state.active_controller
    body = response.content.decode()
    assert "Topic and partition counts: unavailable in controller mode" in body
    for node in (101, 102, 103):
        assert (
            f'<a href="{reverse("controller_detail", kwargs={"name": "quorum", "node_id": node})}">{node}</a>'
            in body
        )
