"""The notification channels and the change-control policy through the API: the admin pages' actions,
a webhook's secret returned once and never its URL's path, the delivery log, refusals audited."""

from __future__ import annotations

import pytest

from console.models import AuditEvent
from console.models.notify import NotificationChannel, NotificationDelivery
from tests.unit.notify_world import webhook_post
from tests.unit.test_api_endpoints import _caller

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client, personas):
    return _caller(client, personas)


def test_channels_are_managed_through_the_api_and_secrets_are_shown_once(api, kafka_cluster):
    made = api(
        "admin", "post", "notifications",
        {"name": "ops-hook", "kind": "webhook", "url": "https://hooks.example/T0K3N/path", "events": ["request.submitted"]},
        name="sandbox",
    )  # fmt: skip
    assert made.status_code == 201, made.content
    body = made.json()
    assert (
        len(body["secret"]) >= 16
        and body["url_hint"].startswith("https://hooks.example")
        and "T0K3N" not in made.content.decode()
    )
    channel_id = body["id"]
    shown = api("admin", "get", "notification", name="sandbox", channel_id=channel_id)
    assert "secret" not in shown.json() and "T0K3N" not in shown.content.decode()
    changed = api(
        "admin", "post", "notification", {"name": "ops-hook", "events": ["request.approved"], "enabled": True, "rotate_secret": True},
        name="sandbox", channel_id=channel_id,
    )  # fmt: skip
    assert (
        changed.status_code == 200
        and changed.json()["events"] == ["request.approved"]
        and changed.json()["secret"]
    )
    sent = api("admin", "post", "notification-test", name="sandbox", channel_id=channel_id)
    assert sent.status_code == 202 and sent.json()["event"] == "notify.test"
    log = api("admin", "get", "notifications-log", {"channel": channel_id}, name="sandbox").json()["results"]
    assert [d["id"] for d in log] == [sent.json()["id"]]
    refused = api("operator", "post", "notification-delete", name="sandbox", channel_id=channel_id)
    assert refused.status_code == 403 and NotificationChannel.objects.filter(pk=channel_id).exists()
    assert AuditEvent.objects.filter(action="api.notification-delete", outcome="refused").exists()
    gone = api("admin", "post", "notification-delete", name="sandbox", channel_id=channel_id)
    assert gone.status_code == 200 and not NotificationDelivery.objects.exists()
    missing = api("admin", "get", "notification", name="sandbox", channel_id=channel_id)
    assert missing.status_code == 404
    bad = api(
        "admin",
        "post",
        "notifications",
        {"name": "x", "kind": "webhook", "url": "ftp://nope"},
        name="sandbox",
    )
    assert bad.status_code in (400, 422) and not NotificationChannel.objects.exists()


def test_the_change_control_policy_through_the_api(api, kafka_cluster):
    set_ = api(
        "admin",
        "post",
        "change-policy",
        {"enabled": True, "kinds": ["acl", "election"], "approvers": 2},
        name="sandbox",
    )
    assert set_.status_code == 200 and set_.json()["kinds"] == ["acl", "election"]
    assert api("admin", "get", "change-policy", name="sandbox").json()["approvers"] == 2
    assert (
        api(
            "admin", "post", "change-policy", {"enabled": True, "kinds": ["nope"]}, name="sandbox"
        ).status_code
        == 400
    )
    assert api("operator", "get", "change-policy", name="sandbox").status_code == 403
    event = AuditEvent.objects.get(action="change.policy.update", outcome="success")
    assert event.after["kinds"] == ["acl", "election"] and "[token" in event.actor_name


def test_a_webhook_secret_is_never_stored_in_clear_for_a_retry_and_a_retry_gets_it_again(
    client, personas, kafka_cluster
):
    from django.db import connection
    from django.urls import reverse

    from console.models import IdempotencyRecord

    post = webhook_post(
        client, personas["admin"], "idem-hook", "https://hooks.example.com/in", "create-hook-1"
    )
    first = post.send()
    assert first.status_code == 201, first.content
    secret = first.json()["secret"]
    assert len(secret) >= 32
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {IdempotencyRecord._meta.db_table}")
        rows = cursor.fetchall()
    assert len(rows) == 1 and secret not in repr(rows)
    events = AuditEvent.objects.count()
    again = post.send()
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()  # the same answer, the secret included, to the same caller
    assert NotificationChannel.objects.count() == 1 and AuditEvent.objects.count() == events
    channel_id = first.json()["id"]
    rotate = {"name": "idem-hook", "events": [], "enabled": True, "rotate_secret": True}
    rotate_url = reverse("api:notification", kwargs={"name": "sandbox", "channel_id": channel_id})
    rotate_headers = {**post.headers, "HTTP_IDEMPOTENCY_KEY": "rot-1"}
    rotated = client.post(rotate_url, rotate, content_type="application/json", **rotate_headers)
    assert rotated.status_code == 200 and rotated.json()["secret"] not in ("", secret)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {IdempotencyRecord._meta.db_table}")
        assert rotated.json()["secret"] not in repr(cursor.fetchall())
    # An answer no configured key opens any more: the request happened, its answer is lost (never a 500).
    IdempotencyRecord.objects.filter(key="rot-1").update(response_encrypted="not-a-fernet-token")
    lost = client.post(rotate_url, rotate, content_type="application/json", **rotate_headers)
    assert lost.status_code == 409 and lost.json()["error"]["code"] == "idempotency_answer_unreadable"
