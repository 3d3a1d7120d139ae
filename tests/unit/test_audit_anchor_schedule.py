"""Scheduled audit anchors (issue 33, item 9): beat appends the chain's signed head to a file outside the
database; the audit page and `audit_verify` check the chain against the latest line and report truncation
(failure), a tampered anchor (failure) and a missing or unreadable file (warning)."""

from __future__ import annotations

import json
import logging
import stat
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from console.audit import anchor
from console.integrity import chain as audit_chain
from console.models import AuditEvent
from tasks import audit as audit_tasks
from tasks.celery import _beat_schedule
from tests.conftest import make_personas
from tests.unit.test_audit_anchor import _truncate_to
from tests.unit.test_audit_keyed import _write

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(offline_cluster):
    return make_personas(offline_cluster)


@pytest.fixture
def anchor_dir(settings, tmp_path) -> Path:
    settings.CONSOLE_AUDIT_ANCHOR_DIR = str(tmp_path / "anchors")
    return tmp_path / "anchors"


def _lines(anchor_dir: Path) -> list[str]:
    return (anchor_dir / anchor.ANCHOR_FILE).read_text().splitlines()


@pytest.fixture
def page(client, people):
    """The audit page's chain fragment, read by the auditor (logged in first: a log-in is an event)."""
    client.force_login(people["auditor"])
    return lambda: client.get(reverse("audit_chain")).content.decode()


def test_it_schedules_the_anchor_task_on_beat_at_the_configured_interval(settings):
    settings.CONSOLE_AUDIT_ANCHOR_EVERY_S = 900
    entries = [e for e in _beat_schedule().values() if e["task"] == "tasks.audit.write_anchor"]
    assert entries == [{"task": "tasks.audit.write_anchor", "schedule": 900.0}]
    assert audit_tasks.write_anchor.name == "tasks.audit.write_anchor"


def test_it_appends_a_signed_anchor_outside_the_database_only_when_the_head_moved(anchor_dir):
    events = _write(3)
    rows = AuditEvent.objects.count()
    assert audit_tasks.write_anchor() == "written"
    assert AuditEvent.objects.count() == rows  # nothing about the anchor is stored in the database
    assert stat.S_IMODE(anchor_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE((anchor_dir / anchor.ANCHOR_FILE).stat().st_mode) == 0o600
    [first] = _lines(anchor_dir)
    line = json.loads(first)
    assert (line["id"], line["hash"], line["v"]) == (events[-1].pk, events[-1].hash, 1)
    assert line["time"] == events[-1].created_at.isoformat() and len(line["mac"]) == 64
    assert audit_tasks.write_anchor() == "unchanged"  # the head has not moved: no new line
    assert _lines(anchor_dir) == [first]
    more = _write(1)
    assert audit_tasks.write_anchor() == "written"
    lines = _lines(anchor_dir)
    assert lines[0] == first and len(lines) == 2  # old lines are never rewritten
    assert json.loads(lines[1])["id"] == more[0].pk
    check = anchor.check_latest()
    assert (check.level, check.anchor_id) == ("ok", more[0].pk)


def test_it_reports_the_newest_events_deleted_after_an_anchor_on_the_page_and_in_audit_verify(
    anchor_dir, page, people
):
    events = _write(6)
    assert audit_tasks.write_anchor() == "written"
    _truncate_to(events[2])  # the last 3 rows, the head moved back and the signed marker cleared
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.broken_at, status.anchor_check.level) == (False, events[-1].pk, "failure")
    expected = (
        f"the chain ends at event {events[2].pk}, before the anchored event {events[-1].pk}: "
        "the newest events were removed (truncated)"
    )
    assert expected in status.reason
    body = page()
    assert "Chain broken" in body and "Chain intact" not in body and expected in body
    with pytest.raises(CommandError, match=rf"BROKEN at event {events[-1].pk}.*\(truncated\)"):
        call_command("audit_verify")
    # the next scheduled run does not anchor the shorter chain (which would hide the removal)
    assert audit_tasks.write_anchor() == "refused"
    assert len(_lines(anchor_dir)) == 1
    assert not audit_chain.chain_status(actor=people["auditor"]).ok


def test_it_reports_events_removed_and_written_again_after_an_anchor(anchor_dir):
    events = _write(4)
    audit_tasks.write_anchor()
    _truncate_to(events[1])
    _write(3)  # the ids come back, with other hashes
    with pytest.raises(CommandError, match=f"event {events[-1].pk} does not have the anchored hash"):
        call_command("audit_verify")


def _forge_hash(line: str) -> str:
    data = json.loads(line)
    data["hash"] = "0" * 64
    return json.dumps(data)


def _drop_mac(line: str) -> str:
    data = json.loads(line)
    del data["mac"]
    return json.dumps(data)


@pytest.mark.parametrize("tamper", [_forge_hash, _drop_mac, lambda line: "not json"])
def test_it_fails_on_a_tampered_latest_anchor(anchor_dir, page, people, tamper):
    _write(2)
    audit_tasks.write_anchor()
    path = anchor_dir / anchor.ANCHOR_FILE
    path.write_text(tamper(_lines(anchor_dir)[0]) + "\n")
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.broken_at, status.anchor_check.level) == (False, None, "failure")
    assert f"the latest anchor in {path} is not a signed anchor" in status.reason
    body = page()
    assert "Audit check failed" in body and "Chain intact" not in body
    with pytest.raises(CommandError, match="FAILED.*is not a signed anchor"):
        call_command("audit_verify")
    assert audit_tasks.write_anchor() == "refused"  # a new line would hide the tampered one


def test_it_warns_when_the_anchor_file_is_missing(anchor_dir, page, people, capsys):
    _write(2)
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.anchor_check.level, status.anchor_check.anchor_id) == (True, "warning", None)
    assert f"no anchor file at {anchor_dir / anchor.ANCHOR_FILE}" in status.anchor_check.message
    body = page()
    assert "Chain intact" in body and "no anchor file at" in body
    call_command("audit_verify")
    captured = capsys.readouterr()
    assert "Warning: no anchor file at" in captured.err
    assert f"intact: {AuditEvent.objects.count()} events" in captured.out


def test_it_does_not_fail_when_the_directory_cannot_be_written_and_logs_once(
    settings, tmp_path, caplog, people
):
    (tmp_path / "a-file").write_text("")
    settings.CONSOLE_AUDIT_ANCHOR_DIR = str(tmp_path / "a-file" / "anchors")  # cannot be created
    _write(1)
    with caplog.at_level(logging.WARNING, logger="console.audit.anchor"):
        assert audit_tasks.write_anchor() == "unwritable"
        assert audit_tasks.write_anchor() == "unwritable"
    assert [r.levelname for r in caplog.records] == ["ERROR"]
    assert "cannot write the audit anchor" in caplog.records[0].getMessage()
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.anchor_check.level) == (True, "warning")
    assert "cannot be read" in status.anchor_check.message and "can write to" in status.anchor_check.message


def test_it_warns_when_new_events_stay_unanchored_for_two_intervals(anchor_dir, settings, people):
    _write(1)
    audit_tasks.write_anchor()
    later = _write(1)
    settings.CONSOLE_AUDIT_ANCHOR_EVERY_S = 0.01
    time.sleep(0.05)
    status = audit_chain.chain_status(actor=people["auditor"])
    assert (status.ok, status.anchor_check.level) == (True, "warning")
    assert f"event {later[0].pk} of " in status.anchor_check.message
    assert "is not anchored yet" in status.anchor_check.message


def test_audit_anchor_append_writes_the_same_signed_line_as_the_task(anchor_dir, capsys):
    events = _write(2)
    call_command("audit_anchor", "--append")
    assert json.loads(_lines(anchor_dir)[0])["id"] == events[-1].pk
    assert "Anchored the audit chain at event" in capsys.readouterr().err
    call_command("audit_anchor", "--append")
    assert len(_lines(anchor_dir)) == 1


def test_it_fails_the_full_re_verify_operation_on_a_tampered_latest_anchor(anchor_dir, people):
    from console import operations
    from console.models import OperationState

    _write(2)
    audit_tasks.write_anchor()
    path = anchor_dir / anchor.ANCHOR_FILE
    path.write_text(_forge_hash(_lines(anchor_dir)[0]) + "\n")
    op = audit_chain.start_verify(actor=people["auditor"])
    operations.run(op.pk, worker="test")
    op.refresh_from_db()
    assert op.state == OperationState.FAILED
    assert op.result["broken_at"] is None and op.result["anchor_check"]["level"] == "failure"
    assert op.error.startswith(f"failed: the latest anchor in {path} is not a signed anchor")


def test_it_reads_past_a_line_an_interrupted_write_left_unfinished_and_ends_it_on_the_next_append(
    anchor_dir,
):
    _write(1)
    audit_tasks.write_anchor()
    [first] = _lines(anchor_dir)
    with (anchor_dir / anchor.ANCHOR_FILE).open("a") as fh:
        fh.write('{"anchored_at": "2026-')  # a crash mid-write: no newline
    assert anchor.check_latest().level == "ok"
    later = _write(1)
    assert audit_tasks.write_anchor() == "written"
    lines = _lines(anchor_dir)
    assert lines[:2] == [first, '{"anchored_at": "2026-'] and json.loads(lines[2])["id"] == later[0].pk
    assert (anchor.check_latest().level, anchor.check_latest().anchor_id) == ("ok", later[0].pk)
