"""The change windows' pages: the calendar (/c/<name>/windows/) lists the windows, says what is in
force and shows the next weeks by day with the scheduled changes; admins add and end windows and set
the maintenance-only rule there; a held change is scheduled from its page, whose status and the review
queue then show the time."""

from __future__ import annotations

from datetime import UTC, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models import AuditEvent
from console.models.windows import ChangeWindow, ScheduledChange, WindowSettings
from tests.conftest import hold
from tests.unit.test_changes import held_config

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def local(moment) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")


def test_an_admin_adds_and_ends_a_freeze_on_the_calendar_page(client, personas, kafka_cluster):
    client.force_login(personas["admin"])
    page = reverse("windows_page", kwargs={"name": kafka_cluster.name})
    now = timezone.now()
    form = {
        "kind": "freeze", "reason": "release week", "time_zone": "UTC",
        "starts_at": local(now - timedelta(minutes=1)), "ends_at": local(now + timedelta(hours=3)),
    }  # fmt: skip
    response = client.post(page, form)
    assert response.status_code == 302, response.content[:2000]
    freeze = ChangeWindow.objects.get()
    shown = client.get(page).content.decode()
    assert f"Frozen by window #{freeze.pk} (release week) until" in shown
    assert 'id="window-end-' in shown and 'id="window-form"' in shown
    bad = client.post(page, {**form, "ends_at": local(now - timedelta(hours=1)), "reason": "x"})
    assert bad.status_code == 200 and "the end must be after the start" in bad.content.decode()
    assert (
        client.post(
            reverse("window_end", kwargs={"name": kafka_cluster.name, "window_id": freeze.pk})
        ).status_code
        == 302
    )
    assert "No freeze in force" in client.get(page).content.decode()
    client.post(reverse("window_settings", kwargs={"name": kafka_cluster.name}), {"maintenance_only": "on"})
    assert WindowSettings.objects.get(cluster=kafka_cluster).maintenance_only
    assert [e.action for e in AuditEvent.objects.filter(action__startswith="window.", outcome="success").order_by("id")] == [
        "window.create", "window.end", "window.settings.update",
    ]  # fmt: skip


def test_a_viewer_sees_the_calendar_without_the_forms_and_cannot_post(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    page = reverse("windows_page", kwargs={"name": kafka_cluster.name})
    shown = client.get(page)
    assert shown.status_code == 200 and b'id="window-form"' not in shown.content
    assert b'id="window-calendar"' in shown.content
    assert client.post(page, {"kind": "freeze", "reason": "x"}).status_code == 403
    assert not ChangeWindow.objects.exists()


def test_a_held_change_is_scheduled_from_its_page_and_shown_in_the_queue_and_calendar(
    client, personas, kafka_cluster, topic, operator2
):
    hold(kafka_cluster, personas["admin"], ["config"])
    req = held_config(personas, kafka_cluster, topic)
    client.force_login(operator2)
    detail = reverse("request_detail", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    assert b'id="change-schedule-form"' in client.get(detail).content
    when = timezone.now() + timedelta(days=1)
    posted = client.post(
        reverse("change_schedule", kwargs={"name": kafka_cluster.name, "request_id": req.pk}),
        {"run_at": local(when), "time_zone": "UTC"},
    )
    assert posted.status_code == 302 and posted["Location"] == detail
    row = ScheduledChange.objects.get(request=req)
    stamp = f"{row.run_at:%Y-%m-%d %H:%M}"
    assert stamp == f"{when.astimezone(UTC):%Y-%m-%d %H:%M}"
    assert f"{stamp} UTC, not before" in client.get(detail).content.decode()
    queue = client.get(reverse("request_list", kwargs={"name": kafka_cluster.name})).content.decode()
    assert f"runs {stamp} UTC" in queue
    calendar = client.get(reverse("windows_page", kwargs={"name": kafka_cluster.name})).content.decode()
    assert f"request_id={req.pk}" not in calendar and f"/requests/{req.pk}/" in calendar
    assert 'id="change-unschedule"' in client.get(detail).content.decode()
    off = client.post(reverse("change_unschedule", kwargs={"name": kafka_cluster.name, "request_id": req.pk}))
    assert off.status_code == 302
    row.refresh_from_db()
    req.refresh_from_db()
    assert (row.state, req.state) == ("cancelled", "pending")  # not approved yet: it runs when approved
    assert (
        "runs "
        not in client.get(reverse("request_list", kwargs={"name": kafka_cluster.name})).content.decode()
    )
