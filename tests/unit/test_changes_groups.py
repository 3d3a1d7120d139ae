"""Change control over deleting a consumer group and a group's committed offsets of a topic: both
are offset resets in effect, so the policy entry that holds offset resets holds them too, from the
page, the API and the CLI; held, nothing is deleted until another approver says yes and the group
is still as reviewed."""

from __future__ import annotations

import io
import uuid

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from console.changes import actions as changes
from console.changes import gate
from console.changes.kinds import ChangeInvalid
from console.groups import delete
from console.groups import held as groups_held
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestKind, RequestState
from tests.conftest import hold
from tests.unit.test_api_endpoints import _caller
from tests.unit.test_changes import run_queued

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


@pytest.fixture
def held_resets(personas, kafka_cluster):
    """The cluster holds offset resets (and nothing else) for everyone."""
    hold(kafka_cluster, personas["admin"], ["group.reset"])


def a_group(sandbox, members=None) -> tuple[str, str]:
    """A topic with two partitions and a group with committed offsets on both."""
    topic, gid = f"chg.grp.{uuid.uuid4().hex[:8]}", f"chg-grp-{uuid.uuid4().hex[:8]}"
    sandbox.create_topic(topic, partitions=2)
    with sandbox.state.lock:
        for p in sandbox.state.topics[topic].partitions:
            p.log_start_offset, p.end_offset = 10, 100
    sandbox.add_group(gid, offsets={(topic, 0): 40, (topic, 1): 60}, members=members)
    return topic, gid


def offsets_of(sandbox, gid) -> dict | None:
    with sandbox.state.lock:
        group = sandbox.state.groups.get(gid)
        return None if group is None else dict(group.offsets)


def url(route: str, cluster, **kwargs) -> str:
    return reverse(route, kwargs={"name": cluster.name, **kwargs})


def approve_and_run(req: ChangeRequest, approver) -> ChangeRequest:
    changes.approve_change(actor=approver, request=req, comment="checked")
    return run_queued(req)


# -- the pages -------------------------------------------------------------------------------------


def test_it_holds_a_group_delete_from_the_page_and_deletes_the_group_once_approved(
    client, personas, kafka_cluster, sandbox, held_resets, operator2
):
    topic, gid = a_group(sandbox)
    client.force_login(personas["operator"])
    page = client.get(url("group_delete", kafka_cluster, group=gid)).content.decode()
    assert 'id="submit-for-review"' in page and 'id="delete-group"' not in page
    assert 'id="break-glass"' not in page  # an operator cannot break glass
    wrong = client.post(url("group_delete", kafka_cluster, group=gid), {"confirmation": "nope"})
    assert "Type the group id" in wrong.content.decode() and not ChangeRequest.objects.exists()
    held = client.post(
        url("group_delete", kafka_cluster, group=gid),
        {"confirmation": gid, "action": "delete", "justification": "the app is retired"},
    )
    req = ChangeRequest.objects.get(gated=True)
    assert held.status_code == 302 and held["Location"] == url(
        "request_detail", kafka_cluster, request_id=req.pk
    )
    assert (req.kind, req.resource, req.state) == (RequestKind.CHANGE_GROUP_DELETE, f"group:{gid}", "pending")
    assert req.payload == {"group": gid} and req.reason == "the app is retired"
    assert req.review["rows"] == [[topic, 0, 40, "deleted"], [topic, 1, 60, "deleted"]]
    assert req.review["ok"] and "no active members" in req.review["kafka"]
    assert offsets_of(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60}  # nothing deleted yet
    assert not AuditEvent.objects.filter(action="group.delete").exists()
    assert AuditEvent.objects.filter(
        action="change.submit", outcome="requested", actor_name="operator"
    ).exists()
    req = approve_and_run(req, operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert offsets_of(sandbox, gid) is None
    done = AuditEvent.objects.get(action="group.delete", outcome="success")
    assert done.request_id == f"change-{req.pk}" and done.actor_name == "operator"
    assert done.before["offsets"] == {f"{topic}-0": 40, f"{topic}-1": 60}


def test_it_holds_an_offsets_delete_from_the_page_and_deletes_them_once_approved(
    client, personas, kafka_cluster, sandbox, held_resets, operator2
):
    topic, gid = a_group(sandbox)
    other = f"{topic}.other"
    sandbox.create_topic(other, partitions=1)
    with sandbox.state.lock:
        sandbox.state.groups[gid].offsets[(other, 0)] = 0
    client.force_login(personas["operator"])
    page = client.get(
        url("group_offsets_delete", kafka_cluster, group=gid), {"topic": topic}
    ).content.decode()
    assert 'id="submit-for-review"' in page and 'id="delete-offsets"' not in page
    held = client.post(
        url("group_offsets_delete", kafka_cluster, group=gid),
        {"topic": topic, "confirmation": gid, "action": "delete"},
    )
    req = ChangeRequest.objects.get(gated=True)
    assert held.status_code == 302 and held["Location"] == url(
        "request_detail", kafka_cluster, request_id=req.pk
    )
    assert (req.kind, req.resource) == (RequestKind.CHANGE_GROUP_OFFSETS_DELETE, f"group:{gid}")
    assert req.payload == {"group": gid, "topic": topic}
    assert req.review["rows"] == [[topic, 0, 40, "deleted"], [topic, 1, 60, "deleted"]]
    assert offsets_of(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60, (other, 0): 0}
    assert not AuditEvent.objects.filter(action="group.offsets.delete").exists()
    req = approve_and_run(req, operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert offsets_of(sandbox, gid) == {(other, 0): 0}
    done = AuditEvent.objects.get(action="group.offsets.delete", outcome="success")
    assert done.request_id == f"change-{req.pk}" and done.actor_name == "operator"


def test_it_lets_an_admin_break_glass_on_a_held_group_delete(
    client, personas, kafka_cluster, sandbox, held_resets, operator2
):
    topic, gid = a_group(sandbox)
    client.force_login(personas["admin"])
    page = client.get(url("group_delete", kafka_cluster, group=gid)).content.decode()
    assert 'id="break-glass"' in page
    ran = client.post(
        url("group_delete", kafka_cluster, group=gid),
        {"confirmation": gid, "action": "break_glass", "justification": "incident 9: stale group"},
    )
    req = ChangeRequest.objects.get(gated=True)
    assert ran.status_code == 302 and req.state == RequestState.SUCCEEDED, req.result
    assert offsets_of(sandbox, gid) is None
    flagged = AuditEvent.objects.get(action="change.break_glass", outcome="requested")
    assert flagged.params["break_glass"] is True and flagged.params["kind"] == RequestKind.CHANGE_GROUP_DELETE


# -- the API ---------------------------------------------------------------------------------------


@pytest.fixture
def api(client, personas, operator2, held_resets):
    return _caller(client, {**personas, "operator2": operator2})


def test_it_holds_a_group_delete_and_an_offsets_delete_from_the_api_and_runs_them_once_approved(
    api, kafka_cluster, sandbox
):
    topic, gid = a_group(sandbox)
    held = api("operator", "post", "group-offsets-delete", {"topic": topic, "confirmation": gid},
               name="sandbox", group=gid)  # fmt: skip
    assert held.status_code == 202, held.content
    body = held.json()
    assert (
        body["held"]
        and body["kind"] == RequestKind.CHANGE_GROUP_OFFSETS_DELETE
        and body["state"] == "pending"
    )
    assert body["review"]["rows"] == [[topic, 0, 40, "deleted"], [topic, 1, 60, "deleted"]]
    assert offsets_of(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60}
    approved = api("operator2", "post", "request-approve", {}, name="sandbox", request_id=body["id"])
    assert approved.status_code == 200 and approved.json()["state"] == RequestState.APPROVED
    req = run_queued(ChangeRequest.objects.get(pk=body["id"]))
    assert req.state == RequestState.SUCCEEDED and offsets_of(sandbox, gid) == {}

    wrong = api("operator", "post", "group-delete", {"confirmation": "nope"}, name="sandbox", group=gid)
    assert wrong.status_code == 422 and ChangeRequest.objects.count() == 1
    held = api("operator", "post", "group-delete", {"confirmation": gid, "reason": "retired"},
               name="sandbox", group=gid)  # fmt: skip
    assert held.status_code == 202, held.content
    body = held.json()
    assert body["kind"] == RequestKind.CHANGE_GROUP_DELETE and body["review"]["ok"]
    assert offsets_of(sandbox, gid) == {}  # the group is still there
    mine = api("operator", "post", "request-approve", {}, name="sandbox", request_id=body["id"])
    assert mine.status_code == 403  # never its author
    api("operator2", "post", "request-approve", {}, name="sandbox", request_id=body["id"])
    req = run_queued(ChangeRequest.objects.get(pk=body["id"]))
    assert req.state == RequestState.SUCCEEDED and offsets_of(sandbox, gid) is None
    assert AuditEvent.objects.get(action="group.delete", outcome="success").request_id == f"change-{req.pk}"


# -- the area: every door goes through it ----------------------------------------------------------


def test_it_refuses_a_held_group_delete_or_offsets_delete_called_directly_and_audits_it(
    personas, kafka_cluster, sandbox, held_resets
):
    topic, gid = a_group(sandbox)
    with pytest.raises(gate.ApprovalRequired, match="need approval"):
        delete.delete_group(actor=personas["operator"], cluster=kafka_cluster, group_id=gid, confirmation=gid)
    with pytest.raises(gate.ApprovalRequired, match="need approval"):
        delete.delete_offsets(
            actor=personas["operator"], cluster=kafka_cluster, group_id=gid, topic=topic, confirmation=gid
        )
    assert offsets_of(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60}
    refused = AuditEvent.objects.filter(outcome="refused", actor_name="operator").order_by("id")
    assert [e.action for e in refused] == ["group.delete", "group.offsets.delete"]
    assert all("need approval" in e.params["reason"] for e in refused)


def test_it_refuses_a_held_group_delete_from_the_cli_with_the_permission_exit_code(
    personas, kafka_cluster, sandbox, held_resets
):
    topic, gid = a_group(sandbox)
    out = io.StringIO()
    for args in (["delete", "--group", gid], ["delete-offsets", "--group", gid, "--topic", topic]):
        with pytest.raises(CommandError, match="need approval") as caught:
            call_command("kafka", "groups", *args, "--cluster", "sandbox", "--as", "operator", stdout=out)
        assert caught.value.returncode == 3
    assert offsets_of(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60}


def test_it_refuses_to_hold_a_delete_the_dry_run_refuses(personas, kafka_cluster, sandbox, held_resets):
    _, busy = a_group(sandbox, members={"worker-3": []})
    with pytest.raises(ChangeInvalid, match="worker-3"):
        groups_held.prepare_group_delete(personas["operator"], kafka_cluster, busy, confirmation=busy)
    with pytest.raises(ChangeInvalid, match="no committed offsets"):
        groups_held.prepare_group_offsets_delete(
            personas["operator"], kafka_cluster, busy, "no.such.topic", confirmation=busy
        )


def test_it_sends_a_held_group_delete_back_for_review_when_a_consumer_joined_meanwhile(
    personas, kafka_cluster, sandbox, held_resets, operator2
):
    topic, gid = a_group(sandbox)
    prepared = groups_held.prepare_group_delete(personas["operator"], kafka_cluster, gid, confirmation=gid)
    req = changes.submit_change(actor=personas["operator"], cluster=kafka_cluster, prepared=prepared)
    with sandbox.state.lock:
        sandbox.state.groups[gid].offsets[(topic, 0)] = 55  # a consumer committed meanwhile
    changes.approve_change(actor=operator2, request=req)
    req.refresh_from_db()
    assert req.state == RequestState.PENDING and req.operation_id is None
    assert req.review["rows"][0] == [topic, 0, 55, "deleted"]
    assert req.review["reviewed_before"][0] == [topic, 0, 40, "deleted"]
    assert AuditEvent.objects.filter(action="change.drift", outcome="refused").count() == 1
    assert offsets_of(sandbox, gid) == {(topic, 0): 55, (topic, 1): 60}  # nothing deleted


# -- the one reset run: the held path re-checks members and drift, and converges on retry -----------


def _held_reset(personas, kafka_cluster, gid: str, value: int = -20) -> ChangeRequest:
    from console.groups.core import ResetSpec

    prepared = groups_held.prepare_group_reset(
        personas["operator"], kafka_cluster, gid, ResetSpec("shift-by", value=value)
    )
    return changes.submit_change(actor=personas["operator"], cluster=kafka_cluster, prepared=prepared)


def test_it_refuses_a_held_reset_run_while_the_group_has_members(
    personas, kafka_cluster, sandbox, held_resets
):
    from console.changes import kinds as held_kinds

    topic, gid = a_group(sandbox)
    payload = _held_reset(personas, kafka_cluster, gid).payload
    sandbox.add_group(gid, members={"billing-app": [(topic, 0)]}, offsets={(topic, 0): 40, (topic, 1): 60})
    with gate.passed("group.reset"):  # approved
        ok, message = held_kinds.get(RequestKind.CHANGE_GROUP_RESET).run(
            personas["operator"], kafka_cluster, payload, "change-1"
        )
    assert not ok and message.startswith(f"Not reset: group '{gid}' has 1 active member: billing-app")
    assert offsets_of(sandbox, gid) == {(topic, 0): 40, (topic, 1): 60}
    assert not AuditEvent.objects.filter(action="group.offsets.reset").exists()


def test_it_refuses_a_held_reset_run_when_the_offsets_moved_since_the_review(
    personas, kafka_cluster, sandbox, held_resets
):
    from console.changes import kinds as held_kinds

    topic, gid = a_group(sandbox)
    payload = _held_reset(personas, kafka_cluster, gid).payload
    with sandbox.state.lock:
        sandbox.state.groups[gid].offsets[(topic, 0)] = 55  # a consumer committed meanwhile
    with gate.passed("group.reset"):  # approved
        ok, message = held_kinds.get(RequestKind.CHANGE_GROUP_RESET).run(
            personas["operator"], kafka_cluster, payload, "change-1"
        )
    assert (ok, message) == (
        False,
        f"Not reset: the group's committed offsets moved since the dry run ({topic}-0 40 → 55). "
        "Submit the request again for a new dry run.",
    )
    assert offsets_of(sandbox, gid) == {(topic, 0): 55, (topic, 1): 60}
    assert not AuditEvent.objects.filter(action="group.offsets.reset").exists()


def test_a_held_reset_run_again_after_the_offsets_were_committed_converges(
    personas, kafka_cluster, sandbox, held_resets, operator2, django_capture_on_commit_callbacks
):
    """A worker killed after Kafka took the offsets re-enters the step: the group holds the reviewed
    offsets, which is success (as for a self-service reset), not drift sent back for review."""
    topic, gid = a_group(sandbox)
    req = _held_reset(personas, kafka_cluster, gid)
    with django_capture_on_commit_callbacks(execute=True):
        changes.approve_change(actor=operator2, request=req, comment="checked")
    ChangeRequest.objects.filter(pk=req.pk).update(state=RequestState.RUNNING)  # the earlier attempt
    with sandbox.state.lock:
        sandbox.state.groups[gid].offsets.update({(topic, 0): 20, (topic, 1): 40})
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert req.result == {
        "ok": True,
        "message": "the reviewed offsets of 2 partitions are set (by an earlier attempt)",
    }
    assert offsets_of(sandbox, gid) == {(topic, 0): 20, (topic, 1): 40}
