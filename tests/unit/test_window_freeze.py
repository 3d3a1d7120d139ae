"""A freeze window refuses every governed change on its cluster on every door (service, page, API,
CLI) with the window named and its end, audited as refused; break glass by an admin passes (audited
and announced as ever); the change control policy's held changes may still be submitted and approved,
and the approved run waits for the freeze's end."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from console.changes import actions as changes
from console.changes import door
from console.configs import actions as configs
from console.configs import held as configs_held
from console.kafka import ConfigChange
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from console.models.windows import ScheduledChange, ScheduleState
from console.topics import actions as topics
from console.topics.actions import TopicSpec
from console.windows import actions as windows
from console.windows.guard import ChangeWindowClosed
from tests.conftest import hold
from tests.unit.kafka_cli import kafka
from tests.unit.test_api_endpoints import _caller
from tests.unit.test_changes import held_config, retention, run_queued

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


@pytest.fixture
def freeze(personas, kafka_cluster):
    """A freeze in force on the sandbox for the next hour, set by the admin."""
    now = timezone.now()
    return windows.add_window(
        actor=personas["admin"],
        cluster=kafka_cluster,
        kind="freeze",
        reason="black friday",
        starts_at=now - timedelta(minutes=5),
        ends_at=now + timedelta(hours=1),
    )


def named(text: str, window) -> bool:
    return f"frozen by window #{window.pk} (black friday) until {window.ends_at:%Y-%m-%d %H:%M} UTC" in text


def set_retention(actor, cluster, topic: str, value: str):
    """The direct (not held) config change every door makes."""
    return configs.alter_configs(
        actor=actor, cluster=cluster, resource=configs.topic_resource(topic),
        changes=[ConfigChange("retention.ms", "SET", value)],
    )  # fmt: skip


def test_it_refuses_a_direct_change_while_frozen_naming_the_window_and_audits_it(
    personas, kafka_cluster, topic, freeze
):
    with pytest.raises(ChangeWindowClosed) as refused:
        set_retention(personas["operator"], kafka_cluster, topic, "5000")
    assert named(str(refused.value), freeze) and refused.value.window_id == freeze.pk
    with pytest.raises(ChangeWindowClosed):
        topics.create_topics(
            actor=personas["admin"], cluster=kafka_cluster, specs=[TopicSpec(f"{topic}.x", 1, 1)]
        )
    assert retention(kafka_cluster, topic) == "1000"
    event = AuditEvent.objects.get(action="config.alter", outcome="refused")
    assert named(event.params["reason"], freeze) and event.actor_name == "operator"
    created = AuditEvent.objects.get(action="window.create", outcome="success")
    assert created.after["kind"] == "freeze" and created.after["reason"] == "black friday"


def test_it_lets_changes_run_again_once_the_window_is_ended(personas, kafka_cluster, topic, freeze):
    windows.end_window(actor=personas["admin"], cluster=kafka_cluster, window_id=freeze.pk)
    done = set_retention(personas["operator"], kafka_cluster, topic, "5000")
    assert done.ok and retention(kafka_cluster, topic) == "5000"
    ended = AuditEvent.objects.get(action="window.end", outcome="success")
    assert ended.before["ended_at"] is None and ended.after["ended_at"] is not None


def test_it_refuses_on_the_page_with_the_window_named(client, personas, kafka_cluster, topic, freeze):
    client.force_login(personas["operator"])
    page = reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": topic})
    response = client.post(
        page, {"op_0": "SET", "key_0": "retention.ms", "value_0": "5000", "action": "apply"}
    )
    assert response.status_code == 200
    assert named(response.content.decode(), freeze)
    assert retention(kafka_cluster, topic) == "1000"
    assert not ChangeRequest.objects.exists()


def test_it_refuses_on_the_api_with_409_and_the_window_named(client, personas, kafka_cluster, topic, freeze):
    api = _caller(client, personas)
    body = {"changes": [{"name": "retention.ms", "op": "SET", "value": "5000"}]}
    response = api("operator", "post", "topic-configs", body, name="sandbox", topic=topic)
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "change_window" and named(error["message"], freeze)
    assert retention(kafka_cluster, topic) == "1000"


def test_it_refuses_on_the_command_line_with_exit_4_and_the_window_named(
    personas, kafka_cluster, topic, freeze
):
    code, out = kafka(
        "configs", "alter", "--entity-type", "topics", "--entity-name", topic, "--add-config", "retention.ms=5000",
        "--as", "operator",
    )  # fmt: skip
    assert code == 4 and named(out, freeze), out
    assert retention(kafka_cluster, topic) == "1000"


def test_break_glass_passes_a_freeze_on_the_api_and_the_command_line(
    client, personas, kafka_cluster, topic, freeze
):
    api = _caller(client, personas)
    body = {
        "changes": [{"name": "retention.ms", "op": "SET", "value": "5000"}],
        "break_glass": "incident 12: the disk fills, shorten retention now",
    }
    response = api("admin", "post", "topic-configs", body, name="sandbox", topic=topic)
    assert response.status_code == 200, response.content
    assert retention(kafka_cluster, topic) == "5000"
    code, out = kafka(
        "configs", "alter", "--entity-type", "topics", "--entity-name", topic, "--add-config", "retention.ms=6000",
        "--break-glass", "incident 12: still filling, shorter", "--as", "admin",
    )  # fmt: skip
    assert code == 0, out
    assert retention(kafka_cluster, topic) == "6000"
    glass = AuditEvent.objects.filter(action="change.break_glass", outcome="requested").order_by("id")
    assert [e.params["break_glass"] for e in glass] == [True, True]
    assert [r.state for r in ChangeRequest.objects.order_by("id")] == [RequestState.SUCCEEDED] * 2
    change = [ConfigChange("retention.ms", "SET", "1")]
    with pytest.raises(PermissionDenied, match="cluster.admin"):  # an operator cannot break glass
        door.run_or_hold(
            actor=personas["operator"], cluster=kafka_cluster, kind="config", mode=door.BREAK_GLASS,
            text="I am in a hurry, really",
            prepare=lambda: configs_held.prepare_config(
                personas["operator"], kafka_cluster, configs.topic_resource(topic), change
            ),
            run=lambda: set_retention(personas["operator"], kafka_cluster, topic, "1"),
        )  # fmt: skip
    assert retention(kafka_cluster, topic) == "6000"


def test_a_held_change_approved_during_a_freeze_waits_for_its_end(
    personas, kafka_cluster, topic, freeze, operator2
):
    hold(kafka_cluster, personas["admin"], ["config"])
    req = held_config(personas, kafka_cluster, topic)  # submitting during a freeze is allowed
    changes.approve_change(actor=operator2, request=req)
    req.refresh_from_db()
    assert (req.state, req.operation_id) == (RequestState.APPROVED, None)  # nothing queued
    waits = ScheduledChange.objects.get(request=req)
    assert (waits.state, waits.run_at, waits.scheduled_by_name) == (
        ScheduleState.WAITING,
        freeze.ends_at,
        "system",
    )
    assert req.events.order_by("-id").first().step == "scheduled"
    assert retention(kafka_cluster, topic) == "1000"


def test_only_admins_manage_windows_and_bad_ones_are_refused(personas, kafka_cluster):
    now = timezone.now()
    with pytest.raises(PermissionDenied):
        windows.add_window(actor=personas["operator"], cluster=kafka_cluster, kind="freeze", reason="x",
                           starts_at=now, ends_at=now + timedelta(hours=1))  # fmt: skip
    with pytest.raises(windows.WindowInvalid) as bad:
        windows.add_window(actor=personas["admin"], cluster=kafka_cluster, kind="freeze", reason="",
                           starts_at=now, ends_at=now - timedelta(hours=1), time_zone="Nowhere/Land")  # fmt: skip
    assert bad.value.errors == [
        "a window needs a reason",
        "unknown time zone 'Nowhere/Land' (use an IANA name such as Europe/Paris)",
        "the end must be after the start",
    ]
    with pytest.raises(windows.WindowInvalid, match="a duration of 1 minute to 7 days"):
        windows.add_window(actor=personas["admin"], cluster=kafka_cluster, kind="maintenance", reason="x",
                           weekday=1, start_time=now.time(), duration_min=10**30)  # fmt: skip
    assert list(AuditEvent.objects.filter(action="window.create").values_list("outcome", flat=True)) == [
        "refused",
        "refused",
        "refused",
    ]


def test_a_freeze_that_begins_between_approval_and_run_refuses_the_run(
    personas, kafka_cluster, topic, operator2
):
    hold(kafka_cluster, personas["admin"], ["config"])
    req = held_config(personas, kafka_cluster, topic)
    changes.approve_change(actor=operator2, request=req)  # no freeze yet: queued to run now
    req.refresh_from_db()
    assert req.state == RequestState.APPROVED and req.operation_id is not None
    now = timezone.now()
    freeze = windows.add_window(
        actor=personas["admin"], cluster=kafka_cluster, kind="freeze", reason="black friday",
        starts_at=now - timedelta(seconds=1), ends_at=now + timedelta(hours=1),
    )  # fmt: skip
    req = run_queued(req)
    assert req.state == RequestState.FAILED and named(req.result["message"], freeze)
    assert retention(kafka_cluster, topic) == "1000"
    assert req.events.order_by("-id").first().step == "failed"


def test_break_glass_passes_a_freeze_on_the_page(client, personas, kafka_cluster, topic, freeze):
    client.force_login(personas["admin"])
    page = reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": topic})
    form = {"op_0": "SET", "key_0": "retention.ms", "value_0": "5000"}
    preview = client.post(page, {**form, "action": "preview"}).content.decode()
    assert 'id="break-glass"' in preview  # the freeze holds every governed action: break glass is offered
    response = client.post(
        page, {**form, "action": "break_glass", "justification": "incident 12: disk fills"}
    )
    assert response.status_code == 302, response.content[:1500]
    assert retention(kafka_cluster, topic) == "5000"
    glass = ChangeRequest.objects.get()
    assert (
        glass.state == RequestState.SUCCEEDED
        and glass.decision_comment == "BREAK GLASS: incident 12: disk fills"
    )
