"""The rules measured without Kafka, on a cluster nobody listens on (it is also alerted as
unreachable): the stored client certificate expiring, the capacity forecast's days to full, the
audit chain's latest verification failing - each fires, and resolves once the cause is gone."""

from __future__ import annotations

import datetime as dt
import socket
import time

import pytest
from django.utils import timezone

from console.alerts import evaluate, measure
from console.integrity.chain import VERIFY_KIND
from console.models import Cluster, Operation, OperationState
from console.models.alerts import Alert
from pipeline import reports
from sandbox.pki import make_ca

NOW = dt.datetime.now(dt.UTC)


@pytest.fixture
def offline(db):
    measure.MEMORY.clear()
    yield Cluster.objects.create(name="far", bootstrap_servers="127.0.0.1:1", request_timeout_s=2)
    measure.MEMORY.clear()


def _open(cluster) -> dict[str, Alert]:
    return {a.rule: a for a in Alert.objects.filter(cluster=cluster, state__in=["firing", "acknowledged"])}


def test_it_fires_when_the_client_certificate_expires_within_its_days(offline):
    ca = make_ca("Alert Test CA")
    cert, key = ca.issue("console", client=True, not_after=NOW + dt.timedelta(days=3, hours=1))
    Cluster.objects.filter(pk=offline.pk).update(
        security_protocol="SSL", client_certificate=cert + ca.cert_pem, ca_certificate=ca.cert_pem
    )
    offline.refresh_from_db()
    evaluate.evaluate_cluster(offline, timeout_s=10)
    alerts = _open(offline)
    assert set(alerts) == {"cluster_unreachable", "client_cert_expiry"}
    cert_alert = alerts["client_cert_expiry"]
    assert (cert_alert.value, cert_alert.threshold, cert_alert.severity) == (3.0, 14.0, "warning")
    assert cert_alert.summary == "the client certificate (CN=console) expires in 3 day(s)"

    fresh, _ = ca.issue("console", client=True, not_after=NOW + dt.timedelta(days=90))
    Cluster.objects.filter(pk=offline.pk).update(client_certificate=fresh + ca.cert_pem)
    offline.refresh_from_db()
    evaluate.evaluate_cluster(offline, timeout_s=10)
    assert set(_open(offline)) == {"cluster_unreachable"}


def _forecast(lake_dir, cluster: str, days: dict[int, float | None]) -> None:
    first, last = NOW - dt.timedelta(hours=30), NOW
    size = [
        {"ts": ts, "log_bytes": 1, "disk_bytes": 1, "messages": 1, "partitions": 1, "topics": 1}
        for ts in (first, last)
    ]
    disk = [{"ts": last, "broker": b, "size_bytes": 10, "total_bytes": 100, "leaders": 1} for b in days]
    forecast = [
        {"broker": b, "last_ts": last, "size_bytes": 10, "capacity_bytes": 100, "used_ratio": 0.1,
         "slope_bytes_per_day": 1.0, "days_to_full": d, "free_bytes": 90}
        for b, d in days.items()
    ]  # fmt: skip
    meta = {"params": {"min_history_h": 24}, "generated_at": last.isoformat()}
    reports.publish(
        lake_dir, cluster, {"cluster_size": size, "broker_disk": disk, "broker_forecast": forecast}, meta
    )


def test_it_fires_for_a_broker_whose_disk_is_full_within_its_days(offline, telemetry_lake, settings):
    settings.ALERTS_CONFIGS_MAX_AGE_S = 0  # the forecast is read again every round
    _forecast(telemetry_lake, "far", {1: 2.5, 2: 30.0, 3: None})
    evaluate.evaluate_cluster(offline, timeout_s=10)
    (disk,) = Alert.objects.filter(cluster=offline, rule="disk_days_to_full")
    assert (disk.subject, disk.value, disk.threshold) == ("broker 1", 2.5, 7.0)
    assert disk.summary == "broker 1's disk is full in 2.5 day(s)"

    _forecast(telemetry_lake, "far", {1: 20.0, 2: 30.0, 3: None})
    evaluate.evaluate_cluster(offline, timeout_s=10)
    disk.refresh_from_db()
    assert disk.state == "resolved"


def test_it_fires_when_the_latest_full_verification_of_the_audit_chain_failed(offline, monkeypatch):
    monkeypatch.setattr(measure, "CHAIN_CHECK_S", 0.0)  # checked again every round (else kept 30 s)
    failed = Operation.objects.create(
        kind=VERIFY_KIND, state=OperationState.FAILED, error="broken at event 12: hash mismatch"
    )
    evaluate.evaluate_cluster(offline, timeout_s=10)
    chain = _open(offline)["audit_chain_broken"]
    assert (chain.value, chain.severity) == (1.0, "critical")
    assert chain.summary == f"the full verification #{failed.pk} failed: broken at event 12: hash mismatch"

    Operation.objects.create(kind=VERIFY_KIND, state=OperationState.SUCCEEDED, finished_at=timezone.now())
    evaluate.evaluate_cluster(offline, timeout_s=10)
    assert "audit_chain_broken" not in _open(offline)


@pytest.mark.django_db(transaction=True)
def test_beats_round_hands_clusters_to_the_evaluators_threads_and_returns_at_once(settings):
    from tasks.alerts import evaluate as beat_task

    settings.ALERTS_CLUSTER_TIMEOUT_S = 1.0
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts connections, never answers
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        slow = Cluster.objects.create(name="slow", bootstrap_servers=address, request_timeout_s=5)
        started = time.monotonic()
        handed = beat_task()
        assert time.monotonic() - started < 0.5 and handed == [slow.pk]
        assert beat_task() == []  # still held by the first round: not handed twice
        assert evaluate.evaluator().idle(15)
    (alert,) = Alert.objects.filter(cluster=slow)
    assert alert.rule == "cluster_unreachable" and "no answer within 1 s" in alert.summary


def test_it_fires_when_the_brokers_certificate_expires_within_its_days(db):
    from console.kafka import close_all
    from sandbox.security import SandboxSecurity
    from sandbox.testing import running_sandbox

    ca = make_ca("Alert Test CA")
    cert, key = ca.issue(
        "localhost", sans=("localhost", "127.0.0.1"), not_after=NOW + dt.timedelta(days=5, hours=1)
    )
    security = SandboxSecurity(protocol="SSL", server_cert_pem=cert, server_key_pem=key)
    measure.MEMORY.clear()
    try:
        with running_sandbox(brokers=1, controllers=1, speed=0, security=security) as c:
            tls = Cluster.objects.create(
                name="tls",
                bootstrap_servers=c.bootstrap_servers,
                security_protocol="SSL",
                ca_certificate=ca.cert_pem,
                request_timeout_s=5,
            )
            evaluate.evaluate_cluster(tls)
    finally:
        close_all()
        measure.MEMORY.clear()
    alerts = _open(tls)
    assert set(alerts) == {"server_cert_expiry"}, {r: a.summary for r, a in alerts.items()}
    assert (alerts["server_cert_expiry"].value, alerts["server_cert_expiry"].threshold) == (5.0, 14.0)
    assert (
        alerts["server_cert_expiry"].summary == "the brokers' certificate (CN=localhost) expires in 5 day(s)"
    )
