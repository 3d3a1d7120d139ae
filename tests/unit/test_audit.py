"""The audit chain: append-only, hash-linked, and tampering is named by event."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction

from console.models import AuditEvent, AuditImmutableError
from console.services import audit

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


def test_it_names_an_edited_event():
    events = _write(4)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE console_auditevent SET actor_name = 'mallory' WHERE id = %s", [events[2].pk])
    status = audit.verify_chain()
    assert not status.ok
    assert status.broken_at == events[2].pk
    assert status.verified_up_to == events[1].pk
    assert "edited" in status.reason


def test_it_names_the_link_after_a_deleted_event():
    events = _write(4)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM console_auditevent WHERE id = %s", [events[1].pk])
    status = audit.verify_chain()
    assert not status.ok
    assert status.broken_at == events[2].pk
    assert "missing" in status.reason


def test_it_notices_the_newest_event_removed():
    events = _write(3)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM console_auditevent WHERE id = %s", [events[2].pk])
    status = audit.verify_chain()
    assert not status.ok
    assert status.broken_at == events[2].pk


def test_audit_verify_command_reports_intact_and_broken_chains(capsys):
    events = _write(2)
    call_command("audit_verify")
    assert "intact: 2 events" in capsys.readouterr().out
    with connection.cursor() as cursor:
        cursor.execute("UPDATE console_auditevent SET params = '{}' WHERE id = %s", [events[0].pk])
    with pytest.raises(CommandError, match=f"BROKEN at event {events[0].pk}"):
        call_command("audit_verify")
