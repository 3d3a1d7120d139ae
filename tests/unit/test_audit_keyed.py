"""The keyed audit chain (issue 14 finding #4): without AUDIT_HMAC_KEY nobody can rewrite the chain and
re-hash it, the audit page checks every kept event, and an anchor kept outside catches truncation."""

from __future__ import annotations

import hashlib
import json
from importlib import import_module

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.urls import reverse

from console.audit import audit_names, marker
from console.audit import store as audit
from console.integrity import chain as audit_chain
from console.models import AuditChainHead, AuditEvent
from tests.conftest import make_personas
from tests.pg import database_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(offline_cluster):
    return make_personas(offline_cluster)


def _write(n: int) -> list[AuditEvent]:
    events = []
    for i in range(n):
        with transaction.atomic():
            events.append(
                audit.record(actor=None, action="topic.create", targets=[f"topic:t{i}"], params={"i": i})
            )
    return events


def _sha256(payload: dict) -> str:
    """What an attacker without the key can compute (the old, unkeyed rule)."""
    return hashlib.sha256(
        json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()


def _rewrite_and_rehash(first_id: int, hasher=_sha256) -> None:
    """Edit event first_id, then re-hash it and every later event, and move the head: a consistent forgery."""
    prev = None
    with connection.cursor() as cur:
        for event in AuditEvent.objects.filter(id__gte=first_id).order_by("id"):
            payload = event.payload()
            if event.pk == first_id:
                payload["actor_name"] = "mallory"
            if prev is not None:
                payload["prev_hash"] = prev
            prev = hasher(payload)
            cur.execute(
                "UPDATE console_auditevent SET actor_name = %s, prev_hash = %s, hash = %s WHERE id = %s",
                [payload["actor_name"], payload["prev_hash"], prev, event.pk],
            )
        cur.execute("UPDATE console_auditchainhead SET last_hash = %s", [prev])


def _edit(event_id: int, params: str = '{"edited": true}') -> None:
    with connection.cursor() as cur:
        cur.execute("UPDATE console_auditevent SET params = %s WHERE id = %s", [params, event_id])


# (a) rewrite + re-hash without the key


def test_a_rewritten_and_fully_re_hashed_chain_fails_verification():
    events = _write(5)
    _rewrite_and_rehash(events[1].pk)
    status = audit.verify_chain()
    assert (status.ok, status.broken_at, status.verified_up_to) == (False, events[1].pk, events[0].pk)
    assert "AUDIT_HMAC_KEY" in status.reason
    with pytest.raises(CommandError, match=f"BROKEN at event {events[1].pk}"):
        call_command("audit_verify")


def test_re_hashing_with_a_guessed_key_fails_too():
    events = _write(4)
    guessed = import_module("console.models.audit").keyed_hash
    _rewrite_and_rehash(events[2].pk, hasher=lambda payload: guessed(payload, "not-the-key"))
    status = audit.verify_chain()
    assert (status.ok, status.broken_at) == (False, events[2].pk)


# (c) the page checks the whole chain: an old, already verified event edited


@pytest.mark.parametrize("which", [0, 2])
def test_the_page_notices_an_edit_to_an_old_already_verified_event(client, people, which):
    events = _write(5)
    assert audit_chain.chain_status(actor=people["auditor"]).ok
    _write(1)
    assert audit_chain.chain_status(actor=people["auditor"]).ok  # the marker moved past events[which]
    _edit(events[which].pk)
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.broken_at) == (False, events[which].pk)
    assert "differ from those verified" in status.note
    client.force_login(people["auditor"])
    body = client.get(reverse("audit_chain")).content.decode()
    assert f"Chain broken</strong> at event {events[which].pk}" in body and "Chain intact" not in body


def test_the_page_re_hashes_only_the_events_after_the_marker(people):
    _write(6)
    first = audit_chain.chain_status(actor=people["auditor"])
    assert (first.ok, first.count, first.walked) == (True, 6, 6)
    _write(2)
    second = audit_chain.chain_status(actor=people["auditor"])
    assert (second.ok, second.count, second.walked, second.note) == (True, 8, 2, "")


def test_the_page_notices_an_old_event_rewritten_with_its_later_links(people):
    events = _write(5)
    assert audit_chain.chain_status(actor=people["auditor"]).ok
    _rewrite_and_rehash(events[1].pk)
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.broken_at) == (False, events[1].pk)


# (d) a forged marker does not skip verification


def _forge_marker(mac: str) -> None:
    """A marker for the current (tampered) rows: the digest needs no key, the MAC does."""
    head = AuditChainHead.objects.get(pk=1)
    digest, count, last = marker.digest_rows(0, audit.GENESIS_HASH, head.last_id)
    forged = marker.Marker(0, audit.GENESIS_HASH, last, head.last_hash, count, digest, "2026-01-01T00:00:00")
    AuditChainHead.objects.filter(pk=1).update(verified_marker=forged.__dict__, verified_mac=mac)


@pytest.mark.parametrize("mac", ["", "0" * 64, "stolen"])
def test_a_forged_marker_does_not_skip_verification(people, mac):
    events = _write(4)
    assert audit_chain.chain_status(actor=people["auditor"]).ok
    if mac == "stolen":
        mac = AuditChainHead.objects.get(pk=1).verified_mac  # the real MAC, over other content
    _edit(events[1].pk)
    _forge_marker(mac)
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.broken_at) == (False, events[1].pk)
    assert "not signed with AUDIT_HMAC_KEY" in status.note
    assert not audit.verify_chain().ok


# (e) the key is needed, and the database never holds it


def test_the_key_is_not_in_the_database_and_a_wrong_key_is_named(settings, people, tmp_path):
    events = _write(3)
    assert audit_chain.chain_status(actor=people["auditor"]).ok  # a signed marker is stored too
    call_command("audit_anchor", "--out", str(tmp_path / "a.json"))
    dump = database_text(connection)  # SQLite's dump, or every row on PostgreSQL
    assert events[-1].hash in dump and settings.AUDIT_HMAC_KEY not in dump
    key_bytes = settings.AUDIT_HMAC_KEY.encode()
    assert key_bytes.hex() not in dump
    settings.AUDIT_HMAC_KEY = "another-key"
    status = audit.verify_chain()
    assert (status.ok, status.broken_at) == (False, events[0].pk)
    assert "AUDIT_HMAC_KEY is not the key the trail was written with" in status.reason
    assert "not signed with AUDIT_HMAC_KEY" in status.note
    page = audit_chain.chain_status(actor=people["auditor"])
    assert (page.ok, page.broken_at) == (False, events[0].pk)


def test_an_empty_key_is_refused(settings):
    from django.core.exceptions import ImproperlyConfigured

    settings.AUDIT_HMAC_KEY = ""
    with pytest.raises(ImproperlyConfigured, match="AUDIT_HMAC_KEY"):
        _write(1)


# Legacy events (written with plain SHA-256 before the key) and the keyed cut-over


@pytest.fixture
def legacy_trail(monkeypatch):
    """Three events as the unkeyed code wrote them, then the migration's keyed audit.rekey cut-over."""
    from django.apps import apps

    with monkeypatch.context() as m:
        m.setattr(AuditEvent, "compute_hash", AuditEvent.legacy_hash)
        legacy = _write(3)
    import_module("console.migrations.0010_audit_keyed_chain").cut_over(apps, None)
    return legacy


def test_legacy_events_verify_up_to_the_keyed_cut_over(legacy_trail):
    rekey = AuditEvent.objects.get(action=audit_names.REKEY)
    assert rekey.pk == legacy_trail[-1].pk + 1 and rekey.prev_hash == legacy_trail[-1].hash
    assert rekey.params["legacy_up_to"] == {"id": legacy_trail[-1].pk, "hash": legacy_trail[-1].hash}
    after = _write(2)
    status = audit.verify_chain()
    assert (status.ok, status.count, status.verified_up_to) == (True, 6, after[-1].pk)
    _edit(legacy_trail[1].pk)
    status = audit.verify_chain()
    assert (status.ok, status.broken_at) == (False, legacy_trail[1].pk) and "legacy" in status.reason


def test_the_cut_over_cannot_be_moved_or_skipped(legacy_trail):
    after = _write(2)
    # Claiming a keyed event as legacy (to re-hash it without the key) breaks the cut-over's own HMAC.
    rekey = AuditEvent.objects.get(action=audit_names.REKEY)
    moved = {**rekey.params, "legacy_up_to": {"id": after[0].pk, "hash": after[0].hash}}
    _edit(rekey.pk, json.dumps(moved))
    assert audit.legacy_cutover() == 0
    status = audit.verify_chain()
    assert (status.ok, status.broken_at) == (False, legacy_trail[0].pk)


def test_an_event_after_the_cut_over_rehashed_the_legacy_way_fails(legacy_trail):
    after = _write(3)
    _rewrite_and_rehash(after[1].pk)
    status = audit.verify_chain()
    assert (status.ok, status.broken_at) == (False, after[1].pk)


def test_the_cut_over_is_a_no_op_on_a_new_trail():
    from django.apps import apps

    import_module("console.migrations.0010_audit_keyed_chain").cut_over(apps, None)
    assert not AuditEvent.objects.exists()


def test_after_an_archive_the_page_walks_from_the_new_anchor_then_uses_the_marker_again(people, tmp_path):
    from console.audit import archive as audit_archive

    events = _write(5)
    assert audit_chain.chain_status(actor=people["auditor"]).ok
    audit_archive.archive_events(out=tmp_path / "a.jsonl", before_id=events[3].pk)
    moved = audit_chain.chain_status(actor=people["auditor"])
    assert (moved.ok, moved.archived_up_to, moved.count, moved.walked) == (True, events[2].pk, 3, 3)
    again = audit_chain.chain_status(actor=people["auditor"])
    assert (again.ok, again.count, again.walked) == (True, 3, 0)
    _edit(events[3].pk)
    assert audit_chain.chain_status(actor=people["auditor"]).broken_at == events[3].pk


def test_the_full_verification_signs_the_marker_the_page_then_uses(people):
    _write(4)
    assert AuditChainHead.objects.get(pk=1).verified_mac == ""
    assert audit.verify_chain().ok
    assert marker.load(AuditChainHead.objects.get(pk=1))[0].count == 4
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.count, status.walked) == (True, 4, 0)
