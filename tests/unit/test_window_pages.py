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


def _open_held_changes(cluster, author, count: int) -> None:
    """``count`` held changes waiting for approval, each scheduled, as rows (the queue only reads them)."""
    from console.models.requests import ChangeRequest

    when = timezone.now() + timedelta(days=1)
    for i in range(count):
        req = ChangeRequest.objects.create(
            cluster=cluster, kind="change.config", resource=f"orders-{i}", requested_by=author,
            requested_by_name=author.get_username(), gated=True, payload={}, review={},
        )  # fmt: skip
        ScheduledChange.objects.create(request=req, run_at=when, scheduled_by_name="operator")


@pytest.mark.parametrize("page", ["review_queue", "request_list"])
def test_the_queue_reads_the_scheduled_times_in_a_constant_number_of_queries(
    client, personas, kafka_cluster, page
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(personas["admin"])
    url = reverse(page) if page == "review_queue" else reverse(page, kwargs={"name": kafka_cluster.name})

    def queries() -> tuple[int, str]:
        with CaptureQueriesContext(connection) as done:
            shown = client.get(url).content.decode()
        return len(done), shown

    queries()  # the session's first page reads what later pages do not (its login, caches)
    _open_held_changes(kafka_cluster, personas["operator"], 1)
    one, shown = queries()
    assert shown.count("runs ") == 1
    _open_held_changes(kafka_cluster, personas["operator"], 19)
    twenty, shown = queries()
    assert shown.count('class="badge scheduled"') == 20
    assert twenty == one


@pytest.mark.parametrize("page", ["topic_add_partitions", "topic_configs"])
def test_a_frozen_cluster_without_a_policy_says_so_and_offers_only_break_glass(
    client, personas, kafka_cluster, topic, page
):
    from console.windows import actions as windows

    now = timezone.now()
    freeze = windows.add_window(
        actor=personas["admin"], cluster=kafka_cluster, kind="freeze", reason="black friday",
        starts_at=now - timedelta(minutes=5), ends_at=now + timedelta(hours=1),
    )  # fmt: skip
    url = reverse(page, kwargs={"name": kafka_cluster.name, "topic": topic})
    preview = {"op_0": "SET", "key_0": "retention.ms", "value_0": "5000", "action": "preview"}
    for role, glass in (("operator", False), ("admin", True)):
        client.force_login(personas[role])
        shown = (
            client.get(url) if page == "topic_add_partitions" else client.post(url, preview)
        ).content.decode()
        note = f"{kafka_cluster.name} is frozen by window #{freeze.pk} (black friday) until {freeze.ends_at:%Y-%m-%d %H:%M} UTC"
        assert note in shown, shown[:3000]
        assert "only break glass (admins) runs a change now" in shown
        assert "need approval" not in shown and 'id="submit-for-review"' not in shown
        assert ('id="break-glass"' in shown) is glass
