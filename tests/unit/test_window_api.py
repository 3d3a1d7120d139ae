"""The change windows' API: admins add (one-off, weekly) and end windows and set the maintenance-only rule;
everyone who sees the cluster lists them and reads the calendar; approvers schedule a held change (a time
inside a freeze: 409 change_window naming the window)."""

from __future__ import annotations

from datetime import UTC, timedelta

import pytest
from django.utils import timezone

from console.models.windows import ScheduledChange
from tests.conftest import hold
from tests.unit.test_api_endpoints import _caller
from tests.unit.test_changes import held_config

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def test_it_manages_windows_and_schedules_a_change(client, personas, kafka_cluster, topic, operator2):
    api = _caller(client, {**personas, "operator2": operator2})
    now = timezone.now().astimezone(UTC)
    freeze = {
        "kind": "freeze", "reason": "peak season",
        "starts_at": (now + timedelta(days=1)).isoformat(), "ends_at": (now + timedelta(days=2)).isoformat(),
    }  # fmt: skip
    denied = api("operator", "post", "windows", freeze, name="sandbox")
    assert denied.status_code == 403
    made = api("admin", "post", "windows", freeze, name="sandbox")
    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["kind"], body["reason"], body["in_force"], body["weekly"]) == (
        "freeze",
        "peak season",
        False,
        False,
    )
    weekly = {"kind": "maintenance", "reason": "nights", "weekday": 2, "start_time": "01:30", "duration_min": 90,
              "time_zone": "America/New_York"}  # fmt: skip
    assert api("admin", "post", "windows", weekly, name="sandbox").json()["when"] == (
        "every Wednesday 01:30 America/New_York for 90 min"
    )
    huge = api("admin", "post", "windows", {**weekly, "duration_min": 10**30}, name="sandbox")
    assert huge.status_code == 400 and "duration_min" in huge.json()["error"]["fields"]
    bad = api("admin", "post", "windows", {**weekly, "time_zone": "Moon/Base"}, name="sandbox")
    assert bad.status_code == 422 and "unknown time zone 'Moon/Base'" in bad.json()["error"]["message"]
    listed = api("viewer", "get", "windows", name="sandbox").json()
    assert listed["frozen"] is False and [w["reason"] for w in listed["results"]] == [
        "nights",
        "peak season",
    ]  # by start

    hold(kafka_cluster, personas["admin"], ["config"])
    req = held_config(personas, kafka_cluster, topic)
    inside = {"run_at": (now + timedelta(days=1, hours=2)).isoformat()}
    refused = api("operator2", "post", "request-schedule", inside, name="sandbox", request_id=req.pk)
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "change_window"
    assert f"frozen by window #{body['id']} (peak season)" in refused.json()["error"]["message"]
    ok = api("operator2", "post", "request-schedule", {"run_at": (now + timedelta(hours=5)).isoformat()},
             name="sandbox", request_id=req.pk)  # fmt: skip
    assert ok.status_code == 200 and ok.json()["state"] == "waiting"
    assert ScheduledChange.objects.get(request=req).scheduled_by_name.startswith("operator2 [token ")
    days = api("viewer", "get", "windows-calendar", {"days": 3}, name="sandbox").json()["days"]
    assert [c["request"] for d in days for c in d["changes"]] == [req.pk]
    ended = api("admin", "post", "window-end", name="sandbox", window_id=body["id"])
    assert ended.status_code == 200 and ended.json()["ended_by"].startswith("admin [token ")
    again = api("admin", "post", "window-end", name="sandbox", window_id=body["id"])
    assert again.status_code == 422 and "already ended" in again.json()["error"]["message"]
    rule = api("admin", "post", "windows-settings", {"maintenance_only": True}, name="sandbox")
    assert rule.status_code == 200 and rule.json()["maintenance_only"] is True
