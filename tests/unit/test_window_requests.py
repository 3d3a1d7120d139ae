"""Self-service requests and change windows: a request approved during a freeze waits for the freeze's
end and runs then, exactly as a held change does (the same schedule, calendar and last check before
the run); an approver approves and schedules in one action on every door (a time inside a freeze is
refused and nothing is approved); the API's request answers carry the schedule."""

from __future__ import annotations

import uuid
from datetime import UTC, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.changes import schedule
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, NewTopic
from console.models import AuditEvent
from console.models.requests import RequestState
from console.models.windows import ScheduledChange, ScheduleState
from console.requests import actions as requests
from console.windows import actions as windows
from console.windows import reads as window_reads
from console.windows.guard import ChangeWindowClosed
from tests.conftest import hold
from tests.unit import test_scheduled_changes as scheduled
from tests.unit.kafka_cli import kafka
from tests.unit.test_api_endpoints import _caller
from tests.unit.test_changes import held_config, retention

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]
clock = scheduled.clock  # the clock the test moves (a fixture)
run_its_operation = scheduled.run_its_operation


@pytest.fixture
def name():
    return "team-a." + uuid.uuid4().hex[:10]


def submit(personas, cluster, name):
    payload = {"name": name, "partitions": 2, "replication_factor": 1, "configs": {}}
    return requests.submit_request(
        actor=personas["requester"], cluster=cluster, kind="topic.create", payload=payload
    )


def freeze_for(personas, cluster, start, hours=1):
    return windows.add_window(
        actor=personas["admin"], cluster=cluster, kind="freeze", reason="black friday",
        starts_at=start - timedelta(minutes=5), ends_at=start + timedelta(hours=hours),
    )  # fmt: skip


def exists(cluster, name) -> bool:
    return not isinstance(gateway_for(cluster).describe_topics([name]).get(name), KafkaOperationError | None)


def test_a_request_approved_during_a_freeze_waits_for_its_end_and_runs_then(
    personas, kafka_cluster, name, clock
):
    freeze = freeze_for(personas, kafka_cluster, clock.at)
    req = submit(personas, kafka_cluster, name)
    req = requests.approve_request(actor=personas["operator"], request=req)
    assert (req.state, req.operation_id) == (RequestState.APPROVED, None)  # not refused: it waits
    waits = ScheduledChange.objects.get(request=req)
    assert (waits.state, waits.run_at, waits.scheduled_by_name) == (
        ScheduleState.WAITING,
        freeze.ends_at,
        "system",
    )
    shown = window_reads.calendar(actor=personas["viewer"], cluster=kafka_cluster, days=2)
    assert [c["request"] for d in shown for c in d.changes] == [req.pk]
    clock.at = freeze.ends_at - timedelta(seconds=1)
    assert schedule.run_due(worker="w1") == {}
    clock.at = freeze.ends_at
    assert list(schedule.run_due(worker="w1").values()) == ["queued"]
    req = run_its_operation(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert exists(kafka_cluster, name)
    steps = [e.step for e in req.events.order_by("id")]
    assert steps == ["submitted", "approved", "scheduled", "due", "queued", "running", "succeeded"]
    created = AuditEvent.objects.get(action="topic.create", outcome="success", targets__icontains=name)
    assert (created.actor_name, created.on_behalf_of) == ("operator", "requester")


def test_a_waiting_request_the_cluster_no_longer_allows_goes_back_to_review_at_its_time(
    personas, kafka_cluster, name, clock
):
    freeze = freeze_for(personas, kafka_cluster, clock.at)
    req = requests.approve_request(actor=personas["operator"], request=submit(personas, kafka_cluster, name))
    gateway_for(kafka_cluster).create_topics([NewTopic(name, 1, 1)])  # made elsewhere meanwhile
    clock.at = freeze.ends_at
    schedule.run_due(worker="w1")
    req.refresh_from_db()
    op = req.operation
    req = run_its_operation(req)
    op.refresh_from_db()
    assert (req.state, req.operation_id, op.state) == (RequestState.PENDING, None, "failed")  # the last check
    assert not req.approvals.exists()
    assert req.events.order_by("-id").first().step == "drifted"
    assert "already exists" in req.events.order_by("-id").first().text


def test_an_approver_approves_a_held_change_at_a_time_in_one_action(
    personas, kafka_cluster, topic, operator2, clock
):
    hold(kafka_cluster, personas["admin"], ["config"])
    change = held_config(personas, kafka_cluster, topic)
    t = clock.at + timedelta(hours=2)
    change = requests.decide(actor=operator2, request=change, approve=True, run_at=t)
    assert (change.state, change.operation_id) == (RequestState.APPROVED, None)
    row = ScheduledChange.objects.get(request=change)
    assert (row.state, row.run_at, row.scheduled_by_name) == (ScheduleState.WAITING, t, "operator2")
    clock.at = t
    assert list(schedule.run_due(worker="w1").values()) == ["queued"]
    assert run_its_operation(change).state == RequestState.SUCCEEDED
    assert retention(kafka_cluster, topic) == "7200000"


def test_approving_at_a_time_inside_a_freeze_is_refused_and_approves_nothing(
    personas, kafka_cluster, name, clock
):
    freeze = freeze_for(personas, kafka_cluster, clock.at + timedelta(days=1))
    req = submit(personas, kafka_cluster, name)
    with pytest.raises(ChangeWindowClosed, match=rf"frozen by window #{freeze.pk} \(black friday\)"):
        requests.decide(
            actor=personas["operator"], request=req, approve=True, run_at=clock.at + timedelta(days=1)
        )
    req.refresh_from_db()
    assert req.state == RequestState.PENDING and not req.approvals.exists()
    assert not ScheduledChange.objects.exists()
    assert AuditEvent.objects.get(action="change.schedule").outcome == "refused"
    assert not AuditEvent.objects.filter(action="request.approve").exists()
    t = clock.at + timedelta(hours=3)  # a request (not only a held change) can be approved at a time
    req = requests.decide(actor=personas["operator"], request=req, approve=True, run_at=t)
    assert req.state == RequestState.APPROVED and schedule.scheduled_at(req) == t


def test_the_page_approves_at_a_time_and_shows_a_refusal(client, personas, kafka_cluster, name):
    now = timezone.now()
    freeze = freeze_for(personas, kafka_cluster, now + timedelta(days=1))
    req = submit(personas, kafka_cluster, name)
    client.force_login(personas["operator"])
    detail = reverse("request_detail", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    assert 'id="id_decision_run_at"' in client.get(detail).content.decode()
    approve = reverse("request_approve", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    inside = (now + timedelta(days=1)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M")
    refused = client.post(approve, {"comment": "", "run_at": inside, "time_zone": "UTC"}, follow=True)
    assert f"frozen by window #{freeze.pk}" in refused.content.decode()
    req.refresh_from_db()
    assert req.state == RequestState.PENDING
    later = (now + timedelta(hours=3)).astimezone(UTC)
    posted = client.post(
        approve, {"comment": "at night", "run_at": later.strftime("%Y-%m-%dT%H:%M"), "time_zone": "UTC"}
    )
    assert posted.status_code == 302
    req.refresh_from_db()
    assert req.state == RequestState.APPROVED and req.operation_id is None
    assert f"{schedule.scheduled_at(req):%Y-%m-%d %H:%M}" == f"{later:%Y-%m-%d %H:%M}"


def test_the_api_approves_at_a_time_and_answers_the_schedule(client, personas, kafka_cluster, name):
    api = _caller(client, personas)
    now = timezone.now().astimezone(UTC)
    freeze = freeze_for(personas, kafka_cluster, now + timedelta(days=1))
    req = submit(personas, kafka_cluster, name)
    shown = api("operator", "get", "request", name="sandbox", request_id=req.pk).json()
    assert (shown["run_at"], shown["schedule_state"]) == (None, None)
    inside = {"run_at": (now + timedelta(days=1)).isoformat()}
    refused = api("operator", "post", "request-approve", inside, name="sandbox", request_id=req.pk)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "change_window"
    assert f"frozen by window #{freeze.pk}" in refused.json()["error"]["message"]
    t = (now + timedelta(hours=3)).replace(microsecond=0)
    done = api(
        "operator", "post", "request-approve", {"run_at": t.isoformat()}, name="sandbox", request_id=req.pk
    )
    assert done.status_code == 200, done.content
    answer = done.json()
    assert (answer["state"], answer["run_at"], answer["schedule_state"]) == (
        "approved",
        t.isoformat(),
        "waiting",
    )
    listed = api("auditor", "get", "requests", name="sandbox").json()["results"]
    assert [(r["id"], r["schedule_state"]) for r in listed] == [(req.pk, "waiting")]
    schema = client.get(reverse("api:schema") + "?format=json").json()
    fields = schema["components"]["schemas"]["RequestOut"]["properties"]
    assert fields["run_at"]["nullable"] is True and "schedule_state" in fields
    approve_body = schema["components"]["schemas"]["ApproveInRequest"]["properties"]
    assert "run_at" in approve_body


def test_the_command_line_approves_at_a_time(personas, kafka_cluster, name):
    now = timezone.now().astimezone(UTC)
    freeze = freeze_for(personas, kafka_cluster, now + timedelta(days=1))
    req = submit(personas, kafka_cluster, name)
    inside = (now + timedelta(days=1)).isoformat()
    code, out = kafka("requests", "approve", str(req.pk), "--at", inside, "--as", "operator")
    assert code == 4 and f"frozen by window #{freeze.pk}" in out, out
    req.refresh_from_db()
    assert req.state == RequestState.PENDING
    t = (now + timedelta(hours=3)).replace(second=0, microsecond=0)
    code, out = kafka(
        "requests",
        "approve",
        str(req.pk),
        "--at",
        t.strftime("%Y-%m-%dT%H:%M"),
        "--tz",
        "UTC",
        "--as",
        "operator",
    )
    assert code == 0, out
    req.refresh_from_db()
    assert req.state == RequestState.APPROVED and schedule.scheduled_at(req) == t


def test_an_approver_takes_a_waiting_request_off_its_schedule_on_its_page(
    client, personas, kafka_cluster, name
):
    now = timezone.now()
    freeze_for(personas, kafka_cluster, now)
    req = requests.approve_request(actor=personas["operator"], request=submit(personas, kafka_cluster, name))
    client.force_login(personas["operator"])
    detail = reverse("request_detail", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    assert 'id="change-unschedule"' in client.get(detail).content.decode()
    off = client.post(reverse("change_unschedule", kwargs={"name": kafka_cluster.name, "request_id": req.pk}))
    assert off.status_code == 302
    req.refresh_from_db()
    assert (req.state, ScheduledChange.objects.get(request=req).state) == ("cancelled", "cancelled")
    assert not exists(kafka_cluster, name)


def test_the_approve_button_says_the_request_waits_while_the_cluster_is_frozen(
    client, personas, kafka_cluster, name
):
    req = submit(personas, kafka_cluster, name)
    client.force_login(personas["operator"])
    detail = reverse("request_detail", kwargs={"name": kafka_cluster.name, "request_id": req.pk})
    assert ">Approve and run</button>" in client.get(detail).content.decode()
    freeze_for(personas, kafka_cluster, timezone.now())
    page = client.get(detail).content.decode()
    assert ">Approve (runs when the windows allow)</button>" in page and "Approve and run" not in page
