"""E2E (issue 31): a superuser registers a secured cluster through the registry page in Chromium for each
kind of listener the sandbox speaks - SSL with a CA, mTLS (PEM certificate + key, and a PKCS#12 upload with
its passphrase), SASL_SSL SCRAM-SHA-512, SASL_SSL OAUTHBEARER (client credentials at the test identity
provider, JWTs checked by the sandbox against its JWKS) - tests the connection and sees the certificate
facts, saves, and creates a topic on it; and for each bad case sees the cause named and nothing saved."""

from __future__ import annotations

import uuid

import pytest

from console.models import AuditEvent, Cluster
from tests.e2e.conftest import login
from tests.e2e.pages import create_topic
from tests.secured_world import (
    SCRAM_USER,
    encrypted_key_pem,
    pkcs12_bytes,
    secured_sandboxes,
)
from tests.sso.fixtures import oidc_provider  # noqa: F401 - fixture

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCRAM_PASSWORD = "scram-e2e-Pw-7f3a"
P12_PASSPHRASE = "p12-e2e-Pass-91c"
KEY_PASSPHRASE = "pem-e2e-Pass-44d"


@pytest.fixture(scope="module")
def world(oidc_provider):  # noqa: F811
    with secured_sandboxes(oidc_provider, SCRAM_PASSWORD) as sandboxes:
        yield sandboxes


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password="pw-root")


def settings_for(kind: str, world, provider) -> tuple[dict, dict]:
    """The page's fields for a kind of registration: (fields typed or chosen, files uploaded)."""
    pki = world.pki
    tls = {"ca_certificate": pki.ca.cert_pem}
    cert, key = pki.client
    oauth = {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "OAUTHBEARER",
        **tls,
        "oauth_token_endpoint": provider.token_endpoint,
        "oauth_client_id": provider.service_client_id,
        "oauth_client_secret": provider.service_client_secret,
        "oauth_scope": "openid",
    }
    scram = {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        **tls,
        "sasl_username": SCRAM_USER,
        "sasl_password": SCRAM_PASSWORD,
    }
    p12 = {"name": "console.p12", "mimeType": "application/x-pkcs12", "buffer": b""}
    table: dict[str, tuple[str, dict, dict]] = {
        "ssl": ("ssl", {"security_protocol": "SSL", **tls}, {}),
        "mtls-pem": (
            "mtls",
            {
                "security_protocol": "SSL",
                **tls,
                "client_certificate": cert,
                "client_key": encrypted_key_pem(key, KEY_PASSPHRASE),
                "client_key_passphrase": KEY_PASSPHRASE,
            },
            {},
        ),
        "mtls-pkcs12": (
            "mtls",
            {"security_protocol": "SSL", "client_pkcs12_password": P12_PASSPHRASE},
            {"client_pkcs12": {**p12, "buffer": pkcs12_bytes(cert, key, P12_PASSPHRASE, pki.ca.cert_pem)}},
        ),
        "scram": ("scram", scram, {}),
        "oauth": ("oauth", oauth, {}),
        # the bad cases
        "wrong-ca": ("ssl", {"security_protocol": "SSL", "ca_certificate": pki.other_ca.cert_pem}, {}),
        "hostname-mismatch": ("elsewhere", {"security_protocol": "SSL", **tls}, {}),
        "no-client-certificate": ("mtls", {"security_protocol": "SSL", **tls}, {}),
        "wrong-password": ("scram", {**scram, "sasl_password": "not-the-password"}, {}),
        "wrong-client-secret": ("oauth", {**oauth, "oauth_client_secret": "not-the-secret"}, {}),
    }
    sandbox_kind, fields, files = table[kind]
    return {"bootstrap_servers": world.bootstrap(sandbox_kind), **fields}, files


SELECTS = ("security_protocol", "sasl_mechanism")
SECRET_FIELDS = (
    "sasl_password",
    "client_key",
    "client_key_passphrase",
    "client_pkcs12_password",
    "oauth_client_secret",
)


def fill_form(page, name: str, fields: dict, files: dict, only_secrets: bool = False) -> None:
    """Type the settings as an operator does: name and address, then the protocol and mechanism (which
    show their sections), then the rest; ``only_secrets``: again the write-only fields and the uploads
    the page does not keep after a Test connection."""
    if not only_secrets:
        page.fill("#id_name", name)
        for field in SELECTS:
            if field in fields:
                page.select_option(f"#id_{field}", fields[field])
    for field, value in fields.items():
        if field in SELECTS or (only_secrets and field not in SECRET_FIELDS):
            continue
        page.fill(f"#id_{field}", value)
    for field, upload in files.items():
        page.set_input_files(f"#id_{field}", files=[upload])


@pytest.fixture
def tested(kind, page, live_server, root, world, oidc_provider):  # noqa: F811
    """As root: the registry form filled with ``kind``'s settings, then Test connection.
    (the cluster's name, the fields, the files, the connection report's text)"""
    name = f"{'sec' if kind in GOOD else 'bad'}-{kind}-{uuid.uuid4().hex[:6]}"
    fields, files = settings_for(kind, world, oidc_provider)
    login(page, live_server, "root", "pw-root")
    page.goto(f"{live_server.url}/clusters/new/")
    fill_form(page, name, fields, files)
    page.click("#cluster-test")
    report = page.locator("#connection-report")
    report.wait_for()
    return name, fields, files, report.inner_text()


GOOD = {
    # kind: (TLS facts expected on the report: server subject, client certificate subject or None)
    "ssl": None,
    "mtls-pem": "CN=console",
    "mtls-pkcs12": "CN=console",
    "scram": None,
    "oauth": None,
}


@pytest.mark.parametrize("kind", list(GOOD))
def test_it_registers_a_secured_cluster_through_the_page_and_creates_a_topic_on_it(
    kind, page, live_server, tested
):
    name, fields, files, text = tested
    assert text.startswith("Connected (brokers): cluster id"), text
    assert "1 broker over TLSv1." in text
    server = page.inner_text("#report-server-certificate")
    assert server.startswith(
        "Server certificate: CN=sandbox-broker, issued by CN=Secured Sandbox CA, expires "
    )
    client = GOOD[kind]
    if client:
        assert page.inner_text("#report-client-certificate").startswith(f"Client certificate: {client}")
    else:
        assert page.locator("#report-client-certificate").count() == 0
    assert not Cluster.objects.filter(name=name).exists()  # a test saves nothing

    fill_form(page, name, fields, files, only_secrets=True)  # the page keeps no secret and no upload
    page.click("#cluster-save")
    page.wait_for_url(f"{live_server.url}/c/{name}/")
    cluster = Cluster.objects.get(name=name)
    assert (cluster.security_protocol, cluster.sasl_mechanism or "") == (
        fields["security_protocol"],
        fields.get("sasl_mechanism", ""),
    )
    assert cluster.has_secret("client_key") is kind.startswith("mtls")
    summary = page.inner_text("#security-summary")
    assert summary.startswith(f"Security: {fields['security_protocol']}")
    assert "hostname verification on" in summary
    assert "CN=sandbox-broker" not in page.inner_text("#certificates")  # only what the console stores
    assert "CN=Secured Sandbox CA" in page.inner_text("#certificates")

    topic = f"e2e.sec-{uuid.uuid4().hex[:8]}"
    page.click("nav >> text=Topics")
    page.wait_for_url(f"{live_server.url}/c/{name}/topics/")
    create_topic(page, f"{live_server.url}/c/{name}", topic, 2, 1)
    assert page.locator("#partitions tbody tr").count() == 2
    page.goto(f"{live_server.url}/c/{name}/topics/")
    row = page.locator(f"#topics tr[data-topic='{topic}']")
    row.wait_for()
    assert row.locator("td").all_inner_texts()[2:4] == ["2", "1"]
    registered = AuditEvent.objects.get(action="cluster.register", targets=[f"cluster:{name}"])
    assert registered.outcome == "success" and registered.actor_name == "root"
    created = AuditEvent.objects.exclude(outcome="requested").get(action="topic.create")
    assert created.outcomes[f"topic:{topic}"]["ok"] is True


BAD = {
    # kind: (error name on the page, the cause as the page names it)
    "wrong-ca": (
        "TLS_SERVER_CERTIFICATE_REJECTED",
        "the server certificate was not accepted: unable to get local issuer certificate "
        "(subject 'CN=sandbox-broker', issuer 'CN=Secured Sandbox CA', valid until ",
    ),
    "hostname-mismatch": (
        "TLS_SERVER_CERTIFICATE_REJECTED",
        "the server certificate was not accepted: IP address mismatch, certificate is not valid for "
        "'127.0.0.1'. (subject 'CN=kafka.elsewhere.example'",
    ),
    "no-client-certificate": (
        "TLS_CLIENT_CERTIFICATE_REFUSED",
        "the server refused the client certificate (certificate required); no client certificate is configured",
    ),
    "wrong-password": (
        "SASL_AUTHENTICATION_FAILED",
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
    ),
    "wrong-client-secret": (
        "TOKEN_ENDPOINT_REFUSED",
        "(token endpoint refused the client (401 invalid_client))",
    ),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_it_names_the_cause_of_a_failed_test_on_the_page_and_saves_nothing(kind, tested):
    error_name, cause = BAD[kind]
    *_, text = tested
    assert text.startswith(f"Connection failed {error_name}: "), text
    assert cause in text, text
    assert Cluster.objects.count() == 0
    tested = AuditEvent.objects.get(action="cluster.test")
    assert (tested.outcome, tested.outcomes) == (
        "failure",
        {"connection": {"ok": False, "error": error_name}},
    )
    assert not AuditEvent.objects.filter(action="cluster.register").exists()
