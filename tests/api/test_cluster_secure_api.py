"""The registry through the API: every secured field in, secrets write-only (never in an answer), PKCS#12 and
keytab as base64, the secret-binding rule and the hostname-verification rule as on the page."""

from __future__ import annotations

import base64

import pytest
from django.urls import reverse

from console.identity import tokens
from console.models import AuditEvent, Cluster, Role, RoleBinding
from tests.secured_world import pkcs12_bytes, tls_sandbox

pytestmark = pytest.mark.django_db
P12_PASSWORD = "p12-S3CRET-api"
CLIENT_SECRET = "cs-S3CRET-api"
KEYTAB = b"\x05\x02\x00\x00\x00\x20keytab-S3CRET-api"


@pytest.fixture(scope="module")
def mtls_sandbox(ca):
    with tls_sandbox(ca, "SSL", client_ca=True) as c:
        yield c


def _p12(ca) -> str:
    return base64.b64encode(pkcs12_bytes(*ca.issue("console-api", client=True), P12_PASSWORD)).decode()


def _api(client, user, name, body, kwargs=None):
    bearer = tokens.create_token(actor=user, name=f"t-{user.username}", scope="write", days=1).secret
    return client.post(
        reverse(f"api:{name}", kwargs=kwargs), body, content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {bearer}",
    )  # fmt: skip


def _no_secret_in(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text


def test_it_registers_an_mtls_cluster_from_base64_pkcs12_and_never_answers_a_secret(
    client, personas, mtls_sandbox, ca
):
    p12 = _p12(ca)
    body = {"name": "api-mtls", "bootstrap_servers": mtls_sandbox.bootstrap_servers, "security_protocol": "SSL",
            "ca_certificate": ca.cert_pem, "client_pkcs12_base64": p12, "client_pkcs12_password": P12_PASSWORD,
            "request_timeout_s": 5}  # fmt: skip
    tested = _api(client, personas["admin"], "clusters", {**body, "test_only": True})
    assert tested.status_code == 200, tested.content
    report = tested.json()
    assert report["ok"] is True and report["server_certificate"]["subject"] == "CN=localhost"
    assert report["client_certificate"]["subject"] == "CN=console-api"
    assert not Cluster.objects.filter(name="api-mtls").exists()
    made = _api(client, personas["admin"], "clusters", body)
    assert made.status_code == 201, made.content
    answer = made.json()
    assert answer["client_certificate"]["subject"] == "CN=console-api"
    assert answer["secrets_stored"] == {"sasl_password": False, "client_key": True,
                                        "oauth_client_secret": False, "kerberos_keytab": False}  # fmt: skip
    assert answer["ssl_check_hostname"] is True and answer["tls_min_version"] == "TLSv1.2"
    client.force_login(personas["admin"])
    detail = client.get(reverse("api:cluster", kwargs={"name": "api-mtls"}))
    assert detail.status_code == 200, detail.content
    texts = made.content.decode() + tested.content.decode() + detail.content.decode()
    _no_secret_in(texts, P12_PASSWORD, p12[:40], "PRIVATE KEY")
    _no_secret_in(repr(list(AuditEvent.objects.values())), P12_PASSWORD, "PRIVATE KEY")
    assert detail.json()["security"]["hostname_check_off"] is False


def test_it_takes_oauth_and_kerberos_settings_with_write_only_secrets(client, personas):
    oauth = {"name": "api-oauth", "bootstrap_servers": "127.0.0.1:1", "security_protocol": "SASL_SSL",
             "sasl_mechanism": "OAUTHBEARER", "oauth_token_endpoint": "https://idp.example.org/token",
             "oauth_client_id": "console", "oauth_client_secret": CLIENT_SECRET, "oauth_scope": "kafka",
             "oauth_extensions": "logicalCluster=lkc-1"}  # fmt: skip
    made = _api(client, personas["admin"], "clusters", oauth)
    assert made.status_code == 201, made.content
    assert made.json()["oauth_extension_names"] == ["logicalCluster"]
    assert Cluster.objects.get(name="api-oauth").secret("oauth_client_secret") == CLIENT_SECRET
    krb = {"name": "api-krb", "bootstrap_servers": "127.0.0.1:1", "security_protocol": "SASL_PLAINTEXT",
           "sasl_mechanism": "GSSAPI", "kerberos_principal": "console@EXAMPLE.ORG",
           "kerberos_keytab_base64": base64.b64encode(KEYTAB).decode()}  # fmt: skip
    made_krb = _api(client, personas["admin"], "clusters", krb)
    assert made_krb.status_code == 201, made_krb.content
    assert made_krb.json()["kerberos_service_name"] == "kafka"
    assert base64.b64decode(Cluster.objects.get(name="api-krb").secret("kerberos_keytab")) == KEYTAB
    _no_secret_in(made.content.decode() + made_krb.content.decode(), CLIENT_SECRET, "keytab-S3CRET")
    bad = _api(client, personas["admin"], "clusters", {**krb, "name": "x", "kerberos_keytab_base64": "%%%"})
    assert (
        bad.status_code == 400
        and "kerberos_keytab_base64: not valid base64" in bad.json()["error"]["message"]
    )
    missing = _api(client, personas["admin"], "clusters", {**oauth, "name": "y", "oauth_client_secret": ""})
    assert missing.status_code == 400 and "OAUTHBEARER needs the client secret" in missing.content.decode()


def test_a_changed_token_endpoint_without_the_secret_is_refused_and_hostname_off_needs_a_superuser(
    client, personas
):
    oauth = {"name": "api-oauth", "bootstrap_servers": "127.0.0.1:1", "security_protocol": "SASL_SSL",
             "sasl_mechanism": "OAUTHBEARER", "oauth_token_endpoint": "https://idp.example.org/token",
             "oauth_client_id": "console", "oauth_client_secret": CLIENT_SECRET}  # fmt: skip
    assert _api(client, personas["admin"], "clusters", oauth).status_code == 201
    cluster = Cluster.objects.get(name="api-oauth")
    RoleBinding.objects.create(cluster=cluster, user=personas["outsider"], role=Role.ADMIN)
    kw = {"name": "api-oauth"}
    moved = _api(
        client, personas["admin"], "cluster-settings", {"oauth_token_endpoint": "https://evil.example/t"}, kw
    )
    assert moved.status_code == 422, moved.content
    assert "Enter the OAuth client secret again" in moved.json()["error"]["message"]
    assert "token endpoint has changed" in moved.json()["error"]["message"]
    cluster.refresh_from_db()
    assert cluster.oauth_token_endpoint == "https://idp.example.org/token"
    off = _api(client, personas["outsider"], "cluster-settings",
               {"ssl_check_hostname": False, "oauth_client_secret": CLIENT_SECRET}, kw)  # fmt: skip
    assert off.status_code == 403 and "Only a superuser" in off.json()["error"]["message"]
    done = _api(client, personas["admin"], "cluster-settings",
                {"ssl_check_hostname": False, "oauth_client_secret": CLIENT_SECRET}, kw)  # fmt: skip
    assert done.status_code == 200 and done.json()["ssl_check_hostname"] is False
    event = AuditEvent.objects.filter(action="cluster.update", outcome="success").get()
    assert event.after["ssl_check_hostname"] is False and event.params["entered"] == ["oauth_client_secret"]
    _no_secret_in(repr(list(AuditEvent.objects.values())), CLIENT_SECRET)
