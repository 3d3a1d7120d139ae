"""KIP-919 from the registry form to Test connection: either/or, and the wrong endpoint type named."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.clusters import actions as clusters
from console.forms.clusters import ClusterForm
from console.models import Cluster

pytestmark = pytest.mark.django_db

BASE = {"name": "ctl", "security_protocol": "PLAINTEXT", "request_timeout_s": "5"}


def _post(client, personas, **fields):
    client.force_login(personas["admin"])
    return client.post(reverse("cluster_new"), {**BASE, **fields, "action": "test"})


def test_it_refuses_both_in_the_form():
    form = ClusterForm(data={**BASE, "bootstrap_servers": "b:9092", "bootstrap_controllers": "c:9093"})
    assert not form.is_valid() and "not both" in " ".join(form.non_field_errors())


def test_it_refuses_neither_in_the_form():
    form = ClusterForm(data=BASE)
    assert not form.is_valid() and "bootstrap controllers" in " ".join(form.non_field_errors())


@pytest.mark.parametrize(
    ("field", "given", "hint"),
    [
        pytest.param(
            "bootstrap_controllers",
            "bootstrap_servers",
            "register them as bootstrap servers",
            id="brokers-as-controllers",
        ),
        pytest.param(
            "bootstrap_servers", "bootstrap_controllers", "bootstrap controllers", id="controllers-as-brokers"
        ),
    ],
)
def test_test_connection_says_which_addresses_were_given_in_the_wrong_field(
    client, sandbox, personas, field, given, hint
):
    response = _post(client, personas, **{field: getattr(sandbox, given)})
    assert response.status_code == 200
    body = response.content.decode()
    assert "Connection failed" in body and "MISMATCHED_ENDPOINT_TYPE" in body
    assert hint in body
    assert not Cluster.objects.filter(name="ctl").exists()


def test_test_connection_reaches_the_controllers(client, sandbox, personas):
    response = _post(client, personas, bootstrap_controllers=sandbox.bootstrap_controllers)
    body = response.content.decode()
    assert "Connected" in body and "(controllers)" in body
    assert f"active controller {sandbox.state.active_controller}" in body
    assert "3 controllers" in body


def test_the_service_names_the_mismatch_precisely(sandbox):
    report = clusters.test_connection(
        clusters.connection_for(
            Cluster(name="x", bootstrap_controllers=sandbox.bootstrap_servers, request_timeout_s=5)
        )
    )
    assert not report.ok and report.mode == "controllers" and report.error_name == "MISMATCHED_ENDPOINT_TYPE"


def test_a_controller_mode_cluster_opens_its_quorum_page_from_the_nav(client, sandbox, personas):
    cluster = Cluster.objects.create(
        name="ctl", bootstrap_controllers=sandbox.bootstrap_controllers, request_timeout_s=5
    )
    client.force_login(personas["admin"])
    body = client.get(reverse("cluster_overview", kwargs={"name": cluster.name})).content.decode()
    assert reverse("quorum_page", kwargs={"name": cluster.name}) in body
    assert "controller mode" in body
