"""Registering secured sandbox clusters through the page: mTLS from a PKCS#12 upload, SASL_SSL with SCRAM,
and Test connection naming the cause of each failure (wrong CA, missing client certificate, wrong password).
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from console.models import AuditEvent, Cluster
from sandbox.pki import make_ca
from sandbox.security import SandboxSecurity
from sandbox.testing import running_sandbox
from tests.secured_world import pkcs12_bytes, tls_sandbox

pytestmark = pytest.mark.django_db
P12_PASSWORD = "p12-S3CRET-connect"
SCRAM_PASSWORD = "scram-S3CRET-connect"


@pytest.fixture(scope="module")
def mtls_sandbox(ca):
    with tls_sandbox(ca, "SSL", client_ca=True, controllers=1) as c:
        yield c


@pytest.fixture(scope="module")
def scram_sandbox(ca):
    with tls_sandbox(ca, "SASL_SSL", users={"console": SCRAM_PASSWORD}, controllers=1) as c:
        yield c


def _p12(ca) -> bytes:
    return pkcs12_bytes(*ca.issue("console", client=True), P12_PASSWORD, ca.cert_pem)


def _post(client, body: dict, files: dict | None = None):
    base = {
        "name": "secured",
        "request_timeout_s": "5",
        "tls_min_version": "TLSv1.2",
        "ssl_check_hostname": "True",
    }
    return client.post(reverse("cluster_new"), {**base, **body, **(files or {})})


def test_it_registers_an_mtls_cluster_from_a_pkcs12_file_and_shows_the_certificates(
    client, personas, mtls_sandbox, ca
):
    client.force_login(personas["admin"])
    body = {"bootstrap_servers": mtls_sandbox.bootstrap_servers, "security_protocol": "SSL",
            "client_pkcs12_password": P12_PASSWORD}  # fmt: skip
    tested = _post(
        client, {**body, "action": "test"}, {"client_pkcs12": SimpleUploadedFile("c.p12", _p12(ca))}
    )
    page = tested.content.decode()
    assert tested.status_code == 200 and "<strong>Connected</strong>" in page, page[-3000:]
    assert (
        'id="report-server-certificate"' in page and "CN=localhost" in page and "CN=Sandbox Test CA" in page
    )
    assert 'id="report-client-certificate"' in page and "CN=console" in page
    assert not Cluster.objects.filter(name="secured").exists()  # a test saves nothing
    saved = _post(
        client, {**body, "action": "save"}, {"client_pkcs12": SimpleUploadedFile("c.p12", _p12(ca))}
    )
    assert saved.status_code == 302, saved.content.decode()[-3000:]
    cluster = Cluster.objects.get(name="secured")
    assert cluster.ca_certificate == ca.cert_pem.strip() and cluster.has_secret("client_key")
    overview = client.get(reverse("cluster_overview", kwargs={"name": "secured"})).content.decode()
    assert "Kafka could not be reached" not in overview and 'id="certificates"' in overview
    report = client.post(reverse("cluster_test", kwargs={"name": "secured"})).content.decode()
    assert "<strong>Connected</strong>" in report and "CN=localhost" in report
    assert P12_PASSWORD not in repr(list(AuditEvent.objects.values())) + repr(list(Cluster.objects.values()))


def test_it_names_the_cause_when_the_ca_is_wrong_or_the_client_certificate_missing(
    client, personas, mtls_sandbox, ca
):
    client.force_login(personas["admin"])
    other = make_ca("Somebody Else's CA")
    wrong_ca = _post(client, {"bootstrap_servers": mtls_sandbox.bootstrap_servers, "security_protocol": "SSL",
                              "ca_certificate": other.cert_pem, "action": "test"}).content.decode()  # fmt: skip
    assert "Connection failed" in wrong_ca and "TLS_SERVER_CERTIFICATE_REJECTED" in wrong_ca, wrong_ca[-2000:]
    no_client = _post(client, {"bootstrap_servers": mtls_sandbox.bootstrap_servers, "security_protocol": "SSL",
                               "ca_certificate": ca.cert_pem, "action": "test"}).content.decode()  # fmt: skip
    assert "TLS_CLIENT_CERTIFICATE_REFUSED" in no_client, no_client[-2000:]
    assert "no client certificate is configured" in no_client
    events = AuditEvent.objects.filter(action="cluster.test").order_by("pk")
    assert [e.outcome for e in events] == ["failure", "failure"]
    assert not Cluster.objects.filter(name="secured").exists()


def test_it_connects_with_scram_over_tls_and_names_a_wrong_password(client, personas, scram_sandbox, ca):
    client.force_login(personas["admin"])
    body = {"bootstrap_servers": scram_sandbox.bootstrap_servers, "security_protocol": "SASL_SSL",
            "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "console", "ca_certificate": ca.cert_pem,
            "action": "test"}  # fmt: skip
    good = _post(client, {**body, "sasl_password": SCRAM_PASSWORD}).content.decode()
    assert "<strong>Connected</strong>" in good and "CN=localhost" in good, good[-2000:]
    bad = _post(client, {**body, "sasl_password": "not-the-password"}).content.decode()
    assert "SASL_AUTHENTICATION_FAILED" in bad and "Authentication failed" in bad, bad[-2000:]
    assert "not-the-password" not in bad and SCRAM_PASSWORD not in good


def test_the_cluster_page_shows_the_brokers_certificate_and_warns_before_it_expires(client, personas, ca):
    import datetime as dt

    soon = dt.datetime.now(dt.UTC) + dt.timedelta(days=5)
    cert, key = ca.issue("localhost", sans=("localhost", "127.0.0.1"), not_after=soon)
    sec = SandboxSecurity(protocol="SSL", server_cert_pem=cert, server_key_pem=key)
    with running_sandbox(brokers=1, controllers=0, speed=0, security=sec) as c:
        Cluster.objects.create(name="expiring", bootstrap_servers=c.bootstrap_servers, security_protocol="SSL",
                               ca_certificate=ca.cert_pem, request_timeout_s=5)  # fmt: skip
        client.force_login(personas["admin"])
        page = client.get(reverse("cluster_overview", kwargs={"name": "expiring"})).content.decode()
    assert (
        'id="server-certificate"' in page and "CN=localhost" in page.split('id="server-certificate"')[1][:300]
    )
    assert f"The server certificate expires on {soon:%Y-%m-%d}" in page
    assert "CN=localhost" not in page.split('id="certificates"')[1]  # the table lists what the console stores
