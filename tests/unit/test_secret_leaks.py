"""Issue 31's secret grep: a whole registration + failure run through the three doors (pages, API, command
line) on secured sandboxes, with distinctive values for every secret (SASL password, private key, PEM and
PKCS#12 passphrases, PKCS#12 file, OAuth client secret, the access tokens the identity provider issued,
keytab), and then every log record, page and API body, command output, audit event, operation row,
registry row and notification body is searched for each value in any common encoding. None may be there.
"""

from __future__ import annotations

import base64
import io
import json
import secrets as random
import socketserver
import sqlite3
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from console.identity import tokens
from console.models import AuditEvent, Cluster, Operation
from console.models.notify import NotificationDelivery
from console.notify import actions as notify_actions
from console.notify import events, worker
from tests.leak_capture import Outputs, forms, leaks, logs_captured, serialized
from tests.secured_world import SCRAM_USER, encrypted_key_pem, make_pki, pkcs12_bytes, secured_sandboxes
from tests.sso.fixtures import oidc_provider  # noqa: F401 - fixture
from tests.unit.test_notify import Receiver

pytestmark = pytest.mark.django_db

TAG = random.token_hex(6)
SCRAM_PASSWORD = f"Leak-Scram-Pw-{TAG}"
WRONG_PASSWORD = f"Leak-Wrong-Pw-{TAG}"
KEY_PASSPHRASE = f"Leak-Key-Pass-{TAG}"
P12_PASSPHRASE = f"Leak-P12-Pass-{TAG}"
WRONG_P12_PASSPHRASE = f"Leak-Wrong-P12-{TAG}"
OAUTH_CLIENT = f"leak-client-{TAG}"
OAUTH_SECRET = f"Leak-OAuth-Secret-{TAG}"
WRONG_OAUTH_SECRET = f"Leak-Wrong-OAuth-{TAG}"
KEYTAB = b"\x05\x02" + f"KEYTAB-CANARY-{TAG}".encode() + random.token_bytes(48)
SECRET_FIELDS = ("sasl_password", "client_key", "client_key_passphrase", "oauth_client_secret")
KRB5_CONF = "[libdefaults]\n default_realm = LEAK.TEST\n[realms]\n LEAK.TEST = {\n  kdc = 127.0.0.1:1\n }\n"


@pytest.fixture(scope="module")
def world(oidc_provider):  # noqa: F811
    oidc_provider.manage("idp", "service", OAUTH_CLIENT, OAUTH_SECRET)
    with secured_sandboxes(oidc_provider, SCRAM_PASSWORD) as sandboxes:
        yield sandboxes


@pytest.fixture
def root(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password="pw-root")


def issued_tokens(provider) -> list[str]:
    """Every access token the identity provider issued to the leak test's client."""
    with sqlite3.connect(provider.env["IDP_DB"]) as db:
        rows = db.execute(
            "SELECT t.token FROM oauth2_provider_accesstoken t JOIN oauth2_provider_application a "
            "ON t.application_id = a.id WHERE a.client_id = ?",
            (OAUTH_CLIENT,),
        ).fetchall()
    return [r[0] for r in rows]


def kinds(world, provider) -> dict[str, dict]:
    """Registry settings by kind (secrets included), as the page's fields."""
    ca = world.pki.ca.cert_pem
    cert, key = world.pki.client
    return {
        "mtls": {
            "security_protocol": "SSL",
            "bootstrap_servers": world.bootstrap("mtls"),
            "ca_certificate": ca,
            "client_certificate": cert,
            "client_key": encrypted_key_pem(key, KEY_PASSPHRASE),
            "client_key_passphrase": KEY_PASSPHRASE,
        },
        "p12": {
            "security_protocol": "SSL",
            "bootstrap_servers": world.bootstrap("mtls"),
            "client_pkcs12_password": P12_PASSPHRASE,
        },
        "scram": {
            "security_protocol": "SASL_SSL",
            "bootstrap_servers": world.bootstrap("scram"),
            "ca_certificate": ca,
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_username": SCRAM_USER,
            "sasl_password": SCRAM_PASSWORD,
        },
        "oauth": {
            "security_protocol": "SASL_SSL",
            "bootstrap_servers": world.bootstrap("oauth"),
            "ca_certificate": ca,
            "sasl_mechanism": "OAUTHBEARER",
            "oauth_token_endpoint": provider.token_endpoint,
            "oauth_client_id": OAUTH_CLIENT,
            "oauth_client_secret": OAUTH_SECRET,
        },
        "krb": {
            "security_protocol": "SASL_SSL",
            "bootstrap_servers": world.bootstrap("scram"),
            "ca_certificate": ca,
            "sasl_mechanism": "GSSAPI",
            "kerberos_principal": "console@LEAK.TEST",
            "kerberos_krb5_conf": KRB5_CONF,
        },
    }


class Doors:
    """The three doors, each answer kept in the run's outputs."""

    def __init__(self, client, out: Outputs, api_secret: str, p12: bytes) -> None:
        self.client, self.out, self.api_secret, self.p12 = client, out, api_secret, p12

    def page(self, url: str, data: dict | None = None, files: dict | None = None):
        if data is None:
            resp = self.client.get(url)
        else:
            uploads = {k: SimpleUploadedFile(k, v) for k, v in (files or {}).items()}
            resp = self.client.post(url, {"request_timeout_s": "5", **data, **uploads})
        assert resp.status_code < 500, (url, resp.status_code)
        self.out.add(f"page:{url}", resp.content)
        return resp

    def api(self, name: str, kwargs: dict | None = None, body: dict | None = None):
        url = reverse(f"api:{name}", kwargs=kwargs)
        auth = {"HTTP_AUTHORIZATION": f"Bearer {self.api_secret}"}
        if body is None:
            resp = self.client.get(url, **auth)
        else:
            resp = self.client.post(url, json.dumps(body), content_type="application/json", **auth)
        assert resp.status_code < 500, (url, resp.status_code)
        self.out.add(f"api:{url}", resp.content)
        return resp

    def cli(self, *args: str) -> str:
        stdout, stderr = io.StringIO(), io.StringIO()
        try:
            call_command(*args, stdout=stdout, stderr=stderr)
        except CommandError as exc:
            stderr.write(f"CommandError({exc.returncode}): {exc}")
        text = stdout.getvalue() + stderr.getvalue()
        self.out.add(f"cli:{' '.join(args[:3])}", text)
        return text


def _page_run(doors: Doors, settings_by_kind: dict, world) -> None:
    p12 = {"client_pkcs12": doors.p12}
    keytab = {"kerberos_keytab": KEYTAB}
    files = {"p12": p12, "krb": keytab}
    for kind, fields in settings_by_kind.items():
        data = {"name": f"page-{kind}", **fields}
        tested = doors.page("/clusters/new/", {**data, "action": "test"}, files.get(kind))
        if kind != "krb":
            assert b"<strong>Connected</strong>" in tested.content, (kind, tested.content[-3000:])
        saved = doors.page("/clusters/new/", {**data, "action": "save"}, files.get(kind))
        assert saved.status_code == 302, (kind, saved.content[-3000:])
    plain_key = {**settings_by_kind["mtls"], "client_key": world.pki.client[1], "client_key_passphrase": ""}
    tested = doors.page("/clusters/new/", {**plain_key, "name": "page-plain-key", "action": "test"})
    assert b"<strong>Connected</strong>" in tested.content  # an unencrypted PEM key, tested, not saved
    bad = {  # the real secrets where they fail, and the wrong ones
        "scram": {"sasl_password": WRONG_PASSWORD},
        "oauth": {"oauth_client_secret": WRONG_OAUTH_SECRET},
        "mtls": {"bootstrap_servers": world.bootstrap("elsewhere")},
        "p12": {"client_pkcs12_password": WRONG_P12_PASSPHRASE},
    }
    for kind, change in bad.items():
        data = {**settings_by_kind[kind], **change, "name": f"page-bad-{kind}", "action": "test"}
        failed = doors.page("/clusters/new/", data, files.get(kind))
        assert b"<strong>Connected</strong>" not in failed.content
    for kind in settings_by_kind:
        name = f"page-{kind}"
        for url in (f"/c/{name}/", f"/c/{name}/settings/", f"/c/{name}/topics/", "/clusters/"):
            doors.page(url)
        doors.page(f"/c/{name}/test/", {})
    # A changed address without the secrets: refused, nothing changes.
    saved = Cluster.objects.get(name="page-scram")
    moved = {
        **{k: v for k, v in settings_by_kind["scram"].items() if k != "sasl_password"},
        "name": "page-scram",
        "bootstrap_servers": world.bootstrap("ssl"),
        "action": "save",
    }
    refused = doors.page("/c/page-scram/settings/", moved)
    assert refused.status_code == 200 and b"has-error" in refused.content
    assert Cluster.objects.get(name="page-scram").bootstrap_servers == saved.bootstrap_servers
    _moved_without_secrets(doors, settings_by_kind)


class Sink:
    """A listener that keeps every byte a client sends it (a "new address" the secrets must never reach)."""

    def __init__(self) -> None:
        self.received = bytearray()
        sink = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.settimeout(2)
                try:
                    while chunk := self.request.recv(65536):
                        sink.received.extend(chunk)
                except OSError:
                    pass

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _moved_without_secrets(doors: Doors, settings_by_kind: dict) -> None:
    """Test connection and save with a new address, token endpoint or TLS settings and no secret typed:
    the stored secrets must reach neither the new listener nor the new token endpoint."""
    sink = Sink()
    try:
        with Receiver() as rx:
            moves = {
                "scram": {"bootstrap_servers": sink.address},
                "mtls": {"bootstrap_servers": sink.address},
                "oauth": {"oauth_token_endpoint": rx.url + "/o/token/"},
            }
            for kind, change in moves.items():
                kept = {k: v for k, v in settings_by_kind[kind].items() if k not in SECRET_FIELDS}
                for action in ("test", "save"):
                    answer = doors.page(f"/c/page-{kind}/settings/", {**kept, **change, "name": f"page-{kind}",
                                                                      "action": action})  # fmt: skip
                    assert answer.status_code == 200 and b"has-error" in answer.content, (kind, action)
            doors.out.add("egress:token endpoint", b"".join(r["body"] for r in rx.received))
            doors.out.add("egress:token endpoint headers", json.dumps([r["headers"] for r in rx.received]))
    finally:
        sink.close()
    doors.out.add("egress:new address", bytes(sink.received).decode("latin-1"))


def _api_run(doors: Doors, settings_by_kind: dict, world) -> None:
    bodies = {
        "scram": settings_by_kind["scram"],
        "oauth": settings_by_kind["oauth"],
        "p12": {
            **settings_by_kind["p12"],
            "client_pkcs12_base64": base64.b64encode(doors.p12).decode(),
        },
        "krb": {**settings_by_kind["krb"], "kerberos_keytab_base64": base64.b64encode(KEYTAB).decode()},
        "mtls": {**settings_by_kind["mtls"]},
    }
    for kind, body in bodies.items():
        tested = doors.api(
            "clusters", body={"name": f"api-{kind}", "request_timeout_s": 5, **body, "test_only": True}
        )
        assert tested.status_code == 200 and tested.json()["ok"] is (kind != "krb"), (kind, tested.content)
        made = doors.api("clusters", body={"name": f"api-{kind}", "request_timeout_s": 5, **body})
        assert made.status_code == 201, (kind, made.content)
    for kind, change in (
        ("scram", {"sasl_password": WRONG_PASSWORD}),
        ("oauth", {"oauth_client_secret": WRONG_OAUTH_SECRET}),
    ):
        failed = doors.api(
            "clusters", body={"name": f"api-bad-{kind}", **bodies[kind], **change, "test_only": True}
        )
        assert failed.status_code == 200 and failed.json()["ok"] is False, failed.content
    wrong = {**bodies["p12"], "client_pkcs12_password": WRONG_P12_PASSPHRASE}
    assert doors.api("clusters", body={"name": "api-bad-p12", **wrong}).status_code == 400
    doors.api("clusters")
    for kind in bodies:
        doors.api("cluster", {"name": f"api-{kind}"})
        doors.api("cluster-test", {"name": f"api-{kind}"}, body={})
    moved = doors.api(
        "cluster-settings", {"name": "api-oauth"}, body={"bootstrap_servers": world.bootstrap("ssl")}
    )
    assert moved.status_code in (400, 403, 422), moved.content
    wrong_secret = doors.api(
        "cluster-settings",
        {"name": "api-scram"},
        body={"bootstrap_servers": world.bootstrap("ssl"), "sasl_password": WRONG_PASSWORD},
    )
    assert wrong_secret.status_code < 500


def _cli_run(doors: Doors, settings_by_kind: dict, world, tmp_path, monkeypatch, provider) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text(world.pki.ca.cert_pem)
    key = tmp_path / "client.key"
    key.write_text(settings_by_kind["mtls"]["client_key"])
    cert = tmp_path / "client.pem"
    cert.write_text(world.pki.client[0])
    p12 = tmp_path / "client.p12"
    p12.write_bytes(doors.p12)
    keytab = tmp_path / "console.keytab"
    keytab.write_bytes(KEYTAB)
    krb5 = tmp_path / "krb5.conf"
    krb5.write_text(KRB5_CONF)
    for var, value in (
        ("LEAK_PW", SCRAM_PASSWORD),
        ("LEAK_WRONG_PW", WRONG_PASSWORD),
        ("LEAK_KEY_PASS", KEY_PASSPHRASE),
        ("LEAK_P12_PASS", P12_PASSPHRASE),
        ("LEAK_OAUTH", OAUTH_SECRET),
        ("LEAK_WRONG_OAUTH", WRONG_OAUTH_SECRET),
    ):
        monkeypatch.setenv(var, value)
    tls = ["--ca-file", str(ca)]
    scram = [
        "--security-protocol",
        "SASL_SSL",
        "--sasl-mechanism",
        "SCRAM-SHA-512",
        "--sasl-username",
        SCRAM_USER,
    ]
    oauth = ["--security-protocol", "SASL_SSL", "--sasl-mechanism", "OAUTHBEARER"]
    oauth += ["--oauth-token-endpoint", provider.token_endpoint, "--oauth-client-id", OAUTH_CLIENT]
    registrations = {
        "cli-scram": ["--bootstrap-servers", world.bootstrap("scram"), *tls, *scram, "--sasl-password-env", "LEAK_PW"],
        "cli-mtls": ["--bootstrap-servers", world.bootstrap("mtls"), "--security-protocol", "SSL", *tls,
                     "--client-cert-file", str(cert), "--client-key-file", str(key),
                     "--client-key-passphrase-env", "LEAK_KEY_PASS"],
        "cli-p12": ["--bootstrap-servers", world.bootstrap("mtls"), "--security-protocol", "SSL",
                    "--pkcs12-file", str(p12), "--pkcs12-password-env", "LEAK_P12_PASS"],
        "cli-oauth": ["--bootstrap-servers", world.bootstrap("oauth"), *tls, *oauth,
                      "--oauth-client-secret-env", "LEAK_OAUTH"],
        "cli-krb": ["--bootstrap-servers", world.bootstrap("scram"), *tls, "--security-protocol", "SASL_SSL",
                    "--sasl-mechanism", "GSSAPI", "--kerberos-principal", "console@LEAK.TEST",
                    "--keytab-file", str(keytab), "--krb5-conf-file", str(krb5)],
    }  # fmt: skip
    for name, options in registrations.items():
        said = doors.cli("kafka", "cluster", "register", name, "--as", "root", *options)
        assert f"Registered cluster '{name}'" in said, said
        doors.cli("kafka", "cluster", "test", "--cluster", name, "--as", "root")
        doors.cli("kafka", "cluster", "describe", "--cluster", name)
    doors.cli(
        "kafka",
        "cluster",
        "test",
        "--cluster",
        "cli-scram",
        "--as",
        "root",
        "--sasl-password-env",
        "LEAK_WRONG_PW",
    )
    doors.cli(
        "kafka",
        "cluster",
        "test",
        "--cluster",
        "cli-oauth",
        "--as",
        "root",
        "--oauth-client-secret-env",
        "LEAK_WRONG_OAUTH",
    )
    refused = doors.cli("kafka", "cluster", "update", "--cluster", "cli-oauth", "--as", "root",
                        "--bootstrap-servers", world.bootstrap("ssl"))  # fmt: skip
    assert "CommandError(4)" in refused, refused
    doors.cli("register_cluster", "--name", "rc-oauth", "--as", "root", "--bootstrap-servers", world.bootstrap("oauth"),
              *tls, *oauth, "--oauth-client-secret-env", "LEAK_OAUTH")  # fmt: skip


def _notifications(root, out: Outputs, run_operation) -> int:
    """A webhook on every registered cluster, a test message and a health check on each, delivered."""
    from console.clusters.worker import start_health_check

    with Receiver() as rx:
        for cluster in Cluster.objects.all():
            channel, _ = notify_actions.create_channel(
                actor=root,
                cluster=cluster,
                name="hook",
                kind="webhook",
                url=rx.url,
                events=list(events.SUBSCRIBABLE),
            )
            notify_actions.send_test(actor=root, cluster=cluster, channel_id=channel.pk)
            op = start_health_check(actor=root, cluster=cluster)
            run_operation(op.pk)
        for delivery in NotificationDelivery.objects.all():
            worker.deliver(delivery.pk, worker="leaks")
    for got in rx.received:
        out.add("notification:body", got["body"])
        out.add("notification:headers", json.dumps(got["headers"]))
    out.add("notification:rows", serialized(NotificationDelivery.objects.all()))
    return len(rx.received)


def test_it_never_shows_a_secret_in_logs_pages_api_cli_audit_or_notifications(
    client,
    root,
    world,
    oidc_provider,  # noqa: F811
    settings,
    capfd,
    tmp_path,
    monkeypatch,
    run_operation,  # noqa: F811
):
    settings.NOTIFY_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.NOTIFY_TIMEOUT_S = 5
    client.force_login(root)
    out = Outputs()
    p12 = pkcs12_bytes(*world.pki.client, P12_PASSPHRASE, world.pki.ca.cert_pem)
    doors = Doors(
        client, out, tokens.create_token(actor=root, name="leaks", scope="write", days=1).secret, p12
    )
    settings_by_kind = kinds(world, oidc_provider)
    with logs_captured(out):
        _page_run(doors, settings_by_kind, world)
        _api_run(doors, settings_by_kind, world)
        _cli_run(doors, settings_by_kind, world, tmp_path, monkeypatch, oidc_provider)
        sent = _notifications(root, out, run_operation)
    captured = capfd.readouterr()
    out.add("stdout", captured.out)
    out.add("stderr", captured.err)
    out.add("audit", serialized(AuditEvent.objects.all()))
    out.add("operations", serialized(Operation.objects.all()))
    out.add("registry", serialized(Cluster.objects.all()))

    access_tokens = issued_tokens(oidc_provider)
    assert access_tokens, "the console never fetched a token: the OAUTHBEARER path did not run"
    assert sent >= Cluster.objects.count() and Cluster.objects.count() == 16
    assert {"log", "page", "api", "cli", "notification", "audit", "egress"} <= out.labels()
    assert AuditEvent.objects.filter(action="cluster.test", outcome="failure").count() >= 5
    secret_values = {
        "SASL password": SCRAM_PASSWORD,
        "wrong SASL password": WRONG_PASSWORD,
        "client private key": world.pki.client[1],
        "encrypted private key": settings_by_kind["mtls"]["client_key"],
        "PEM key passphrase": KEY_PASSPHRASE,
        "PKCS#12 passphrase": P12_PASSPHRASE,
        "wrong PKCS#12 passphrase": WRONG_P12_PASSPHRASE,
        "PKCS#12 file": base64.b64encode(p12).decode(),
        "OAuth client secret": OAUTH_SECRET,
        "OAuth basic credentials": f"{OAUTH_CLIENT}:{OAUTH_SECRET}",
        "wrong OAuth client secret": WRONG_OAUTH_SECRET,
        "keytab": base64.b64encode(KEYTAB).decode(),
        "keytab canary": f"KEYTAB-CANARY-{TAG}",
        **{f"access token {i}": token for i, token in enumerate(access_tokens)},
    }
    found = leaks(out, secret_values)
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "encode",
    [
        lambda v: v,
        lambda v: base64.b64encode(v.encode()).decode(),
        lambda v: base64.urlsafe_b64encode(v.encode()).decode().rstrip("="),
        lambda v: __import__("urllib.parse").parse.quote_plus(v),
        lambda v: json.dumps({"password": v}),
    ],
    ids=["as-is", "base64", "urlsafe-base64", "url-encoded", "json"],
)
def test_it_finds_a_secret_planted_in_an_output_in_any_common_form(encode):
    secret = f"Planted/Secret+{TAG}=&x"
    out = Outputs()
    out.add("page:/c/x/", "<html>nothing here</html>")
    out.add("log:console", f"connecting with {encode(secret)} to the cluster")
    (found,) = leaks(out, {"planted": secret})
    assert found.startswith("planted (") and ") in log:console, after: " in found
    assert leaks(out, {"other": "Not-In-Any-Output-123"}) == []


def test_it_finds_one_line_of_a_private_key_in_an_output():
    key = make_pki().client[1]
    line = key.splitlines()[2]
    out = Outputs()
    out.add("notification:body", json.dumps({"text": f"bad key near {line}"}))
    assert leaks(out, {"client private key": key}) != []
    assert line in forms(key)
