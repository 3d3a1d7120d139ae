"""Anchors for an external witness (issue 14 finding #4): `audit_anchor` saves the head outside the
database; `audit_verify --anchor` catches the newest events removed together with the head."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from console.audit import archive as audit_archive
from console.audit import store as audit
from console.integrity import chain as audit_chain
from console.models import AuditEvent
from tests.conftest import make_personas
from tests.unit.test_audit_keyed import _edit, _write

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(offline_cluster):
    return make_personas(offline_cluster)


def _truncate_to(last: AuditEvent, *, forget_marker: bool = True) -> None:
    with connection.cursor() as cur:
        cur.execute("DELETE FROM console_auditevent WHERE id > %s", [last.pk])
        cur.execute("DELETE FROM console_audittarget WHERE event_id > %s", [last.pk])
        cur.execute("UPDATE console_auditchainhead SET last_id = %s, last_hash = %s", [last.pk, last.hash])
        if forget_marker:
            cur.execute("UPDATE console_auditchainhead SET verified_marker = '{}', verified_mac = ''")


def test_truncation_with_the_head_is_caught_by_a_saved_anchor(tmp_path, capsys):
    events = _write(5)
    saved = tmp_path / "anchor.json"
    call_command("audit_anchor", "--out", str(saved))
    anchor = json.loads(saved.read_text())
    assert (anchor["id"], anchor["hash"]) == (events[-1].pk, events[-1].hash)
    assert anchor["time"] == events[-1].created_at.isoformat() and anchor["anchored_at"]
    call_command("audit_verify", "--anchor", str(saved))
    assert "holds" in capsys.readouterr().out
    _truncate_to(events[2])
    call_command("audit_verify")  # without a witness the shorter chain is consistent
    with pytest.raises(CommandError, match=f"ends at event {events[2].pk}.*truncated"):
        call_command("audit_verify", "--anchor", str(saved))


def test_truncation_then_new_events_do_not_match_the_anchor(tmp_path):
    events = _write(4)
    saved = tmp_path / "anchor.json"
    call_command("audit_anchor", "--out", str(saved))
    _truncate_to(events[1])
    _write(3)  # the ids come back, with other hashes
    with pytest.raises(CommandError, match=f"event {events[-1].pk} does not have the anchored hash"):
        call_command("audit_verify", "--anchor", str(saved))


def test_the_signed_marker_also_notices_truncation_while_it_survives(people):
    events = _write(4)
    assert audit_chain.chain_status(actor=people["auditor"]).ok
    _truncate_to(events[1], forget_marker=False)
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.broken_at) == (False, events[-1].pk)
    assert "events were removed" in status.reason
    assert not audit.verify_chain().ok


def test_audit_anchor_writes_json_to_stdout_and_refuses_a_broken_chain(capsys):
    assert json.loads(_anchor_stdout(capsys))["id"] == 0  # an empty chain anchors at genesis
    events = _write(2)
    assert json.loads(_anchor_stdout(capsys))["hash"] == events[-1].hash
    _edit(events[0].pk)
    with pytest.raises(CommandError, match="BROKEN.*No anchor was written"):
        call_command("audit_anchor")


def _anchor_stdout(capsys) -> str:
    call_command("audit_anchor")
    return capsys.readouterr().out


@pytest.mark.parametrize("text", ["nope", "[]", '{"id": "1", "hash": "x"}', '{"id": 1, "hash": "abc"}'])
def test_a_malformed_anchor_is_refused(tmp_path, text):
    _write(1)
    bad = tmp_path / "a.json"
    bad.write_text(text)
    with pytest.raises(CommandError, match="Cannot read the anchor"):
        call_command("audit_verify", "--anchor", str(bad))


def test_an_anchor_older_than_the_archive_is_reported_not_checked(tmp_path, capsys):
    events = _write(5)
    saved = tmp_path / "anchor.json"
    call_command("audit_anchor", "--out", str(saved))
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"id": events[1].pk, "hash": events[1].hash}))
    audit_archive.archive_events(out=tmp_path / "a.jsonl", before_id=events[3].pk)
    capsys.readouterr()
    call_command("audit_verify", "--anchor", str(old), "--anchor", str(saved))
    out = capsys.readouterr().out
    assert f"event {events[1].pk} not checked: event {events[1].pk} was archived" in out
    assert f"event {events[-1].pk} holds" in out
