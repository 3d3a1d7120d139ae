"""Key rotation covers every secret the console keeps encrypted (issue 33): SASL passwords, notification
channels' URLs and signing secrets, the API's kept idempotent answers and held changes' secret config
values. After `rotate_secrets` the old key can be dropped and every one still opens; a value no key opens
stops the rotation with nothing changed; a model cannot gain an encrypted column the rotation misses."""

from __future__ import annotations

import io
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import models
from django.test.utils import isolate_apps

from console import crypto
from console.changes import actions as changes
from console.changes import approvals, gate
from console.configs import actions as configs
from console.configs import held as configs_held
from console.kafka import ConfigChange
from console.models import AuditEvent, Cluster, IdempotencyRecord
from console.models.changes import ChangeApproval
from console.models.notify import NotificationChannel
from console.models.requests import ChangeRequest, RequestState
from tests.conftest import hold
from tests.unit import test_changes as base
from tests.unit.notify_world import webhook_post

pytestmark = pytest.mark.django_db

KEY_OLD, KEY_NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()
CONSOLE = Path(__file__).resolve().parents[2] / "console"
FIELDS = {
    "console.Cluster.sasl_password_encrypted",
    "console.Cluster.client_key_encrypted",
    "console.Cluster.oauth_client_secret_encrypted",
    "console.Cluster.kerberos_keytab_encrypted",
    "console.NotificationChannel.url_encrypted",
    "console.NotificationChannel.secret_encrypted",
    "console.IdempotencyRecord.response_encrypted",
    "console.ChangeRequest.payload",
}


@pytest.fixture
def keys(settings):
    def use(*keys: str) -> None:
        settings.CONSOLE_ENCRYPTION_KEYS = list(keys)

    return use


def _tokens(value: Any) -> list[str]:
    """Every Fernet token (they all start with version byte 0x80) anywhere in a stored value."""
    if isinstance(value, str):
        return [value] if value.startswith("gAAAAA") else []
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tokens(v)]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tokens(v)]
    return []


def _every_stored_token() -> list[tuple[str, str]]:
    found = []
    for model in apps.get_app_config("console").get_models():
        for row in model.objects.values():
            found += [(f"{model.__name__} #{row.get('id')}", t) for t in _tokens(list(row.values()))]
    return found


def _webhook_by_api(client, personas) -> tuple[dict, Any]:
    post = webhook_post(
        client, personas["admin"], "rot-hook", "https://hooks.example.com/T0K3N/in", "rotate-hook-1"
    )
    made = post.send()
    assert made.status_code == 201, made.content
    return made.json(), post.send


def _held_secret_config(personas, cluster, secret: str) -> ChangeRequest:
    hold(cluster, personas["admin"], ["broker.config"], approvers=2)
    prepared = configs_held.prepare_config(
        personas["operator"],
        cluster,
        configs.broker_resource("1"),
        [ConfigChange("ssl.truststore.password", "SET", secret)],
    )
    return changes.submit_change(actor=personas["operator"], cluster=cluster, prepared=prepared)


def test_it_re_encrypts_every_kind_of_secret_so_the_old_key_can_be_dropped(
    client, personas, kafka_cluster, operator2, keys
):
    keys(KEY_OLD)
    kafka_cluster.set_sasl_password("sasl-rotate-me")
    # the columns only (the sandbox listens in PLAINTEXT): each must be found and re-encrypted
    for name in ("client_key", "oauth_client_secret", "kerberos_keytab"):
        kafka_cluster.set_secret(name, f"{name}-rotate-me")
    kafka_cluster.save()
    answer, replay = _webhook_by_api(client, personas)
    secret_value = "trust-" + uuid.uuid4().hex
    held = _held_secret_config(personas, kafka_cluster, secret_value)
    changes.approve_change(actor=operator2, request=held)  # one of the two approvals, before the rotation
    old_digest = ChangeRequest.objects.get(pk=held.pk).payload_sha256
    keys(KEY_NEW, KEY_OLD)  # the new key first, the old one still decrypts

    out = io.StringIO()
    call_command("rotate_secrets", stdout=out)
    keys(KEY_NEW)  # the old key removed

    stored = _every_stored_token()
    assert len(stored) == 8, stored
    for where, token in stored:  # every token anywhere in the database opens with the new key alone
        try:
            Fernet(KEY_NEW.encode()).decrypt(token.encode())
        except InvalidToken:
            pytest.fail(f"{where} keeps a token only the dropped key opens")
    assert Cluster.objects.get().sasl_password() == "sasl-rotate-me"
    for name in ("client_key", "oauth_client_secret", "kerberos_keytab"):
        assert Cluster.objects.get().secret(name) == f"{name}-rotate-me"
    channel = NotificationChannel.objects.get()
    assert crypto.decrypt(channel.url_encrypted) == "https://hooks.example.com/T0K3N/in"
    assert crypto.decrypt(channel.secret_encrypted) == answer["secret"]
    replayed = replay()
    assert replayed.status_code == 201 and replayed["Idempotent-Replayed"] == "true"
    assert replayed.json() == answer and IdempotencyRecord.objects.count() == 1
    held.refresh_from_db()
    (change,) = held.payload["changes"]
    assert crypto.decrypt(change["value_encrypted"]) == secret_value
    # The same plaintext under a new key: the review's pin and its first approval follow the payload.
    new_digest = approvals.payload_digest(held.payload)
    assert held.payload_sha256 == new_digest != old_digest
    assert list(ChangeApproval.objects.values_list("payload_sha256", flat=True)) == [new_digest]
    try:
        done = changes.approve_change(actor=personas["admin"], request=held)
        assert done.state == RequestState.APPROVED, done.review
        done = base.run_queued(done)
        assert done.state == RequestState.SUCCEEDED, done.result
    finally:
        with gate.passed("broker.config"):  # leave the shared sandbox as it was
            configs.alter_configs(
                actor=personas["admin"], cluster=Cluster.objects.get(), resource=configs.broker_resource("1"),
                changes=[ConfigChange("ssl.truststore.password", "DELETE", None)],
            )  # fmt: skip
    report = out.getvalue()
    for label in FIELDS:
        assert re.search(rf"{re.escape(label)}: 1 re-encrypted, 0 already current", report), report
    event = AuditEvent.objects.get(action="secrets.rotate")
    assert event.outcome == "success" and sorted(event.targets) == sorted(FIELDS)
    assert event.params["columns"] == [
        {"column": label, "rotated": 1, "already_current": 0} for label in sorted(FIELDS)
    ]
    assert event.params["repinned"] == {f"request:{held.pk}": [old_digest, new_digest]}
    text = str(event.params)
    assert not any(s in text for s in ("sasl-rotate-me", secret_value, answer["secret"], "T0K3N"))


def test_it_counts_values_already_under_the_current_key_and_audits_nothing_when_none_moved(
    kafka_cluster, keys
):
    keys(KEY_NEW)
    kafka_cluster.set_sasl_password("already-new")
    kafka_cluster.save()
    out = io.StringIO()
    call_command("rotate_secrets", stdout=out)
    assert "console.Cluster.sasl_password_encrypted: 0 re-encrypted, 1 already current" in out.getvalue()
    assert not AuditEvent.objects.filter(action="secrets.rotate").exists()


def test_it_refuses_with_nothing_changed_when_a_value_opens_with_no_key(kafka_cluster, keys):
    keys(KEY_OLD)
    kafka_cluster.set_sasl_password("still-fine")
    kafka_cluster.save()
    before = Cluster.objects.get().sasl_password_encrypted
    keys(Fernet.generate_key().decode())  # a key since lost
    channel = NotificationChannel.objects.create(
        cluster=kafka_cluster,
        name="lost-hook",
        kind="webhook",
        url_encrypted=crypto.encrypt("https://x.example/"),
    )
    keys(KEY_NEW, KEY_OLD)
    with pytest.raises(CommandError) as refused:
        call_command("rotate_secrets", stdout=io.StringIO())
    message = str(refused.value)
    assert f"console.NotificationChannel.url_encrypted of #{channel.pk}" in message
    assert "'lost-hook'" in message and "nothing was re-encrypted" in message
    assert Cluster.objects.get().sasl_password_encrypted == before  # not half rotated
    event = AuditEvent.objects.get(action="secrets.rotate")
    assert event.outcome == "refused" and f"#{channel.pk}" in event.params["reason"]


def test_it_knows_every_encrypted_column_of_every_model():
    """A column named *_encrypted must be declared with crypto's field classes, which is what
    rotate_secrets finds through the app registry; a key holding a token inside a JSON column must be
    declared by that column."""
    known = {c.label for c in crypto.encrypted_columns()}
    assert FIELDS <= known
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if field.name.endswith("_encrypted"):
                assert f"{model._meta.label}.{field.name}" in known, (
                    f"{model._meta.label}.{field.name} is not declared with crypto.EncryptedTextField"
                )
    json_keys = {k for c in crypto.encrypted_columns() for k in c.keys}
    field_names = {c.field.name for c in crypto.encrypted_columns()}
    for path in CONSOLE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for name in re.findall(r"""["'](\w+_encrypted)["']""", path.read_text()):
            assert name in field_names or name in json_keys, (
                f"{path.relative_to(CONSOLE.parent)} keeps a token under {name!r} in a column that does not "
                "declare it (crypto.EncryptedJSONField(encrypted_keys=...))"
            )


def test_it_discovers_a_new_encrypted_column_through_the_app_registry():
    with isolate_apps("console") as registry:

        class Vault(models.Model):
            token = crypto.EncryptedTextField(blank=True)

            class Meta:
                app_label = "console"

            def __str__(self) -> str:
                return "vault"

        assert [c.label for c in crypto.encrypted_columns(registry)] == ["console.Vault.token"]


def test_it_only_reports_on_a_dry_run(kafka_cluster, keys):
    keys(KEY_OLD)
    kafka_cluster.set_sasl_password("dry")
    kafka_cluster.save()
    before = Cluster.objects.get().sasl_password_encrypted
    keys(KEY_NEW, KEY_OLD)
    out = io.StringIO()
    call_command("rotate_secrets", "--dry-run", stdout=out)
    assert "console.Cluster.sasl_password_encrypted: 1 to re-encrypt, 0 already current" in out.getvalue()
    assert "nothing was changed" in out.getvalue()
    assert Cluster.objects.get().sasl_password_encrypted == before
    assert not AuditEvent.objects.filter(action="secrets.rotate").exists()


def test_it_leaves_a_held_payload_that_no_longer_matches_its_review_refused(kafka_cluster, personas, keys):
    keys(KEY_OLD)
    payload = {"changes": [{"name": "ssl.key.password", "op": "SET", "value_encrypted": crypto.encrypt("x")}]}
    held = ChangeRequest.objects.create(
        cluster=kafka_cluster, kind="change.config", resource="1", payload=payload, gated=True,
        requested_by=personas["operator"], requested_by_name="operator", payload_sha256="0" * 64,
    )  # fmt: skip
    keys(KEY_NEW, KEY_OLD)
    call_command("rotate_secrets", stdout=io.StringIO())
    held.refresh_from_db()
    assert crypto.current(held.payload["changes"][0]["value_encrypted"])
    assert held.payload_sha256 == "0" * 64  # not re-pinned: a tampered payload is not laundered
    assert AuditEvent.objects.get(action="secrets.rotate").params["repinned"] == {}
