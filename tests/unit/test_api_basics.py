"""The API's own machinery: tokens (hashed, scoped, expiring, revoked, audited), errors, idempotency, schema."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.identity import tokens
from console.models import ApiToken, AuditEvent
from console.models.api import IdempotencyRecord

pytestmark = pytest.mark.django_db


def _token(user, scope="write", days=30, name="ci"):
    return tokens.create_token(actor=user, name=name, scope=scope, days=days).secret


def _auth(secret: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def test_it_stores_only_the_hash_and_audits_creation(personas):
    new = tokens.create_token(actor=personas["operator"], name="ci", scope="read", days=7)
    row = ApiToken.objects.get(pk=new.token.pk)
    assert new.secret.startswith(f"kc_{row.prefix}_") and len(new.secret) > 50
    assert row.digest == hashlib.sha256(new.secret.encode()).hexdigest()
    assert new.secret not in json.dumps(list(ApiToken.objects.values()), default=str)
    event = AuditEvent.objects.get(action="api.token.create")
    assert event.actor_name == "operator" and event.targets == [f"api-token:{row.prefix}"]
    assert new.secret not in json.dumps(event.params)


def test_it_lists_topics_with_a_token_and_audits_the_first_use_once(client, personas, kafka_cluster):
    secret = _token(personas["viewer"], scope="read")
    for _ in range(2):
        response = client.get(reverse("api:topics", kwargs={"name": kafka_cluster.name}), **_auth(secret))
        assert response.status_code == 200, response.content
    body = response.json()
    assert {"count", "page", "pages", "per_page", "results"} <= set(body)
    assert AuditEvent.objects.filter(action="api.token.use").count() == 1


@pytest.mark.parametrize("bad", ["kc_nope_x", "kc_0123456789ab_wrong", "garbage", "kc__"])
def test_it_refuses_unknown_tokens_with_401_json(client, kafka_cluster, bad):
    response = client.get(reverse("api:clusters"), **_auth(bad))
    assert response.status_code == 401
    assert response.json()["error"]["status"] == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_it_refuses_expired_and_revoked_tokens(client, personas, kafka_cluster):
    secret = _token(personas["viewer"], scope="read")
    url = reverse("api:clusters")
    assert client.get(url, **_auth(secret)).status_code == 200
    token = ApiToken.objects.get()
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get(url, **_auth(secret)).status_code == 401
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() + timedelta(days=1))
    assert tokens.revoke_token(actor=personas["operator"], token_id=token.pk) is None  # not theirs
    assert tokens.revoke_token(actor=personas["viewer"], token_id=token.pk) is not None
    assert client.get(url, **_auth(secret)).status_code == 401
    assert AuditEvent.objects.filter(action="api.token.revoke", actor_name="viewer").count() == 1


def test_a_read_only_token_never_mutates_even_for_an_admin(client, personas, kafka_cluster, sandbox):
    secret = _token(personas["admin"], scope="read")
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    body = {"name": "ro-never", "partitions": 1, "replication_factor": 1}
    response = client.post(url, body, content_type="application/json", **_auth(secret))
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "read_only_token"
    assert "ro-never" not in sandbox.state.topics
    refused = AuditEvent.objects.get(outcome="refused")
    assert refused.action == "api.topics" and "[token " in refused.actor_name


def test_changes_made_with_a_token_name_it_in_the_audit_trail(client, personas, kafka_cluster, sandbox):
    secret = _token(personas["operator"], name="deployer")
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    body = {"name": "api-named", "partitions": 1, "replication_factor": 1}
    response = client.post(url, body, content_type="application/json", **_auth(secret))
    assert response.status_code == 201, response.content
    assert response.json()["outcomes"][0]["ok"] is True
    assert "api-named" in sandbox.state.topics
    prefix = ApiToken.objects.get().prefix
    names = set(
        AuditEvent.objects.filter(action__startswith="topic.create").values_list("actor_name", flat=True)
    )
    assert names == {f"operator [token {prefix} 'deployer']"}


def test_kafka_errors_carry_kafkas_name_and_code(client, personas, kafka_cluster):
    secret = _token(personas["viewer"], scope="read")
    url = reverse("api:topic", kwargs={"name": kafka_cluster.name, "topic": "no-such-topic"})
    response = client.get(url, **_auth(secret))
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "kafka_error"
    assert error["kafka"]["name"] == "UNKNOWN_TOPIC_OR_PARTITION" and error["kafka"]["code"] == 3


def test_an_existing_topic_is_409_with_the_per_topic_result(client, personas, kafka_cluster, sandbox):
    sandbox.create_topic("api-exists", partitions=1, replication_factor=1)
    secret = _token(personas["operator"])
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    body = {"name": "api-exists", "partitions": 1, "replication_factor": 1}
    response = client.post(url, body, content_type="application/json", **_auth(secret))
    assert response.status_code == 409
    assert response.json()["outcomes"][0]["error_name"] == "TOPIC_ALREADY_EXISTS"


def test_an_idempotency_key_replays_the_first_answer_and_refuses_another_body(
    client, personas, kafka_cluster, sandbox
):
    secret = _token(personas["operator"])
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    body = {"name": "api-idem", "partitions": 1, "replication_factor": 1}
    headers = {**_auth(secret), "HTTP_IDEMPOTENCY_KEY": "key-1"}
    first = client.post(url, body, content_type="application/json", **headers)
    events = AuditEvent.objects.count()
    again = client.post(url, body, content_type="application/json", **headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert AuditEvent.objects.count() == events  # nothing ran again (no TOPIC_ALREADY_EXISTS either)
    other = client.post(url, {**body, "partitions": 2}, content_type="application/json", **headers)
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    assert IdempotencyRecord.objects.count() == 1
    # the stored digest is keyed: a body may hold a password, which a plain hash exposes to a dictionary
    plain = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    assert IdempotencyRecord.objects.get().body_hash not in ("", plain)


def test_session_auth_needs_csrf(personas, kafka_cluster):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(personas["operator"])
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    assert browser.get(url).status_code == 200
    body = {"name": "api-csrf", "partitions": 1, "replication_factor": 1}
    response = browser.post(url, body, content_type="application/json")
    assert response.status_code == 403 and "CSRF" in response.json()["error"]["message"]


def test_anonymous_gets_401(client, kafka_cluster):
    response = client.get(reverse("api:topics", kwargs={"name": kafka_cluster.name}))
    assert response.status_code in (401, 403)
    assert response.json()["error"]["status"] == response.status_code


def test_the_openapi_schema_validates(client, personas):
    from openapi_spec_validator import validate

    client.force_login(personas["viewer"])
    response = client.get(reverse("api:schema") + "?format=json")
    assert response.status_code == 200
    schema = response.json()
    validate(schema)
    assert "/api/v1/clusters/{name}/topics/" in schema["paths"]
    assert schema["components"]["securitySchemes"]["apiToken"]["scheme"] == "bearer"


def test_the_docs_page_is_served_locally_under_the_csp(client, personas):
    client.force_login(personas["viewer"])
    page = client.get(reverse("api:docs"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "cdn" not in html.lower() and "<script>" not in html  # scripts come from this server
    csp = _directives(page["Content-Security-Policy"])  # django-csp's directive order is not fixed
    assert csp["script-src"] == ["'self'"] and "'unsafe-eval'" not in sum(csp.values(), [])
    assert csp["style-src-elem"] == ["'self'", "'unsafe-inline'"]  # Swagger UI's own <style>, this page only
    script = client.get(reverse("api:docs") + "?script=")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()
    other = _directives(client.get(reverse("cluster_list"))["Content-Security-Policy"])
    assert other["style-src-elem"] == ["'self'"]


def _directives(header: str) -> dict[str, list[str]]:
    out = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


def test_anonymous_browsers_are_sent_to_log_in_for_the_docs(client):
    response = client.get(reverse("api:docs"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_the_token_page_shows_the_secret_once(client, personas):
    client.force_login(personas["viewer"])
    url = reverse("account_tokens")
    response = client.post(url, {"name": "laptop", "scope": "read", "days": "30"})
    assert response.status_code == 200
    token = ApiToken.objects.get(user=personas["viewer"])
    assert f"kc_{token.prefix}_" in response.content.decode()
    later = client.get(url).content.decode()
    assert f"kc_{token.prefix}_…" in later and f"kc_{token.prefix}_" + "x" not in later
    assert client.post(reverse("account_token_revoke", kwargs={"token_id": token.pk})).status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_a_retry_while_the_first_request_runs_is_409_and_old_keys_expire(
    client, personas, kafka_cluster, settings
):
    secret = _token(personas["operator"])
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    body = {"name": "api-idem-busy", "partitions": 1, "replication_factor": 1}
    from console.api.idempotency import body_hash

    IdempotencyRecord.objects.create(
        user=personas["operator"], key="k", route=f"POST {url}", body_hash=body_hash(body), status=0
    )
    busy = client.post(url, body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="k", **_auth(secret))
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "idempotency_in_progress"
    IdempotencyRecord.objects.update(
        created_at=timezone.now() - timedelta(seconds=settings.API_IDEMPOTENCY_TTL_S + 1)
    )
    fresh = client.post(url, body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="k", **_auth(secret))
    assert fresh.status_code == 201 and IdempotencyRecord.objects.get().status == 201


def test_keys_are_per_user_and_a_bad_key_is_400(client, personas, kafka_cluster):
    url = reverse("api:topics", kwargs={"name": kafka_cluster.name})
    body = {"name": "api-idem-a", "partitions": 1, "replication_factor": 1}
    first = client.post(
        url,
        body,
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="same",
        **_auth(_token(personas["operator"])),
    )
    other = client.post(
        url,
        {**body, "name": "api-idem-b"},
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="same",
        **_auth(_token(personas["admin"])),
    )
    assert first.status_code == other.status_code == 201  # another user's key is another key
    bad = client.post(
        url,
        body,
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="x" * 300,
        **_auth(_token(personas["operator"])),
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_idempotency_key"


def test_a_token_of_a_deactivated_user_authenticates_nobody(client, personas, kafka_cluster):
    secret = _token(personas["viewer"], scope="read")
    personas["viewer"].is_active = False
    personas["viewer"].save()
    assert client.get(reverse("api:clusters"), **_auth(secret)).status_code == 401


def test_token_creation_is_validated(personas):
    from django.core.exceptions import ValidationError

    for kwargs in (
        {"name": "", "scope": "read", "days": 1},
        {"name": "x", "scope": "admin", "days": 1},
        {"name": "x", "scope": "read", "days": 0},
    ):
        with pytest.raises(ValidationError):
            tokens.create_token(actor=personas["viewer"], **kwargs)
    assert not ApiToken.objects.exists()
