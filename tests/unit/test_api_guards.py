"""API guards: failed token attempts lock the address out (django-axes) without touching anyone's web
log-in; expired idempotency records are purged by the next key, whoever sent it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from console.api import tokens
from console.models.api import IdempotencyRecord

pytestmark = pytest.mark.django_db


def _bearer(secret: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def test_failed_token_attempts_lock_the_address_out_and_a_good_token_too_until_cooloff(
    personas, kafka_cluster, settings
):
    settings.AXES_FAILURE_LIMIT = 3
    good = tokens.create_token(actor=personas["viewer"], name="ok", scope="read", days=1).secret
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    attacker = Client(REMOTE_ADDR="10.9.8.7")
    answers = [attacker.get(url, **_bearer(f"kc_guess{i}_{'x' * 30}")) for i in range(4)]
    assert [a.status_code for a in answers] == [401, 401, 429, 429]  # the third failure locks the address
    assert answers[2].json()["error"]["code"] == "throttled" and int(answers[2]["Retry-After"]) > 0
    locked = attacker.get(url, **_bearer(good))
    assert locked.status_code == 429 and "Too many failed token attempts" in locked.json()["error"]["message"]
    # another address is not locked out, and the viewer's own web log-in still works
    assert Client(REMOTE_ADDR="10.1.1.1").get(url, **_bearer(good)).status_code == 200
    browser = Client(REMOTE_ADDR="10.9.8.7")
    assert browser.post(reverse("login"), {"username": "viewer", "password": "pw-viewer"}).status_code == 302


def test_each_new_idempotency_key_purges_every_expired_record(client, personas, kafka_cluster, settings):
    old = timezone.now() - timedelta(seconds=settings.API_IDEMPOTENCY_TTL_S + 60)
    stale = IdempotencyRecord.objects.create(
        user=personas["admin"], key="old", route="POST /x", body_hash="0" * 64
    )
    IdempotencyRecord.objects.filter(pk=stale.pk).update(created_at=old)
    fresh = IdempotencyRecord.objects.create(
        user=personas["admin"], key="new", route="POST /y", body_hash="0" * 64
    )
    secret = tokens.create_token(actor=personas["operator"], name="t", scope="write", days=1).secret
    url = reverse("api:cluster-test", kwargs={"name": kafka_cluster.name})
    client.post(url, {}, content_type="application/json", HTTP_IDEMPOTENCY_KEY="k1", **_bearer(secret))
    keys = set(IdempotencyRecord.objects.values_list("key", flat=True))
    assert keys == {"new", "k1"} and IdempotencyRecord.objects.filter(pk=fresh.pk).exists()


def test_a_locked_out_web_log_in_still_gets_the_consoles_page(personas, settings):
    settings.AXES_FAILURE_LIMIT = 2
    browser = Client(REMOTE_ADDR="10.5.5.5")
    for _ in range(2):
        answer = browser.post(reverse("login"), {"username": "viewer", "password": "wrong"})
    assert answer.status_code == 429 and b"Too many attempts" in answer.content
    assert answer["Content-Type"].startswith("text/html") and int(answer["Retry-After"]) > 0
