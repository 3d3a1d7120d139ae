"""API guards: failed token attempts lock the address out (django-axes) without touching anyone's web
log-in; expired idempotency records are purged by the next key, whoever sent it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from console.identity import tokens
from console.models.api import IdempotencyRecord

pytestmark = pytest.mark.django_db


def _bearer(secret: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def test_it_throttles_bad_tokens_from_an_address_but_never_refuses_a_valid_token_from_it(
    personas, kafka_cluster
):
    good = tokens.create_token(actor=personas["viewer"], name="ok", scope="read", days=1).secret
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    attacker = Client(REMOTE_ADDR="10.9.8.7")
    answers = [attacker.get(url, **_bearer(f"kc_guess{i:07d}_{'x' * 30}")) for i in range(6)]
    assert [a.status_code for a in answers] == [401, 401, 401, 401, 429, 429]  # the fifth failure locks
    assert answers[4].json()["error"]["code"] == "throttled" and int(answers[4]["Retry-After"]) > 0
    assert "Too many failed token attempts" in answers[5].json()["error"]["message"]
    # a valid token from the same address (a colleague behind the same NAT, the same CI runner) works
    assert attacker.get(url, **_bearer(good)).status_code == 200
    assert attacker.get(url, **_bearer("kc_guess9999999_" + "x" * 30)).status_code == 429  # still locked
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
