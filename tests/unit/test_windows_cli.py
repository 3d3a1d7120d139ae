"""``manage.py kafka windows``: add (one-off and weekly), list with what is in force, end, the
maintenance-only rule, the calendar, and scheduling a held change (refused inside a freeze: exit 4)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import AuditEvent
from console.models.windows import ChangeWindow, ScheduledChange, WindowSettings
from tests.conftest import hold
from tests.unit.kafka_cli import kafka
from tests.unit.test_changes import held_config

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def test_it_adds_lists_and_ends_windows(personas, kafka_cluster):
    now = timezone.now()
    start, end = (now - timedelta(minutes=1)).isoformat(), (now + timedelta(hours=2)).isoformat()
    code, out = kafka(
        "windows",
        "add",
        "--kind",
        "freeze",
        "--reason",
        "release week",
        "--start",
        start,
        "--end",
        end,
        "--as",
        "admin",
    )
    assert code == 0, out
    freeze = ChangeWindow.objects.get(kind="freeze")
    code, out = kafka(
        "windows", "add", "--kind", "maintenance", "--reason", "tuesday nights", "--weekday", "1", "--at", "02:00",
        "--duration", "120", "--tz", "Europe/Paris", "--as", "admin",
    )  # fmt: skip
    assert code == 0 and "every Tuesday 02:00 Europe/Paris for 120 min" in out, out
    code, out = kafka("windows", "list", "--output", "json", "--as", "viewer")
    listed = json.loads(out)
    assert code == 0 and listed["frozen"] is True and listed["freeze"]["id"] == freeze.pk
    assert [(w["kind"], w["reason"], w["in_force"]) for w in listed["items"]] == [
        ("freeze", "release week", True),
        ("maintenance", "tuesday nights", False),
    ]
    code, out = kafka("windows", "end", str(freeze.pk), "--as", "operator")
    assert code == 3, out  # admins only
    code, out = kafka("windows", "end", str(freeze.pk), "--as", "admin")
    assert code == 0 and f"Window #{freeze.pk} ended" in out
    code, out = kafka("windows", "list", "--output", "json")  # a read: no --as needed
    assert code == 0 and json.loads(out)["frozen"] is False
    assert kafka("windows", "end", str(freeze.pk))[0] == 2  # a change names the person acting
    assert [e.action for e in AuditEvent.objects.filter(action__startswith="window.", outcome="success").order_by("id")] == [
        "window.create", "window.create", "window.end",
    ]  # fmt: skip


def test_it_refuses_bad_input_with_its_exit_codes(personas, kafka_cluster):
    code, out = kafka(
        "windows", "add", "--kind", "freeze", "--reason", "x", "--start", "yesterday", "--as", "admin"
    )
    assert code == 2 and "--start" in out
    code, out = kafka("windows", "add", "--kind", "freeze", "--reason", "x", "--as", "admin")
    assert code == 4 and "a one-off window needs a start and an end" in out
    code, out = kafka("windows", "settings", "--maintenance-only", "on", "--as", "admin")
    assert code == 0 and WindowSettings.objects.get(cluster=kafka_cluster).maintenance_only


def test_it_schedules_a_held_change_and_refuses_a_time_in_a_freeze(personas, kafka_cluster, topic, operator2):
    hold(kafka_cluster, personas["admin"], ["config"])
    req = held_config(personas, kafka_cluster, topic)
    now = timezone.now()
    code, out = kafka(
        "windows", "add", "--kind", "freeze", "--reason", "peak", "--start", (now + timedelta(days=1)).isoformat(),
        "--end", (now + timedelta(days=2)).isoformat(), "--as", "admin",
    )  # fmt: skip
    assert code == 0, out
    inside = (now + timedelta(days=1, hours=1)).strftime("%Y-%m-%dT%H:%M")
    code, out = kafka("windows", "schedule", str(req.pk), "--at", inside, "--as", "operator2")
    assert code == 4 and "is frozen by window" in out and "(peak)" in out, out
    assert not ScheduledChange.objects.exists()
    later = (
        (now + timedelta(hours=3)).astimezone(timezone.get_fixed_timezone(60)).isoformat(timespec="minutes")
    )
    code, out = kafka(
        "windows", "schedule", str(req.pk), "--at", later, "--output", "json", "--as", "operator2"
    )
    assert code == 0, out
    row = ScheduledChange.objects.get(request=req)
    assert json.loads(out)["items"][0]["run_at"] == row.run_at.isoformat()
    assert abs((row.run_at - (now + timedelta(hours=3))).total_seconds()) < 60
    code, out = kafka("windows", "calendar", "--days", "2", "--as", "viewer")
    assert code == 0 and f"change #{req.pk}" in out and "freeze #" in out, out
    code, out = kafka("windows", "unschedule", str(req.pk), "--as", "operator2")
    assert code == 0 and f"Change #{req.pk} is off its schedule: waiting for approval." in out, out
    code, out = kafka("windows", "unschedule", str(req.pk), "--as", "operator2")
    assert code == 4 and "not waiting for a scheduled time" in out
