"""Notifications: a signed webhook delivered to a real local HTTP server (retried after a 500), the Slack
and e-mail bodies, subscriptions, emit() never breaking its caller, admin-only management, audit."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.core import mail
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from console import notify
from console.models import AuditEvent
from console.models.notify import DeliveryState, NotificationChannel, NotificationDelivery
from console.notify import actions, core, events, worker
from tests.conftest import make_personas
from tests.local_http import LocalServer, QuietHandler

QUEUED: list[tuple[int, float | None]] = []


def record_delivery(delivery_id: int, countdown: float | None = None) -> str:
    """The tests' notify queue: remember what would go to a worker (the test runs it itself)."""
    QUEUED.append((delivery_id, countdown))
    return f"notify-{delivery_id}"


@pytest.fixture(autouse=True)
def _notify_queue(settings):
    settings.NOTIFY_DISPATCHER = "tests.unit.test_notify.record_delivery"
    settings.NOTIFY_TIMEOUT_S = 5
    # The tests' receivers listen on 127.0.0.1, which the egress check refuses unless allowed.
    settings.NOTIFY_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.NOTIFY_EMAIL_DOMAINS = ["example.com"]
    QUEUED.clear()
    yield QUEUED


class Receiver(LocalServer):
    """A real HTTP server on 127.0.0.1: answers the queued statuses in turn (then 200), keeps what came."""

    def __init__(self, statuses=(), headers=None, body=b"ok"):
        self.statuses = list(statuses)
        self.extra_headers = headers or {}
        self.body = body
        self.received: list[dict] = []
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.received.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.reply(status, receiver.body, content_type=None, headers=receiver.extra_headers)

        super().__init__(Handler)
        self.url = self.base

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


@pytest.fixture
def people(offline_cluster):
    return make_personas(offline_cluster)


def _channel(people, cluster, kind="webhook", **kw):
    kw.setdefault("events", [events.REQUEST_SUBMITTED])
    channel, secret = actions.create_channel(
        actor=people["admin"], cluster=cluster, name=kw.pop("name", kind), kind=kind, **kw
    )
    return channel, secret


def _emit(cluster, event=events.REQUEST_SUBMITTED, django_capture_on_commit_callbacks=None, **kw):
    kw.setdefault("title", "Request #7 waits")
    kw.setdefault("text", "alice asks for topic team-a.orders")
    with django_capture_on_commit_callbacks(execute=True):
        return notify.emit(cluster, event, **kw)


def _due_now(delivery_id: int) -> None:
    """What the passing of the backoff does: the delivery is due."""
    NotificationDelivery.objects.filter(pk=delivery_id, state=DeliveryState.PENDING).update(
        next_attempt_at=timezone.now()
    )


def test_it_delivers_a_signed_webhook_to_a_real_server_retrying_after_a_500(
    people, offline_cluster, settings, django_capture_on_commit_callbacks
):
    settings.NOTIFY_BACKOFF_S = 30
    with Receiver(statuses=[500]) as rx:
        channel, secret = _channel(people, offline_cluster, url=rx.url + "/hooks/console?token=abc")
        assert len(secret) >= 32
        assert (
            _emit(
                offline_cluster,
                django_capture_on_commit_callbacks=django_capture_on_commit_callbacks,
                link="/c/offline/requests/7/",
            )
            == 1
        )
        ((delivery_id, countdown),) = QUEUED
        assert countdown is None

        first = worker.deliver(delivery_id, worker="w1")
        assert (first.state, first.attempts, first.last_status) == (DeliveryState.PENDING, 1, 500)
        assert first.next_attempt_at > timezone.now() + timedelta(seconds=25)
        assert QUEUED[-1] == (delivery_id, 30.0)  # the retry is queued with its backoff
        assert worker.deliver(delivery_id, worker="w1") is None  # not due yet: nothing sent
        assert len(rx.received) == 1

        _due_now(delivery_id)
        assert worker.deliver_due(worker="w2") == [delivery_id]
        done = NotificationDelivery.objects.get(pk=delivery_id)
        assert (done.state, done.attempts, done.last_status, done.last_error) == (
            DeliveryState.DELIVERED,
            2,
            200,
            "",
        )

    assert len(rx.received) == 2
    for got in rx.received:  # the receiver's side: every attempt verifies with the channel's secret
        assert got["path"] == "/hooks/console?token=abc"
        header = got["headers"][core.SIGNATURE_HEADER]
        assert core.verify_signature(secret, header, got["body"], now=time.time()).ok
        assert not core.verify_signature(
            "another-secret-of-32-chars-xxxxxxx", header, got["body"], now=time.time()
        ).ok
        assert not core.verify_signature(secret, header, got["body"] + b" ", now=time.time()).ok
        assert got["headers"][core.DELIVERY_HEADER] == str(delivery_id)
        assert got["headers"][core.EVENT_HEADER] == events.REQUEST_SUBMITTED
    body = json.loads(rx.received[1]["body"])
    assert body["id"] == delivery_id and body["event"] == events.REQUEST_SUBMITTED
    assert body["cluster"] == "offline" and body["title"] == "Request #7 waits"
    assert body["link"] == "/c/offline/requests/7/"


def test_a_replayed_or_old_signature_is_rejected_by_the_receiver_check():
    body = b'{"event":"x"}'
    header = core.signature_header("s" * 32, 1_700_000_000, body)
    assert core.verify_signature("s" * 32, header, body, now=1_700_000_100).ok
    late = core.verify_signature("s" * 32, header, body, now=1_700_000_000 + 301)
    assert not late.ok and "tolerance" in late.reason
    assert not core.verify_signature("s" * 32, "v1=abc", body, now=1_700_000_000).ok
    # Re-using a signature with another timestamp fails: the timestamp is signed too.
    forged = header.replace("t=1700000000", "t=1700000200")
    assert not core.verify_signature("s" * 32, forged, body, now=1_700_000_200).ok


def test_it_gives_up_after_the_attempt_limit(
    people, offline_cluster, settings, django_capture_on_commit_callbacks
):
    settings.NOTIFY_MAX_ATTEMPTS = 3
    with Receiver(statuses=[503, 500, 502, 500]) as rx:
        _channel(people, offline_cluster, url=rx.url)
        _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
        delivery_id = QUEUED[0][0]
        for _ in range(5):
            _due_now(delivery_id)
            worker.deliver(delivery_id, worker="w")
    d = NotificationDelivery.objects.get(pk=delivery_id)
    assert (d.state, d.attempts, d.last_status) == (DeliveryState.FAILED, 3, 502)
    assert d.next_attempt_at is None and d.finished_at is not None
    assert len(rx.received) == 3


def test_a_redirect_is_never_followed(people, offline_cluster, django_capture_on_commit_callbacks):
    with Receiver(statuses=[307], headers={"Location": "http://198.51.100.7/steal"}) as rx:
        _channel(people, offline_cluster, url=rx.url + "/secret-path")
        _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
        d = worker.deliver(QUEUED[0][0], worker="w")
    assert d.state == DeliveryState.PENDING and d.last_status == 307
    assert "not followed" in d.last_error and len(rx.received) == 1


def test_a_slack_channel_gets_a_text_body(people, offline_cluster, django_capture_on_commit_callbacks):
    with Receiver() as rx:
        channel, secret = _channel(people, offline_cluster, kind="slack", url=rx.url + "/services/T0/B0/XYZ")
        assert secret == "" and channel.url_hint == f"{rx.url}/…"
        _emit(
            offline_cluster,
            django_capture_on_commit_callbacks=django_capture_on_commit_callbacks,
            link="/c/offline/requests/7/",
        )
        assert worker.deliver(QUEUED[0][0], worker="w").state == DeliveryState.DELIVERED
    (got,) = rx.received
    assert core.SIGNATURE_HEADER not in got["headers"]
    assert json.loads(got["body"]) == {
        "text": "*[offline] Request #7 waits*\nalice asks for topic team-a.orders\n</c/offline/requests/7/|Open in the console>"
    }


def test_an_email_channel_sends_through_the_mail_backend(
    people, offline_cluster, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NOTIFY_EMAIL_FROM = "console@example.com"
    settings.CONSOLE_BASE_URL = "https://console.example.com"
    _channel(people, offline_cluster, kind="email", recipients=["ops@example.com", "oncall@example.com"])
    _emit(
        offline_cluster,
        django_capture_on_commit_callbacks=django_capture_on_commit_callbacks,
        link="/c/offline/requests/7/",
    )
    d = worker.deliver(QUEUED[0][0], worker="w")
    assert d.state == DeliveryState.DELIVERED
    (msg,) = mail.outbox
    assert msg.to == ["oncall@example.com", "ops@example.com"] and msg.from_email == "console@example.com"
    assert msg.subject == "[Kafka console] [offline] Request #7 waits"
    assert "https://console.example.com/c/offline/requests/7/" in msg.body
    assert "Request submitted on cluster offline" in msg.body


def test_only_enabled_channels_subscribed_to_the_event_get_it(
    people, offline_cluster, django_capture_on_commit_callbacks
):
    a, _ = _channel(
        people, offline_cluster, name="a", url="http://127.0.0.1:9/a", events=[events.REQUEST_SUBMITTED]
    )
    _channel(people, offline_cluster, name="b", url="http://127.0.0.1:9/b", events=[events.REQUEST_REJECTED])
    _channel(
        people,
        offline_cluster,
        name="c",
        url="http://127.0.0.1:9/c",
        events=[events.REQUEST_SUBMITTED],
        enabled=False,
    )
    assert _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks) == 1
    assert list(NotificationDelivery.objects.values_list("channel_id", flat=True)) == [a.pk]
    # A key: the same leftovers seen again by the next sweep are not announced twice.
    for _ in range(2):
        _emit(
            offline_cluster,
            events.REQUEST_SUBMITTED,
            django_capture_on_commit_callbacks=django_capture_on_commit_callbacks,
            key="reassignment-3",
        )
    assert NotificationDelivery.objects.filter(dedupe_key="reassignment-3").count() == 1


def test_deliveries_are_queued_only_when_the_callers_transaction_commits(
    people, offline_cluster, django_capture_on_commit_callbacks
):
    _channel(people, offline_cluster, url="http://127.0.0.1:9/a")
    with pytest.raises(RuntimeError), django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            assert notify.emit(offline_cluster, events.REQUEST_SUBMITTED, title="t", text="x") == 1
            raise RuntimeError("the action failed")
    assert not NotificationDelivery.objects.exists() and QUEUED == []


def test_emit_never_raises_when_a_channel_is_broken(
    people, offline_cluster, monkeypatch, django_capture_on_commit_callbacks
):
    channel, _ = _channel(people, offline_cluster, url="http://127.0.0.1:9/a")
    NotificationChannel.objects.filter(pk=channel.pk).update(url_encrypted="not-a-fernet-token")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        assert (
            notify.emit(
                offline_cluster,
                events.REQUEST_SUBMITTED,
                title="t",
                text="x",
                details={"when": timezone.now()},
            )
            == 1
        )
    d = worker.deliver(QUEUED[0][0], worker="w")
    assert d.state == DeliveryState.PENDING and "cannot be decrypted" in d.last_error
    # The database refusing the rows, or the queue being down, is logged: the caller goes on.
    monkeypatch.setattr(
        NotificationDelivery.objects, "create", lambda **kw: (_ for _ in ()).throw(RuntimeError("db"))
    )
    with transaction.atomic():
        assert notify.emit(offline_cluster, events.REQUEST_SUBMITTED, title="t", text="x") == 0
        assert NotificationChannel.objects.count() == 1  # the caller's transaction is still usable
    monkeypatch.undo()
    from django.conf import settings

    settings.NOTIFY_DISPATCHER = "no.such.dispatcher"
    with django_capture_on_commit_callbacks(execute=True):
        assert notify.emit(offline_cluster, events.REQUEST_SUBMITTED, title="t", text="x") == 1


def test_an_unreachable_endpoint_records_the_error_without_the_urls_token(
    people, offline_cluster, django_capture_on_commit_callbacks
):
    _channel(people, offline_cluster, kind="slack", url="http://127.0.0.1:1/services/T0/B0/SECRETTOKEN")
    _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    d = worker.deliver(QUEUED[0][0], worker="w")
    assert d.state == DeliveryState.PENDING and d.last_status is None
    assert d.last_error == "connection failed (refused, reset or timed out)"


def test_channel_secrets_are_encrypted_and_never_described(people, offline_cluster):
    channel, secret = _channel(people, offline_cluster, url="https://hooks.example.com/x?token=t0ps3cret")
    stored = NotificationChannel.objects.get(pk=channel.pk)
    assert "t0ps3cret" not in stored.url_encrypted and secret not in stored.secret_encrypted
    assert channel.url_hint == "https://hooks.example.com/…"
    shown = json.dumps(actions.describe(stored))
    assert "t0ps3cret" not in shown and secret not in shown
    event = AuditEvent.objects.get(action="notify.channel.create")
    assert "t0ps3cret" not in json.dumps(event.after) and secret not in json.dumps(event.after)
    _, rotated = actions.update_channel(
        actor=people["admin"], cluster=offline_cluster, channel_id=channel.pk, name="renamed",
        events=[events.BREAK_GLASS], enabled=True, rotate_secret=True,
    )  # fmt: skip
    assert rotated and rotated != secret
    update = AuditEvent.objects.get(action="notify.channel.update")
    assert update.after["signing_key_rotated"] is True and update.after["url_changed"] is False
    assert update.before["name"] == "webhook" and update.after["name"] == "renamed"


@pytest.mark.parametrize(
    ("kw", "error"),
    [
        ({"url": "ftp://example.com/x"}, "only http"),
        ({"url": "http://user:pw@example.com/x"}, "user:password"),
        ({"url": None}, "give the URL"),
        ({"url": "http://example.com", "events": ["nope"]}, "unknown events"),
        ({"url": "http://example.com", "name": " "}, "name"),
        ({"kind": "email", "recipients": ["not-an-address"]}, "not an e-mail address"),
        ({"kind": "pager", "url": "http://example.com"}, "unknown channel kind"),
    ],
)
def test_bad_channel_settings_are_refused_and_audited(people, offline_cluster, kw, error):
    kw = {"kind": "webhook", "name": "n", "events": [events.REQUEST_SUBMITTED], **kw}
    with pytest.raises(actions.ChannelInvalid, match=error):
        actions.create_channel(actor=people["admin"], cluster=offline_cluster, **kw)
    assert not NotificationChannel.objects.exists()
    assert AuditEvent.objects.get(action="notify.channel.create").outcome == "refused"


def test_only_cluster_admins_manage_channels_and_refusals_are_audited(people, offline_cluster):
    channel, _ = _channel(people, offline_cluster, url="http://127.0.0.1:9/a")
    for who in ("operator", "viewer", "auditor", "requester", "outsider"):
        with pytest.raises(PermissionDenied):
            actions.create_channel(
                actor=people[who],
                cluster=offline_cluster,
                name="x",
                kind="slack",
                events=[],
                url="http://x.example",
            )
        with pytest.raises(PermissionDenied):
            actions.delete_channel(actor=people[who], cluster=offline_cluster, channel_id=channel.pk)
        with pytest.raises(PermissionDenied):
            actions.send_test(actor=people[who], cluster=offline_cluster, channel_id=channel.pk)
        with pytest.raises(PermissionDenied):
            actions.list_deliveries(actor=people[who], cluster=offline_cluster)
    refused = AuditEvent.objects.filter(outcome="refused")
    assert refused.filter(action="notify.channel.create").count() == 5
    assert refused.filter(action="notify.channel.delete", actor_name="operator").exists()
    assert refused.filter(action="notify.channel.test", actor_name="viewer").exists()
    assert NotificationChannel.objects.count() == 1 and not NotificationDelivery.objects.exists()


def test_a_test_send_is_audited_requested_then_its_outcome(
    people, offline_cluster, django_capture_on_commit_callbacks
):
    with Receiver(statuses=[500]) as rx:
        channel, _ = _channel(people, offline_cluster, url=rx.url, enabled=False)
        with django_capture_on_commit_callbacks(execute=True):
            d = actions.send_test(actor=people["admin"], cluster=offline_cluster, channel_id=channel.pk)
        assert QUEUED == [(d.pk, None)] and d.event == events.TEST
        requested = AuditEvent.objects.get(action="notify.channel.test")
        assert (requested.outcome, requested.actor_name) == ("requested", "admin")
        worker.deliver(d.pk, worker="w")  # 500: not the end yet, no outcome
        assert AuditEvent.objects.filter(action="notify.channel.test").count() == 1
        _due_now(d.pk)
        worker.deliver(d.pk, worker="w")
    outcome = AuditEvent.objects.filter(action="notify.channel.test").latest("id")
    assert (outcome.outcome, outcome.actor_name) == ("success", "admin")
    assert outcome.params["requested_event"] == requested.pk and outcome.params["attempts"] == 2


def test_a_delivery_held_by_a_dead_worker_is_retaken_after_the_stale_time(
    people, offline_cluster, settings, django_capture_on_commit_callbacks
):
    with Receiver() as rx:
        _channel(people, offline_cluster, url=rx.url)
        _emit(offline_cluster, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
        delivery_id = QUEUED[0][0]
        assert worker.claim(delivery_id, worker="dead")
        assert worker.deliver(delivery_id, worker="w2") is None  # held
        NotificationDelivery.objects.filter(pk=delivery_id).update(
            taken_at=timezone.now() - timedelta(seconds=worker.stale_after_s() + 1)
        )
        d = worker.deliver(delivery_id, worker="w2")
    assert (d.state, d.attempts) == (DeliveryState.DELIVERED, 2) and len(rx.received) == 1


def test_operation_ends_map_to_events():
    assert events.for_operation_end("reassignment.execute", "succeeded") == [events.REASSIGNMENT_FINISHED]
    assert events.for_operation_end("reassignment.execute", "cancelled") == [events.REASSIGNMENT_CANCELLED]
    assert events.for_operation_end("reassignment.execute", "failed") == [events.REASSIGNMENT_FAILED]
    assert events.for_operation_end("reassignment.execute", "errored") == [
        events.REASSIGNMENT_FAILED,
        events.OPERATION_ERRORED,
    ]
    assert events.for_operation_end("pipeline.run", "errored") == [events.OPERATION_ERRORED]
    assert events.for_operation_end("pipeline.run", "succeeded") == []


def test_the_pages_show_a_webhooks_secret_once_and_the_delivery_log(people, offline_cluster, client):
    from django.urls import reverse

    client.force_login(people["admin"])
    url = reverse("notify_channels", kwargs={"name": offline_cluster.name})
    body = {
        "name": "hook",
        "kind": "webhook",
        "url": "http://127.0.0.1:9/h?token=zz9",
        "events": [events.BREAK_GLASS],
    }
    response = client.post(url, body)
    assert response.status_code == 200
    secret = response.context["secret"]
    assert len(secret) >= 32 and secret in response.content.decode()
    again = client.get(url).content.decode()
    assert secret not in again and "zz9" not in again and "http://127.0.0.1:9/…" in again
    channel = NotificationChannel.objects.get(name="hook")
    test_url = reverse("notify_channel_test", kwargs={"name": offline_cluster.name, "channel_id": channel.pk})
    assert client.post(test_url).status_code == 302
    log = client.get(reverse("notify_deliveries", kwargs={"name": offline_cluster.name}))
    assert log.status_code == 200 and "Test notification from admin" in log.content.decode()
    client.force_login(people["operator"])
    assert client.get(url).status_code == 403
