"""The cluster registry form: KIP-919's either/or rule, address checks, SASL handling."""

from __future__ import annotations

import time

import pytest

from console.clusters import actions as clusters
from console.forms.clusters import ClusterForm
from console.models import Cluster

pytestmark = pytest.mark.django_db

BASE = {"name": "prod", "security_protocol": "PLAINTEXT", "request_timeout_s": "5"}


def _form(**overrides) -> ClusterForm:
    return ClusterForm(data={**BASE, **overrides})


def test_it_refuses_both_servers_and_controllers():
    form = _form(bootstrap_servers="b1:9092", bootstrap_controllers="c1:9093")
    assert not form.is_valid()
    assert "not both" in " ".join(form.non_field_errors())
    assert "KIP-919" in " ".join(form.non_field_errors())


def test_it_refuses_neither_servers_nor_controllers():
    form = _form()
    assert not form.is_valid()
    assert "bootstrap controllers" in " ".join(form.non_field_errors())


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("broker1", "is not host:port"),
        ("broker1:", "port '' in"),
        ("broker1:99999", "port '99999'"),
        ("broker1:abc", "port 'abc'"),
        ("bad host:9092", "'bad host' in"),
        ("b1:9092,:9092", "is not host:port"),
    ],
)
def test_it_names_the_bad_address(value, fragment):
    form = _form(bootstrap_servers=value)
    assert not form.is_valid()
    assert fragment in " ".join(form.errors["bootstrap_servers"])


def test_it_accepts_controllers_alone():
    form = _form(bootstrap_controllers="127.0.0.1:9093, [::1]:9094")
    assert form.is_valid(), form.errors


def test_sasl_protocols_need_mechanism_user_and_password():
    form = _form(bootstrap_servers="b:9092", security_protocol="SASL_SSL")
    assert not form.is_valid()
    assert {"sasl_mechanism", "sasl_username", "sasl_password"} <= set(form.errors)


def test_the_sasl_password_is_encrypted_at_rest_and_never_rendered(personas):
    form = _form(
        bootstrap_servers="b:9092",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username="alice",
        sasl_password="alice-secret",
    )
    assert form.is_valid(), form.errors
    cluster = clusters.register_cluster(
        actor=personas["admin"], values=form.values(), sasl_password=form.cleaned_data["sasl_password"]
    )
    stored = Cluster.objects.get(pk=cluster.pk)
    assert "alice-secret" not in stored.sasl_password_encrypted
    assert stored.sasl_password() == "alice-secret"
    assert "alice-secret" not in ClusterForm(instance=stored).as_div()


def test_an_unreachable_server_fails_fast_with_a_clear_error():
    form = _form(bootstrap_servers="127.0.0.1:1", request_timeout_s="3")
    assert form.is_valid(), form.errors
    started = time.monotonic()
    report = clusters.test_connection(clusters.connection_for(form.save(commit=False), ""))
    assert time.monotonic() - started < 8
    assert not report.ok
    assert "127.0.0.1:1" in report.error


def test_the_sandbox_reports_its_identity(kafka_cluster, sandbox):
    report = clusters.test_connection(clusters.connection_for(kafka_cluster))
    assert report.ok, report.error
    assert report.cluster_id == sandbox.cluster_id
    assert report.broker_count == 3
