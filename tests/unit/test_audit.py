"""The audit chain: append-only, hash-linked, and tampering is named by event."""

from __future__ import annotations

import datetime as dt
import json
from datetime import timedelta
from decimal import Decimal
from importlib import import_module

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from console.audit import archive as audit_archive
from console.audit import store as audit
from console.models import AuditChainHead, AuditEvent, AuditImmutableError, AuditTarget
from console.models.reassignment import PartitionState

pytestmark = pytest.mark.django_db


def _write(n: int, actor=None) -> list[AuditEvent]:
    events = []
    for i in range(n):
        with transaction.atomic():
            events.append(
                audit.record(
                    actor=actor,
                    action="topic.create",
                    targets=[f"topic:t{i}"],
                    params={"partitions": i, "sasl_password": "hunter2", "configs": {"retention.ms": "1000"}},
                    outcomes={f"topic:t{i}": {"ok": True}},
                )
            )
    return events


def _tamper(sql: str, params: list | None = None) -> None:
    """Change the audit tables behind the ORM's back, as someone with database access could."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_it_links_each_event_to_the_one_before():
    events = _write(3)
    assert events[0].prev_hash == audit.GENESIS_HASH
    assert [e.prev_hash for e in events[1:]] == [e.hash for e in events[:-1]]
    status = audit.verify_chain()
    assert (status.ok, status.count, status.verified_up_to) == (True, 3, events[-1].pk)


def test_it_masks_secrets_in_parameters():
    (event,) = _write(1)
    stored = AuditEvent.objects.get(pk=event.pk)
    assert stored.params["sasl_password"] == audit.MASK
    assert stored.params["configs"] == {"retention.ms": "1000"}


def test_it_masks_configs_named_sensitive_by_kafka():
    with transaction.atomic():
        event = audit.record(
            actor=None,
            action="config.alter",
            before={"ssl.truststore.location": "/a", "custom.secretish": "x"},
            after={"ssl.truststore.location": "/b", "custom.secretish": "y"},
            sensitive_keys=["custom.secretish"],
        )
    assert event.after == {"ssl.truststore.location": "/b", "custom.secretish": audit.MASK}


def test_it_refuses_updates_and_deletes_through_the_orm():
    (event,) = _write(1)
    event.action = "something.else"
    with pytest.raises(AuditImmutableError):
        event.save()
    with pytest.raises(AuditImmutableError):
        event.delete()
    with pytest.raises(AuditImmutableError):
        AuditEvent.objects.filter(pk=event.pk).update(action="x")
    with pytest.raises(AuditImmutableError):
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.get(pk=event.pk).action == "topic.create"


@pytest.mark.django_db(transaction=True)
def test_it_must_be_written_inside_the_change_transaction():
    with pytest.raises(RuntimeError, match="same transaction|transaction"):
        audit.record(actor=None, action="topic.create")


EDIT_ACTOR = "UPDATE console_auditevent SET actor_name = 'mallory' WHERE id = %s"
DELETE_EVENT = "DELETE FROM console_auditevent WHERE id = %s"


@pytest.mark.parametrize(
    ("written", "sql", "tampered", "broken", "verified", "reason"),
    [
        pytest.param(4, EDIT_ACTOR, 2, 2, 1, "edited", id="an-edited-event"),
        pytest.param(4, DELETE_EVENT, 1, 2, 0, "missing", id="the-link-after-a-deleted-event"),
        pytest.param(3, DELETE_EVENT, 2, 2, 1, "removed", id="the-newest-event-removed"),
    ],
)
def test_it_names_where_tampering_broke_the_chain(written, sql, tampered, broken, verified, reason):
    events = _write(written)
    _tamper(sql, [events[tampered].pk])
    status = audit.verify_chain()
    assert (status.ok, status.broken_at, status.verified_up_to) == (
        False,
        events[broken].pk,
        events[verified].pk,
    )
    assert reason in status.reason


def test_audit_verify_command_reports_intact_and_broken_chains(capsys):
    events = _write(2)
    call_command("audit_verify")
    assert "intact: 2 events" in capsys.readouterr().out
    _tamper("UPDATE console_auditevent SET params = '{}' WHERE id = %s", [events[0].pk])
    with pytest.raises(CommandError, match=f"BROKEN at event {events[0].pk}"):
        call_command("audit_verify")


def test_archive_exports_then_prunes_and_the_chain_verifies_from_the_anchor(tmp_path, capsys):
    events = _write(5)
    out = tmp_path / "audit-1.jsonl"
    call_command("audit_archive", "--before", str(events[3].pk), "--out", str(out))
    assert f"anchored at event {events[2].pk}" in capsys.readouterr().out
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines] == [e.pk for e in events[:3]]
    assert [line["hash"] for line in lines] == [e.hash for e in events[:3]]
    assert lines[0]["prev_hash"] == audit.GENESIS_HASH and lines[0]["targets"] == ["topic:t0"]
    assert not AuditEvent.objects.filter(pk__lte=events[2].pk).exists()
    assert not AuditTarget.objects.filter(event_id__lte=events[2].pk).exists()
    head = AuditChainHead.objects.get(pk=1)
    assert (head.anchor_id, head.anchor_hash) == (events[2].pk, events[2].hash)
    archive = AuditEvent.objects.get(action="audit.archive")
    assert archive.params["anchor"] == {"id": events[2].pk, "hash": events[2].hash}
    assert archive.params["count"] == 3 and archive.params["file"] == "audit-1.jsonl"
    status = audit.verify_chain()
    assert (status.ok, status.archived_up_to, status.count) == (True, events[2].pk, 3)  # 2 kept + archive
    call_command("audit_verify")
    assert f"archived up to event {events[2].pk}" in capsys.readouterr().out


def test_archive_by_date_and_the_anchor_moves_forward(tmp_path):
    events = _write(4)
    with pytest.raises(CommandError, match="No events to archive"):
        call_command("audit_archive", "--before", "2000-01-01", "--out", str(tmp_path / "none.jsonl"))
    assert not (tmp_path / "none.jsonl").exists()
    audit_archive.archive_events(out=tmp_path / "a.jsonl", before_id=events[2].pk)
    cut = (timezone.now() + timedelta(minutes=1)).isoformat()
    call_command("audit_archive", "--before", cut, "--out", str(tmp_path / "b.jsonl"))
    second = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert second[0]["id"] == events[2].pk and second[0]["prev_hash"] == events[1].hash  # continues file a
    assert AuditEvent.objects.count() == 1  # only the newest audit.archive event is left
    status = audit.verify_chain()
    assert status.ok and status.archived_up_to == second[-1]["id"]
    with pytest.raises(CommandError, match="never overwritten"):
        call_command("audit_archive", "--before", cut, "--out", str(tmp_path / "b.jsonl"))
    with pytest.raises(CommandError, match="event id or an ISO date"):
        call_command("audit_archive", "--before", "last tuesday", "--out", str(tmp_path / "c.jsonl"))


def test_deleting_rows_outside_the_archive_command_is_still_detected(tmp_path):
    events = _write(6)
    audit_archive.archive_events(out=tmp_path / "a.jsonl", before_id=events[2].pk)
    _tamper("DELETE FROM console_auditevent WHERE id = %s", [events[2].pk])  # first kept event
    status = audit.verify_chain()
    assert (status.ok, status.broken_at) == (False, events[3].pk)
    assert "missing" in status.reason and status.verified_up_to == events[1].pk


def test_an_anchor_moved_without_an_archive_event_is_detected():
    events = _write(4)
    _tamper("DELETE FROM console_auditevent WHERE id <= %s", [events[1].pk])
    _tamper(
        "UPDATE console_auditchainhead SET anchor_id = %s, anchor_hash = %s", [events[1].pk, events[1].hash]
    )
    status = audit.verify_chain()
    assert (status.ok, status.broken_at) == (False, events[1].pk)
    assert "not the one an audit.archive event recorded" in status.reason


def test_archiving_a_broken_chain_is_refused_and_deletes_nothing(tmp_path):
    events = _write(3)
    _tamper("UPDATE console_auditevent SET params = '{}' WHERE id = %s", [events[1].pk])
    with pytest.raises(audit_archive.AuditArchiveError, match=f"broken at event {events[1].pk}"):
        audit_archive.archive_events(out=tmp_path / "a.jsonl", before_id=events[2].pk + 1)
    assert AuditEvent.objects.count() == 3 and list(tmp_path.iterdir()) == []
    assert AuditChainHead.objects.get(pk=1).anchor_id == 0


def test_the_migration_backfills_the_target_index_from_existing_events():
    from django.apps import apps

    backfill = import_module("console.migrations.0005_audit_targets").backfill_targets
    events = _write(3)
    _tamper("DELETE FROM console_audittarget")
    backfill(apps, None)
    rows = AuditTarget.objects.order_by("event_id").values_list("event_id", "target", "name")
    assert list(rows) == [(e.pk, f"topic:t{i}", f"t{i}") for i, e in enumerate(events)]
    assert audit.verify_chain().ok


def test_an_event_indexes_each_distinct_target_once_with_its_name():
    from console.models.audit import TARGET_MAX

    long = "topic:" + "x" * (TARGET_MAX + 50)
    targets = ["topic:a", "group:g:1", "topic:a", "bare", long, *(f"topic:t{i}" for i in range(1000))]
    with transaction.atomic():
        event = audit.record(actor=None, action="topic.create", targets=targets)
    with transaction.atomic():
        empty = audit.record(actor=None, action="cluster.check", targets=[])
    rows = list(
        AuditTarget.objects.filter(event_id__in=[event.pk, empty.pk]).values_list(
            "event_id", "target", "name"
        )
    )
    cut = long[:TARGET_MAX]
    expected = [("topic:a", "a"), ("group:g:1", "g:1"), ("bare", "bare"), (cut, cut.split(":", 1)[1])]
    expected += [(f"topic:t{i}", f"t{i}") for i in range(1000)]
    assert sorted(rows) == sorted((event.pk, t, n) for t, n in expected)
    assert audit.verify_chain().ok


_any_value = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from([PartitionState.MOVING, Decimal("1.5"), dt.date(2026, 1, 2), frozenset({1})]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(
            st.text(max_size=3) | st.integers(0, 3) | st.none() | st.booleans(), inner, max_size=3
        )
        | st.dictionaries(
            st.sampled_from(["password", "retention.ms", "ssl.key.password"]), inner, max_size=2
        )
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(_any_value)
def test_what_an_event_stores_is_what_the_json_column_gives_back(value):
    """Plain data is kept as masked (no JSON round trip); anything else takes the round trip: either
    way the stored value, which the hash covers, equals the masked value read back from JSON."""
    stored = audit._stored(value, frozenset({"retention.ms"}))
    expected = json.loads(json.dumps(audit.mask_secrets(value, ["retention.ms"]), default=str))
    assert repr(stored) == repr(expected)  # types too (a tuple is not a list); NaN-proof
