"""Where notifications may go: webhook and Slack URLs only to public addresses (checked when a channel is
saved and again, on the address actually connected to, when it is sent), answers never recorded; e-mail
only to the allowed domains."""

from __future__ import annotations

import ipaddress
import json
import logging
import socket

import pytest
from django.core import mail
from django.urls import reverse

from console.models import AuditEvent
from console.models.notify import DeliveryState, NotificationChannel
from console.notify import actions, core, events, worker
from tests.conftest import make_personas
from tests.unit.test_notify import QUEUED, Receiver, _emit, _notify_queue  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db

INTERNAL_URLS = [
    "http://127.0.0.1:8080/hook",
    "http://localhost/hook",
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://[fd00:ec2::254]/latest/meta-data/",  # cloud metadata over IPv6 (fc00::/7)
    "http://[::1]:9/",
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped
    "http://[::ffff:a9fe:a9fe]/",  # 169.254.169.254, mapped and written in hex
    "http://0.0.0.0:22/",
    "http://[::]/",
    "http://2130706433/",  # 127.0.0.1 as one number
    "http://0x7f.1/",  # 127.0.0.1 in hex shorthand
    "http://10.0.0.5/",
    "http://172.16.3.4/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",  # shared address space (CG-NAT)
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://240.0.0.1/",
    "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
    "http://[2002:7f00:1::1]/",  # 6to4 of 127.0.0.1
]


@pytest.fixture
def people(offline_cluster):
    return make_personas(offline_cluster)


@pytest.fixture
def closed(settings):
    """The default: no internal network allowed."""
    settings.NOTIFY_ALLOWED_NETWORKS = []


@pytest.fixture
def dns(monkeypatch):
    """Names the tests resolve themselves (every other name and address goes to the real resolver);
    ``calls`` counts the look-ups of those names, to show a send resolves once and connects to that."""
    real = socket.getaddrinfo
    table: dict[str, list[list[str]]] = {}
    calls: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        if isinstance(host, str) and host in table:
            calls.append(host)
            answers = table[host]
            addresses = answers.pop(0) if len(answers) > 1 else answers[0]
            out = []
            for a in addresses:
                if ipaddress.ip_address(a).version == 6:
                    out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, int(port or 0), 0, 0)))
                else:
                    out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, int(port or 0))))
            return out
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table, calls


def _deliver_to_each(people, cluster, names, url: str, capture) -> dict:
    """A Slack channel per host name (``url`` with ``{name}`` filled in), one event emitted, and every
    delivery it queued made once: {channel name: delivery}."""
    for name in names:
        actions.create_channel(
            actor=people["admin"], cluster=cluster, name=name, kind="slack",
            events=[events.REQUEST_SUBMITTED], url=url.format(name=name),
        )  # fmt: skip
    _emit(cluster, django_capture_on_commit_callbacks=capture)
    queued = [i for i, _ in QUEUED]  # taken first: a failed attempt queues its retry
    return {d.channel.name: d for d in [worker.deliver(i, worker="w") for i in queued]}


@pytest.mark.parametrize("url", INTERNAL_URLS)
def test_it_refuses_to_save_a_channel_pointing_at_an_internal_address(people, offline_cluster, closed, url):
    with pytest.raises(actions.ChannelInvalid, match="not allowed") as refused:
        actions.create_channel(
            actor=people["admin"], cluster=offline_cluster, name="n", kind="webhook",
            events=[events.REQUEST_SUBMITTED], url=url,
        )  # fmt: skip
    assert "NOTIFY_ALLOWED_NETWORKS" in str(refused.value)
    assert not NotificationChannel.objects.exists()
    event = AuditEvent.objects.get(action="notify.channel.create")
    assert event.outcome == "refused" and "not allowed" in event.params["reason"]


def test_it_refuses_a_name_that_resolves_to_an_internal_address_when_saved_and_when_changed(
    people, offline_cluster, closed, dns
):
    table, _ = dns
    table["hooks.public.test"] = [["93.184.215.14"]]
    table["metadata.evil.test"] = [["93.184.215.14", "169.254.169.254"]]  # one bad record is enough
    channel, _ = actions.create_channel(
        actor=people["admin"], cluster=offline_cluster, name="ok", kind="slack", events=[],
        url="https://hooks.public.test/services/T0",
    )  # fmt: skip
    with pytest.raises(actions.ChannelInvalid, match=r"metadata\.evil\.test .*link-local.* not allowed"):
        actions.update_channel(
            actor=people["admin"], cluster=offline_cluster, channel_id=channel.pk, name="ok",
            events=[], enabled=True, url="http://metadata.evil.test/latest/",
        )  # fmt: skip
    assert NotificationChannel.objects.get().url_hint == "https://hooks.public.test/…"
    # A name that does not resolve (yet) is saved: the send decides, on what it resolves to then.
    actions.create_channel(
        actor=people["admin"], cluster=offline_cluster, name="later", kind="slack", events=[],
        url="https://not-yet.invalid/hook",
    )  # fmt: skip


def test_the_page_and_the_api_say_why_an_internal_url_is_refused(people, offline_cluster, closed, client):
    from rest_framework.test import APIClient

    from console.identity import tokens

    client.force_login(people["admin"])
    page = client.post(
        reverse("notify_channels", kwargs={"name": offline_cluster.name}),
        {"name": "meta", "kind": "webhook", "url": "http://169.254.169.254/latest/", "events": []},
    )
    assert page.status_code == 200 and "link-local" in page.content.decode()
    secret = tokens.create_token(actor=people["admin"], name="t", scope="write", days=1).secret
    api = APIClient()
    answer = api.post(
        reverse("api:notifications", kwargs={"name": offline_cluster.name}),
        {"name": "meta", "kind": "slack", "url": "http://[::ffff:127.0.0.1]:8080/"},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert answer.status_code == 422, answer.content
    assert "loopback" in json.dumps(answer.json()) and not NotificationChannel.objects.exists()


def _refused_later(people, cluster, settings, url: str) -> int:
    """A channel saved while its address was allowed, then the operator takes the allowance back."""
    settings.NOTIFY_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    channel, _ = actions.create_channel(
        actor=people["admin"], cluster=cluster, name=url[-12:], kind="webhook",
        events=[events.REQUEST_SUBMITTED], url=url,
    )  # fmt: skip
    settings.NOTIFY_ALLOWED_NETWORKS = []
    return channel.pk


def test_a_send_to_a_refused_address_never_connects_and_an_open_port_reads_like_a_closed_one(
    people, offline_cluster, settings, django_capture_on_commit_callbacks
):
    with Receiver() as rx:
        _refused_later(people, offline_cluster, settings, rx.url + "/open")
        _refused_later(people, offline_cluster, settings, "http://127.0.0.1:1/closed")
        _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
        results = [worker.deliver(d, worker="w") for d in [d for d, _ in QUEUED]]
    assert rx.received == []
    assert [(d.state, d.last_status) for d in results] == [(DeliveryState.PENDING, None)] * 2
    assert results[0].last_error == results[1].last_error
    assert results[0].last_error.startswith("address not allowed (loopback)")


def test_a_send_resolves_once_and_connects_to_the_address_it_checked(
    people, offline_cluster, settings, dns, django_capture_on_commit_callbacks
):
    table, calls = dns
    with Receiver() as rx:
        port = rx.server.server_address[1]
        # The name resolves to the allowed receiver when checked; any second look-up (a re-resolution by
        # the HTTP client: DNS rebinding) would get 127.0.0.2, which is not allowed and not listening.
        table["hooks.rebind.test"] = [["127.0.0.1"], ["127.0.0.2"]]
        _, secret = actions.create_channel(
            actor=people["admin"], cluster=offline_cluster, name="pinned", kind="webhook",
            events=[events.REQUEST_SUBMITTED], url=f"http://hooks.rebind.test:{port}/in?token=k",
        )  # fmt: skip
        table["hooks.rebind.test"] = [["127.0.0.1"], ["127.0.0.2"]]
        calls.clear()
        _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
        d = worker.deliver(QUEUED[0][0], worker="w")
    assert (d.state, d.last_status, d.last_error) == (DeliveryState.DELIVERED, 200, "")
    assert calls == ["hooks.rebind.test"]
    (got,) = rx.received
    assert got["headers"]["Host"] == f"hooks.rebind.test:{port}" and got["path"] == "/in?token=k"
    assert core.verify_signature(secret, got["headers"][core.SIGNATURE_HEADER], got["body"], now=_now()).ok


def _now() -> float:
    import time

    return time.time()


def test_a_receivers_answer_is_never_recorded_or_logged(
    people, offline_cluster, settings, caplog, django_capture_on_commit_callbacks
):
    leak = b"root:x:0:0:root:/root:/bin/bash INTERNAL-ANSWER"
    caplog.set_level(logging.DEBUG)
    with Receiver(statuses=[500, 404], body=leak) as rx:
        channel, _ = actions.create_channel(
            actor=people["admin"], cluster=offline_cluster, name="h", kind="webhook",
            events=[events.REQUEST_SUBMITTED], url=rx.url + "/x",
        )  # fmt: skip
        _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
        first = worker.deliver(QUEUED[0][0], worker="w")
        test = actions.send_test(actor=people["admin"], cluster=offline_cluster, channel_id=channel.pk)
        settings.NOTIFY_MAX_ATTEMPTS = 1
        tested = worker.deliver(test.pk, worker="w")
    assert (first.last_status, first.last_error) == (500, "HTTP 500")
    assert (tested.state, tested.last_status, tested.last_error) == (DeliveryState.FAILED, 404, "HTTP 404")
    outcome = AuditEvent.objects.filter(action="notify.channel.test").latest("id")
    assert (outcome.outcome, outcome.params["error"], outcome.params["http_status"]) == (
        "failure",
        "HTTP 404",
        404,
    )
    assert "INTERNAL-ANSWER" not in caplog.text and "root:x" not in caplog.text


def test_an_unreachable_allowed_address_is_one_generic_error(
    people, offline_cluster, django_capture_on_commit_callbacks
):
    actions.create_channel(
        actor=people["admin"], cluster=offline_cluster, name="gone", kind="slack",
        events=[events.REQUEST_SUBMITTED], url="http://127.0.0.1:1/services/SECRETTOKEN",
    )  # fmt: skip
    _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    d = worker.deliver(QUEUED[0][0], worker="w")
    assert (d.state, d.last_status, d.last_error) == (
        DeliveryState.PENDING,
        None,
        "connection failed (refused, reset or timed out)",
    )


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "169.254.169.254", "fd00:ec2::254", "::1", "::ffff:127.0.0.1", "::ffff:a9fe:a9fe",
        "0.0.0.0", "::", "10.0.0.5", "172.16.3.4", "192.168.1.1", "100.64.0.1", "fe80::1", "224.0.0.1",
        "ff02::1", "240.0.0.1", "255.255.255.255", "64:ff9b::7f00:1", "2002:7f00:1::1", "192.0.0.8",
        "192.88.99.1", "::127.0.0.1", "2001:db8::1", "3fff::1", "fec0::1", "198.18.0.1", "2001::1",
    ],
)  # fmt: skip
def test_every_special_purpose_address_is_refused(address):
    assert core.address_refusal(ipaddress.ip_address(address), ()) != ""


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_a_public_unicast_address_is_allowed(address):
    assert core.address_refusal(ipaddress.ip_address(address), ()) == ""


def test_the_allow_list_permits_exactly_the_networks_it_names():
    allowed = core.parse_networks(["127.0.0.1/32", "10.20.0.0/16", "fd12::/16"])
    for ok in ("127.0.0.1", "::ffff:127.0.0.1", "10.20.3.4", "fd12::5"):
        assert core.address_refusal(ipaddress.ip_address(ok), allowed) == "", ok
    for refused in ("127.0.0.2", "10.21.0.1", "169.254.169.254", "fd13::1"):
        assert core.address_refusal(ipaddress.ip_address(refused), allowed) != "", refused
    with pytest.raises(ValueError, match="not-a-network"):
        core.parse_networks(["not-a-network"])


# E-mail: only to the allowed domains.


def test_an_email_channel_is_refused_unless_every_recipient_is_in_an_allowed_domain(
    people, offline_cluster, settings
):
    settings.NOTIFY_EMAIL_DOMAINS = []
    with pytest.raises(actions.ChannelInvalid, match="NOTIFY_EMAIL_DOMAINS"):
        actions.create_channel(
            actor=people["admin"], cluster=offline_cluster, name="m", kind="email", events=[],
            recipients=["ops@example.com"],
        )  # fmt: skip
    settings.NOTIFY_EMAIL_DOMAINS = ["example.com", ".corp.example"]
    with pytest.raises(actions.ChannelInvalid, match=r"'x@evil\.test'.*not in an allowed domain"):
        actions.create_channel(
            actor=people["admin"], cluster=offline_cluster, name="m", kind="email", events=[],
            recipients=["ops@example.com", "x@evil.test"],
        )  # fmt: skip
    with pytest.raises(actions.ChannelInvalid, match="not in an allowed domain"):
        actions.create_channel(
            actor=people["admin"], cluster=offline_cluster, name="m", kind="email", events=[],
            recipients=["x@mail.example.com"],  # example.com names that domain only
        )  # fmt: skip
    channel, _ = actions.create_channel(
        actor=people["admin"], cluster=offline_cluster, name="m", kind="email", events=[],
        recipients=["Ops@EXAMPLE.com", "a@corp.example", "b@eu.corp.example"],
    )  # fmt: skip
    assert sorted(channel.recipients) == ["Ops@EXAMPLE.com", "a@corp.example", "b@eu.corp.example"]
    refused = AuditEvent.objects.filter(action="notify.channel.create", outcome="refused")
    assert refused.count() == 3


def test_a_send_to_a_domain_no_longer_allowed_sends_nothing(
    people, offline_cluster, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NOTIFY_EMAIL_DOMAINS = ["example.com", "other.org"]
    actions.create_channel(
        actor=people["admin"], cluster=offline_cluster, name="m", kind="email",
        events=[events.REQUEST_SUBMITTED], recipients=["ops@example.com", "x@other.org"],
    )  # fmt: skip
    settings.NOTIFY_EMAIL_DOMAINS = ["example.com"]
    _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    d = worker.deliver(QUEUED[0][0], worker="w")
    assert mail.outbox == []
    assert (d.state, d.last_status) == (DeliveryState.PENDING, None)
    assert d.last_error == "recipient domain not allowed (NOTIFY_EMAIL_DOMAINS): x@other.org"


def _certificate(tmp_path, name: str) -> tuple[str, str, str]:
    """A CA and a server certificate for name, signed by it (files: ca, cert, key)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def build(subject, issuer, key, signer, *, ca: bool, san: str | None = None):
        b = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            b = b.add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
            )
        if san:
            b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName(san)]), critical=False)
        return b.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = build("test CA", "test CA", ca_key, ca_key, ca=True)
    cert = build(name, "test CA", key, ca_key, ca=False, san=name)
    paths = [tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"]
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return tuple(str(p) for p in paths)  # type: ignore[return-value]


def test_https_to_a_pinned_address_keeps_the_name_for_sni_and_the_certificate_check(
    people, offline_cluster, dns, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    import ssl

    from console.notify import egress

    ca, cert, key = _certificate(tmp_path, "hooks.tls.test")
    names: list[str | None] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: names.append(name)
    table, _ = dns
    table["hooks.tls.test"] = [["127.0.0.1"]]
    table["other.tls.test"] = [["127.0.0.1"]]
    monkeypatch.setattr(egress.certifi, "where", lambda: ca)  # the tests' CA instead of the public ones
    with Receiver() as rx:
        rx.server.socket = context.wrap_socket(rx.server.socket, server_side=True)
        port = rx.server.server_address[1]
        done = _deliver_to_each(
            people, offline_cluster, ("hooks.tls.test", "other.tls.test"),
            f"https://{{name}}:{port}/services/T0", django_capture_on_commit_callbacks,
        )  # fmt: skip
    good, wrong_name = done["hooks.tls.test"], done["other.tls.test"]
    assert (good.state, good.last_status, good.last_error) == (DeliveryState.DELIVERED, 200, "")
    assert (wrong_name.last_status, wrong_name.last_error) == (None, egress.TLS_FAILED)
    assert names == ["hooks.tls.test", "other.tls.test"]
    assert [r["headers"]["Host"] for r in rx.received] == [f"hooks.tls.test:{port}"]


def test_a_failed_connect_moves_on_to_the_next_checked_address_at_most_three(
    people, offline_cluster, settings, dns, django_capture_on_commit_callbacks
):
    from console.notify import egress

    settings.NOTIFY_ALLOWED_NETWORKS = ["127.0.0.0/29"]
    table, _ = dns
    with Receiver() as rx:  # listens on 127.0.0.1 only: 127.0.0.2-5 refuse the connection
        port = rx.server.server_address[1]
        table["two.multi.test"] = [["127.0.0.2", "127.0.0.1"]]
        table["four.multi.test"] = [["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.1"]]
        done = _deliver_to_each(
            people, offline_cluster, ("two.multi.test", "four.multi.test"),
            f"http://{{name}}:{port}/hook", django_capture_on_commit_callbacks,
        )  # fmt: skip
    two, four = done["two.multi.test"], done["four.multi.test"]
    assert (two.state, two.last_status) == (DeliveryState.DELIVERED, 200)
    assert (four.state, four.last_status, four.last_error) == (
        DeliveryState.PENDING,
        None,
        egress.CONNECTION_FAILED,
    )
    assert [r["headers"]["Host"] for r in rx.received] == [f"two.multi.test:{port}"]


def test_a_wrong_allow_list_is_a_clear_error_not_a_crash(
    people, offline_cluster, settings, django_capture_on_commit_callbacks
):
    settings.NOTIFY_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    actions.create_channel(
        actor=people["admin"], cluster=offline_cluster, name="ok", kind="slack",
        events=[events.REQUEST_SUBMITTED], url="http://127.0.0.1:9/hook",
    )  # fmt: skip
    settings.NOTIFY_ALLOWED_NETWORKS = ["10.0.0.0/8", "not-a-network"]
    with pytest.raises(
        actions.ChannelInvalid, match="ask its operator: NOTIFY_ALLOWED_NETWORKS: 'not-a-network'"
    ):
        actions.create_channel(
            actor=people["admin"], cluster=offline_cluster, name="n", kind="slack", events=[],
            url="http://127.0.0.1:9/hook",
        )  # fmt: skip
    _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    d = worker.deliver(QUEUED[0][0], worker="w")
    assert d.state == DeliveryState.PENDING and "'not-a-network' is not a network" in d.last_error
