"""The registry for secured clusters: credentials read at upload, every setting checked, secrets encrypted at
rest and bound to the settings they were saved with, hostname verification off for superusers only."""

from __future__ import annotations

import base64
import datetime as dt
import socket
import threading

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509 import load_pem_x509_certificate
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from console.clusters import actions as clusters
from console.clusters import credentials
from console.forms.clusters import ClusterForm
from console.models import AuditEvent, Cluster, Role, RoleBinding
from sandbox.pki import make_ca

pytestmark = pytest.mark.django_db

NOW = dt.datetime.now(dt.UTC)
KEYTAB = b"\x05\x02" + b"\x00\x00\x00\x30" + b"keytab-bytes-KT5ECRET" * 2
SECRETS = {
    "sasl_password": "pw-S3CRET-sasl",
    "oauth_client_secret": "cs-S3CRET-oauth",
    "passphrase": "pp-S3CRET-key",
    "p12": "p12-S3CRET-file",
}


@pytest.fixture(scope="module")
def pki():
    ca = make_ca("Registry Test CA")
    client_cert, client_key = ca.issue("console", client=True)
    other_cert, other_key = ca.issue("someone-else", client=True)
    return {
        "ca": ca,
        "cert": client_cert,
        "key": client_key,
        "other_key": other_key,
        "other_cert": other_cert,
    }


def _encrypted(key_pem: str, passphrase: str) -> str:
    key = serialization.load_pem_private_key(key_pem.encode(), None)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(passphrase.encode()),
    ).decode()


def _p12(cert_pem: str, key_pem: str, password: str, cas: tuple[str, ...] = ()) -> bytes:
    key = serialization.load_pem_private_key(key_pem.encode(), None)
    return pkcs12.serialize_key_and_certificates(
        b"console",
        key,
        load_pem_x509_certificate(cert_pem.encode()),
        [load_pem_x509_certificate(c.encode()) for c in cas] or None,
        serialization.BestAvailableEncryption(password.encode()),
    )


# ---- credentials ----------------------------------------------------------------------------


def test_it_reads_a_ca_bundle_and_names_the_bad_certificate(pki):
    second = make_ca("Second CA").cert_pem
    assert len(credentials.parse_certificates(pki["ca"].cert_pem + second, "CA bundle")) == 2
    broken = second.replace(second.splitlines()[3], "A" * 64)
    with pytest.raises(ValidationError, match="certificate 2 of 2 is not a valid X.509 certificate"):
        credentials.parse_certificates(pki["ca"].cert_pem + broken, "CA bundle")
    with pytest.raises(ValidationError, match="holds a private key"):
        credentials.parse_certificates(pki["ca"].cert_pem + pki["key"], "CA bundle")
    with pytest.raises(ValidationError, match="paste PEM certificates"):
        credentials.parse_certificates("hello", "CA bundle")


def test_it_opens_an_encrypted_key_with_its_passphrase_and_keeps_it_unencrypted(pki):
    locked = _encrypted(pki["key"], SECRETS["passphrase"])
    chain, key = credentials.client_credentials(pki["cert"], locked, SECRETS["passphrase"])
    assert key.startswith("-----BEGIN PRIVATE KEY-----") and "ENCRYPTED" not in key
    assert chain == pki["cert"]
    with pytest.raises(ValidationError, match="wrong passphrase") as wrong:
        credentials.client_credentials(pki["cert"], locked, "not-it")
    with pytest.raises(ValidationError, match="it is encrypted; enter its passphrase"):
        credentials.client_credentials(pki["cert"], locked, "")
    with pytest.raises(ValidationError, match="not encrypted; leave the passphrase blank"):
        credentials.client_credentials(pki["cert"], pki["key"], "extra")
    assert SECRETS["passphrase"] not in str(wrong.value)


def test_it_refuses_a_key_that_does_not_belong_to_the_certificate(pki):
    with pytest.raises(ValidationError, match="does not belong to the client certificate.*CN=console"):
        credentials.client_credentials(pki["cert"], pki["other_key"])


def test_it_converts_a_pkcs12_file_to_a_chain_and_an_unencrypted_key(pki):
    data = _p12(pki["cert"], pki["key"], SECRETS["p12"], cas=(pki["ca"].cert_pem,))
    chain, key, roots = credentials.from_pkcs12(data, SECRETS["p12"])
    assert chain == pki["cert"] and roots == pki["ca"].cert_pem
    assert credentials.client_credentials(chain, key) == (pki["cert"], key)  # the key matches the chain
    with pytest.raises(ValidationError, match="does not open the file"):
        credentials.from_pkcs12(data, "wrong")
    with pytest.raises(ValidationError, match="does not open the file"):
        credentials.from_pkcs12(b"not a pkcs12 file", "x")
    # cryptography and openssl refuse to write a PKCS#12 whose key does not match its certificate; a file
    # with the key and the certificate only among the extra ones is the nearest a user can bring
    key = serialization.load_pem_private_key(pki["other_key"].encode(), None)
    stray = pkcs12.serialize_key_and_certificates(
        b"x", key, None, [load_pem_x509_certificate(pki["cert"].encode())],
        serialization.BestAvailableEncryption(b"pw"),
    )  # fmt: skip
    with pytest.raises(ValidationError, match="must hold the client certificate and its private key"):
        credentials.from_pkcs12(stray, "pw")


def test_it_keeps_a_keytab_as_base64_and_refuses_other_files():
    assert base64.b64decode(credentials.keytab_text(KEYTAB)) == KEYTAB
    with pytest.raises(ValidationError, match="not a Kerberos keytab"):
        credentials.keytab_text(b"PK\x03\x04zip")
    with pytest.raises(ValidationError, match="at most 64 KiB"):
        credentials.keytab_text(b"\x05\x02" + b"x" * 70000)
    with pytest.raises(ValidationError, match="empty"):
        credentials.keytab_text(b"")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("auth=x", "'auth' is reserved"),
        ("logical_cluster=x", "letters only"),
        ("noequals", "write name=value"),
        ("a=1\na=2", "given twice"),
        ("a=", "printable ASCII"),
        ("a=caf\u00e9", "printable ASCII"),
    ],
)
def test_it_checks_sasl_extensions_as_kafka_does(text, message):
    with pytest.raises(ValidationError, match=message):
        credentials.parse_extensions(text)


def test_it_sorts_sasl_extensions_and_trims_around_the_equals_sign():
    assert credentials.parse_extensions("logicalCluster = lkc-1\n\nidentityPoolId=pool 2\n") == (
        ("identityPoolId", "pool 2"),
        ("logicalCluster", "lkc-1"),
    )


# ---- the form: what each protocol and mechanism needs ----------------------------------------

BASE = {"name": "secured", "bootstrap_servers": "127.0.0.1:9093", "request_timeout_s": "3"}


def _form(files=None, instance=None, **data) -> ClusterForm:
    return ClusterForm({**BASE, **data}, files or {}, instance=instance)


@pytest.mark.parametrize(
    ("data", "errors"),
    [
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER"},
         {"oauth_token_endpoint", "oauth_client_id", "oauth_client_secret"}),
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI"}, {"kerberos_principal", "kerberos_keytab"}),
        ({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512"},
         {"sasl_username", "sasl_password"}),
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER", "oauth_client_id": "c",
          "oauth_client_secret": "s", "oauth_token_endpoint": "http://idp.example.com/token"},
         {"oauth_token_endpoint"}),
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI", "kerberos_principal": "bad principal@X"},
         {"kerberos_principal", "kerberos_keytab"}),
        ({"security_protocol": "PLAINTEXT", "oauth_client_secret": "s"}, {"oauth_client_secret"}),
        ({"security_protocol": "PLAINTEXT", "ca_certificate": "-----BEGIN CERTIFICATE-----\nx\n"
                                                              "-----END CERTIFICATE-----"}, {"ca_certificate"}),
        ({"security_protocol": "SSL", "tls_min_version": "TLSv1.0"}, {"tls_min_version"}),
        ({"security_protocol": "SSL", "oauth_extensions": "auth=x"}, {"oauth_extensions"}),
        ({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI", "kerberos_principal": "c@X",
          "kerberos_krb5_conf": "#" * 70000}, {"kerberos_krb5_conf", "kerberos_keytab"}),
    ],
)  # fmt: skip
def test_it_says_which_settings_each_protocol_and_mechanism_needs(data, errors):
    form = _form(**data)
    assert not form.is_valid()
    assert set(form.errors) == errors, form.errors


def test_it_accepts_every_secured_kind(pki):
    loopback = "http://127.0.0.1:8080/token"
    oauth = _form(
        security_protocol="SASL_SSL",
        sasl_mechanism="OAUTHBEARER",
        oauth_token_endpoint=loopback,
        oauth_client_id="console",
        oauth_client_secret="s",
        oauth_extensions="logicalCluster=lkc-1",
    )
    assert oauth.is_valid(), oauth.errors
    assert oauth.secrets["oauth_client_secret"] == "s"
    kerberos = _form(
        {"kerberos_keytab": SimpleUploadedFile("k", KEYTAB)},
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="GSSAPI",
        kerberos_principal="console@EXAMPLE.ORG",
    )
    assert kerberos.is_valid(), kerberos.errors
    assert kerberos.cleaned_data["kerberos_service_name"] == "kafka"
    assert base64.b64decode(kerberos.secrets["kerberos_keytab"]) == KEYTAB
    p12 = _p12(pki["cert"], pki["key"], SECRETS["p12"], cas=(pki["ca"].cert_pem,))
    mtls = _form(
        {"client_pkcs12": SimpleUploadedFile("c.p12", p12)},
        security_protocol="SSL",
        client_pkcs12_password=SECRETS["p12"],
        tls_min_version="TLSv1.3",
    )
    assert mtls.is_valid(), mtls.errors
    assert mtls.values()["client_certificate"] == pki["cert"]
    assert (
        mtls.values()["ca_certificate"] == pki["ca"].cert_pem.strip()
    )  # an empty bundle takes the file's CA
    assert "PRIVATE KEY" in mtls.secrets["client_key"] and "client_key" not in mtls.values()
    wrong = _form(
        {"client_pkcs12": SimpleUploadedFile("c.p12", p12)},
        security_protocol="SSL",
        client_pkcs12_password="nope",
    )
    assert not wrong.is_valid() and "wrong password" in str(wrong.errors["client_pkcs12"])
    mismatch = _form(security_protocol="SSL", client_certificate=pki["cert"], client_key=pki["other_key"])
    assert not mismatch.is_valid() and "does not belong" in str(mismatch.errors["client_key"])
    no_key = _form(security_protocol="SSL", client_certificate=pki["cert"])
    assert not no_key.is_valid() and set(no_key.errors) == {"client_key"}


# ---- secrets at rest, and never shown ---------------------------------------------------------


class Trap:
    """A TCP listener that counts connections and closes them: proves whether anything was sent there."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def traps():
    made = [Trap() for _ in range(2)]
    yield made
    for t in made:
        t.close()


def _everything_stored() -> str:
    """Every value of every row the registry and the audit trail keep, as one text."""
    rows = list(Cluster.objects.values()) + list(AuditEvent.objects.values())
    return repr(rows)


def _register_page(client, pki, trap, **extra):
    body = {
        **BASE,
        "name": "mtls-scram",
        "bootstrap_servers": trap.address,
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "console",
        "sasl_password": SECRETS["sasl_password"],
        "ca_certificate": pki["ca"].cert_pem,
        "ssl_check_hostname": "True",
        "tls_min_version": "TLSv1.2",
        "client_certificate": pki["cert"],
        "client_key": _encrypted(pki["key"], SECRETS["passphrase"]),
        "client_key_passphrase": SECRETS["passphrase"],
        "action": "save",
        **extra,
    }
    return client.post(reverse("cluster_new"), body)


def test_every_secret_is_encrypted_at_rest_and_never_in_a_page_audit_event_or_api_answer(
    client, personas, pki, traps
):
    client.force_login(personas["admin"])
    response = _register_page(client, pki, traps[0])
    assert response.status_code == 302, response.content.decode()[:3000]
    cluster = Cluster.objects.get(name="mtls-scram")
    key_body = pki["key"].splitlines()[1]
    assert cluster.sasl_password() == SECRETS["sasl_password"]
    assert cluster.secret("client_key").startswith("-----BEGIN PRIVATE KEY-----")
    assert cluster.client_certificate == pki["cert"] and cluster.ssl_check_hostname is True
    stored = _everything_stored()
    for secret in (SECRETS["sasl_password"], SECRETS["passphrase"], key_body, "PRIVATE KEY"):
        assert secret not in stored
    event = AuditEvent.objects.get(action="cluster.register")
    assert event.after["stored"] == ["sasl_password", "client_key"]
    assert event.after["client_certificate"]["subject"] == "CN=console"
    assert event.after["ca_certificates"][0]["subject"] == "CN=Registry Test CA"
    page = client.get(reverse("cluster_settings", kwargs={"name": cluster.name})).content.decode()
    assert "Stored (encrypted) - leave blank to keep it." in page
    for secret in (SECRETS["sasl_password"], SECRETS["passphrase"], key_body):
        assert secret not in page
    answer = client.get(reverse("api:cluster", kwargs={"name": cluster.name})).content.decode()
    assert '"client_key": true' in answer.replace('"client_key":true', '"client_key": true')
    for secret in (SECRETS["sasl_password"], SECRETS["passphrase"], key_body):
        assert secret not in answer


def test_the_keytab_and_the_client_secret_are_encrypted_at_rest(personas, traps):
    oauth = clusters.register_cluster(
        actor=personas["admin"],
        values={**BASE, "name": "oauth", "bootstrap_servers": traps[0].address, "security_protocol": "SASL_SSL",
                "sasl_mechanism": "OAUTHBEARER", "oauth_token_endpoint": "https://idp.example.org/token",
                "oauth_client_id": "console", "oauth_extensions": "logicalCluster=lkc-1"},
        secrets={"oauth_client_secret": SECRETS["oauth_client_secret"]},
    )  # fmt: skip
    kerberos = clusters.register_cluster(
        actor=personas["admin"],
        values={**BASE, "name": "krb", "bootstrap_servers": traps[0].address, "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "GSSAPI", "kerberos_principal": "console@EXAMPLE.ORG"},
        secrets={"kerberos_keytab": credentials.keytab_text(KEYTAB)},
    )  # fmt: skip
    assert oauth.secret("oauth_client_secret") == SECRETS["oauth_client_secret"]
    assert base64.b64decode(kerberos.secret("kerberos_keytab")) == KEYTAB
    stored = _everything_stored()
    assert SECRETS["oauth_client_secret"] not in stored and "KT5ECRET" not in stored
    assert base64.b64encode(KEYTAB).decode() not in stored
    connection = clusters.connection_for(Cluster.objects.get(name="oauth"))
    assert connection.oauth.client_secret == SECRETS["oauth_client_secret"]
    assert connection.oauth.extensions == (("logicalCluster", "lkc-1"),)
    assert clusters.connection_for(Cluster.objects.get(name="krb")).kerberos.keytab == KEYTAB


# ---- every stored secret goes only where it was saved for --------------------------------------


def _saved(personas, kind: str, trap: Trap, pki) -> Cluster:
    base = {**BASE, "name": kind, "bootstrap_servers": trap.address, "request_timeout_s": 2}
    if kind == "scram":
        values = {
            **base,
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_username": "console",
            "ca_certificate": pki["ca"].cert_pem,
            "client_certificate": pki["cert"],
        }
        secrets = {"sasl_password": SECRETS["sasl_password"], "client_key": pki["key"]}
    elif kind == "oauth":
        values = {
            **base,
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "OAUTHBEARER",
            "oauth_token_endpoint": "https://idp.example.org/token",
            "oauth_client_id": "console",
        }
        secrets = {"oauth_client_secret": SECRETS["oauth_client_secret"]}
    else:
        values = {
            **base,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "GSSAPI",
            "kerberos_principal": "console@EXAMPLE.ORG",
        }
        secrets = {"kerberos_keytab": credentials.keytab_text(KEYTAB)}
    return clusters.register_cluster(actor=personas["admin"], values=values, secrets=secrets)  # fmt: skip


def _values(cluster: Cluster) -> dict:
    return {f: getattr(cluster, f) for f in clusters.EDITABLE_FIELDS}


OTHER_CA = make_ca("Another CA").cert_pem
# Changing any of these settings drops the secret bound to them (it is never sent elsewhere).
TLS_SETTINGS = [
    ("bootstrap_servers", "TRAP", "bootstrap servers"),
    ("ca_certificate", OTHER_CA, "CA certificate"),
    ("ssl_check_hostname", False, "hostname verification"),
    ("tls_min_version", "TLSv1.3", "minimum TLS version"),
]
BOUND_SETTINGS = {
    ("scram", "sasl_password", "SASL password"): [
        *TLS_SETTINGS,
        ("security_protocol", "SASL_PLAINTEXT", "security protocol"),
        ("sasl_mechanism", "PLAIN", "SASL mechanism"),
    ],
    ("scram", "client_key", "client private key"): [
        *TLS_SETTINGS,
        ("client_certificate", "OTHER_CERT", "client certificate"),
    ],
    ("oauth", "oauth_client_secret", "OAuth client secret"): [
        *TLS_SETTINGS,
        ("oauth_token_endpoint", "TRAP_URL", "token endpoint"),
    ],
    ("kerberos", "kerberos_keytab", "Kerberos keytab"): [
        ("bootstrap_servers", "TRAP", "bootstrap servers"),
        ("kerberos_principal", "other@EXAMPLE.ORG", "Kerberos principal"),
        ("security_protocol", "SASL_SSL", "security protocol"),
        ("kerberos_krb5_conf", "[realms]\nX = {\n kdc = 10.0.0.9\n}", "krb5.conf"),
        ("kerberos_service_name", "other", "Kerberos service name"),
    ],
}
BINDINGS = [
    pytest.param(*secret, *setting, id=f"{secret[1]}-{setting[0]}")
    for secret, settings in BOUND_SETTINGS.items()
    for setting in settings
]


@pytest.mark.parametrize(("kind", "secret", "label", "field", "new", "field_label"), BINDINGS)
def test_a_stored_secret_is_never_sent_with_changed_settings(
    personas, pki, traps, kind, secret, label, field, new, field_label
):
    saved_at, elsewhere = traps
    cluster = _saved(personas, kind, saved_at, pki)
    new = (
        {
            "TRAP": elsewhere.address,
            "TRAP_URL": f"http://{elsewhere.address}/token",
            "OTHER_CERT": pki["other_cert"],
        }.get(new, new)
        if isinstance(new, str)
        else new
    )
    values = {**_values(cluster), field: new}
    before = _everything_stored()
    for verb in (clusters.test_settings, clusters.update_cluster):
        with pytest.raises(clusters.PasswordRequired) as refused:
            verb(actor=personas["admin"], cluster=cluster, values=values)
        assert secret in refused.value.secrets
        why = refused.value.secrets[secret]
        assert why.startswith(f"Enter the {label} again: the stored one is only sent with the saved settings")
        assert field_label in why
    assert (saved_at.connections, elsewhere.connections) == (0, 0)  # nothing was sent anywhere
    cluster.refresh_from_db()
    assert _values(cluster)[field] != new and cluster.has_secret(secret)
    refusal = AuditEvent.objects.filter(action="cluster.update", outcome="refused").get()
    assert label in refusal.params["reason"]
    assert (
        _everything_stored().count("Enter the") >= 1 and SECRETS["sasl_password"] not in _everything_stored()
    )
    assert len(before) < len(_everything_stored())  # only the refusal was added


def test_a_secret_typed_again_goes_to_the_changed_settings(personas, pki, traps):
    saved_at, elsewhere = traps
    cluster = _saved(personas, "scram", saved_at, pki)
    values = {**_values(cluster), "bootstrap_servers": elsewhere.address}
    report = clusters.test_settings(
        actor=personas["admin"], cluster=cluster, values=values,
        secrets={"sasl_password": "typed-again", "client_key": pki["key"]},
    )  # fmt: skip
    assert not report.ok and elsewhere.connections >= 1  # the test went to the new address
    event = AuditEvent.objects.filter(action="cluster.test").latest("pk")
    assert (event.params["entered"], event.params["from_store"]) == (["sasl_password", "client_key"], [])
    # unchanged settings use the stored secrets
    clusters.test_settings(actor=personas["admin"], cluster=cluster, values=_values(cluster))
    event = AuditEvent.objects.filter(action="cluster.test").latest("pk")
    assert (event.params["entered"], event.params["from_store"]) == ([], ["sasl_password", "client_key"])
    assert saved_at.connections >= 1


def test_the_page_names_each_secret_to_enter_again(client, personas, pki, traps):
    saved_at, elsewhere = traps
    cluster = _saved(personas, "scram", saved_at, pki)
    client.force_login(personas["admin"])
    body = {k: ("" if v is None else v) for k, v in _values(cluster).items()}
    body.update(bootstrap_servers=elsewhere.address, action="test")
    page = client.post(reverse("cluster_settings", kwargs={"name": cluster.name}), body).content.decode()
    assert "Enter the SASL password again" in page and "Enter the client private key again" in page
    assert (saved_at.connections, elsewhere.connections) == (0, 0)


# ---- hostname verification off: superusers only, audited, warned about ---------------------------


def test_only_a_superuser_may_turn_hostname_verification_off_and_it_is_audited_and_shown(
    client, personas, pki, traps
):
    cluster = _saved(personas, "scram", traps[0], pki)
    owner = personas["outsider"]
    RoleBinding.objects.create(cluster=cluster, user=owner, role=Role.ADMIN)
    values = {**_values(cluster), "ssl_check_hostname": False}
    typed = {"sasl_password": SECRETS["sasl_password"], "client_key": pki["key"]}
    with pytest.raises(PermissionDenied, match="Only a superuser may turn hostname verification off"):
        clusters.update_cluster(actor=owner, cluster=cluster, values=values, secrets=typed)
    cluster.refresh_from_db()
    assert cluster.ssl_check_hostname is True
    assert AuditEvent.objects.get(action="cluster.update", outcome="refused").actor_name == owner.username
    clusters.update_cluster(actor=personas["admin"], cluster=cluster, values=values, secrets=typed)
    cluster.refresh_from_db()
    assert cluster.ssl_check_hostname is False
    event = AuditEvent.objects.get(action="cluster.update", outcome="success")
    assert (event.before["ssl_check_hostname"], event.after["ssl_check_hostname"]) == (True, False)
    client.force_login(owner)
    for route in ("cluster_overview", "cluster_settings"):
        page = client.get(reverse(route, kwargs={"name": cluster.name})).content.decode()
        assert 'id="hostname-check-off"' in page and "Hostname verification is off." in page, route
    # the owner may edit other settings while it stays off
    clusters.update_cluster(actor=owner, cluster=cluster, values={**values, "description": "x"})


def test_the_cluster_page_warns_30_days_before_a_certificate_expires(client, personas, traps):
    ca = make_ca("Expiry CA", not_after=NOW + dt.timedelta(days=365))
    for days, name in ((10, "soon"), (60, "later")):
        cert, key = ca.issue("console", client=True, not_after=NOW + dt.timedelta(days=days))
        clusters.register_cluster(
            actor=personas["admin"],
            values={**BASE, "name": name, "bootstrap_servers": traps[0].address, "security_protocol": "SSL",
                    "ca_certificate": ca.cert_pem, "client_certificate": cert},
            secrets={"client_key": key},
        )  # fmt: skip
    client.force_login(personas["admin"])
    soon = client.get(reverse("cluster_overview", kwargs={"name": "soon"})).content.decode()
    later = client.get(reverse("cluster_overview", kwargs={"name": "later"})).content.decode()
    expiry = (NOW + dt.timedelta(days=10)).strftime("%Y-%m-%d")
    assert 'id="certificate-warning-1"' in soon and f"The client certificate expires on {expiry}" in soon
    assert 'id="certificate-warning-1"' not in later and 'id="certificates"' in later
    assert "CN=Expiry CA" in later  # the CA bundle's certificates are listed with their expiry


def test_gssapi_is_refused_where_the_kerberos_extra_is_missing(personas, monkeypatch):
    from console.clusters import actions as actions_module
    from console.forms import clusters as form_module

    monkeypatch.setattr(form_module, "kerberos_available", lambda: False)
    monkeypatch.setattr(actions_module, "kerberos_available", lambda: False)
    data = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "GSSAPI",
        "kerberos_principal": "c@EXAMPLE.ORG",
    }
    form = _form({"kerberos_keytab": SimpleUploadedFile("k", KEYTAB)}, **data)
    assert not form.is_valid() and 'install the "kerberos" extra' in " ".join(form.errors["sasl_mechanism"])
    with pytest.raises(ValidationError, match='install the "kerberos" extra'):
        clusters.register_cluster(actor=personas["admin"], values={**BASE, **data},
                                  secrets={"kerberos_keytab": credentials.keytab_text(KEYTAB)})  # fmt: skip
    assert not Cluster.objects.filter(name=BASE["name"]).exists()


def test_it_ignores_tls_settings_a_row_keeps_while_its_protocol_is_not_tls(pki):
    """A row that once used TLS keeps its CA, hostname choice and minimum version; with PLAINTEXT they
    are not part of the connection (ClusterConnection refuses them there, so every page would fail)."""
    cluster = Cluster(
        name="was-tls",
        bootstrap_servers="127.0.0.1:9092",
        security_protocol="PLAINTEXT",
        ca_certificate=pki["ca"].cert_pem,
        ssl_check_hostname=False,
        tls_min_version="TLSv1.3",
    )
    conn = clusters.connection_for(cluster)
    assert (conn.security_protocol, conn.ca_cert_pem, conn.ssl_check_hostname, conn.tls_min_version) == (
        "PLAINTEXT",
        None,
        True,
        "TLSv1.2",
    )
    cluster.security_protocol = "SSL"
    conn = clusters.connection_for(cluster)
    assert (conn.ca_cert_pem, conn.ssl_check_hostname, conn.tls_min_version) == (
        pki["ca"].cert_pem,
        False,
        "TLSv1.3",
    )
