"""Self-service consumer group offset resets: a request within the requester's namespaces, its dry run
attached, four eyes, and a worker that commits exactly the reviewed offsets (or nothing)."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from console import access, operations
from console.models import AuditEvent, Role, RoleBinding
from console.models.requests import AutoApproveRule, ChangeRequest, RequestState
from console.requests import actions as requests
from console.requests import checks as request_checks
from tests.unit.group_world import committed, log_topic, set_log, uniq

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]
KIND = "group.offsets.reset"


def topic(sandbox, prefix: str = "team-a.gr", partitions: int = 2, start: int = 10, end: int = 100) -> str:
    """A topic whose partitions hold offsets start..end."""
    return log_topic(sandbox, uniq(prefix), partitions, start, end)


def group(sandbox, offsets: dict, members: dict | None = None, prefix: str = "team-a.app") -> str:
    gid = uniq(prefix)
    sandbox.add_group(gid, members=members, offsets=offsets)
    return gid


def commit(sandbox, gid: str, tp: tuple[str, int], offset: int) -> None:
    """Someone else commits an offset for the group (a consumer, another tool)."""
    with sandbox.state.lock:
        sandbox.state.groups[gid].offsets[tp] = offset


def submit(personas, cluster, gid: str, actor: str = "requester", **reset):
    return requests.submit_request(
        actor=personas[actor],
        cluster=cluster,
        kind=KIND,
        payload={"group": gid, "reset": {"scope": "all-topics", **reset}},
        reason="replay after the bad deploy",
    )


def approve_and_run(personas, req, capture, approver: str = "operator"):
    with capture(execute=True):
        requests.approve_request(actor=personas[approver], request=req, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    return req


def approved_shift_back(sandbox, personas, cluster, capture) -> tuple[str, str, ChangeRequest]:
    """A group at offsets 40 and 60 of a new two-partition topic and its approved request (not run yet)
    to shift them back by 20: (topic, group, request)."""
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 60})
    req = submit(personas, cluster, gid, mode="shift-by", value=-20)
    with capture(execute=True):
        requests.approve_request(actor=personas["operator"], request=req)
    req.refresh_from_db()
    return t, gid, req


def digest(pairs) -> str:
    return hashlib.sha256(json.dumps(sorted(pairs), separators=(",", ":")).encode()).hexdigest()


# -- submit ---------------------------------------------------------------------------------------


def test_a_reset_in_the_namespace_is_stored_pending_with_its_dry_run(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 60})
    req = submit(personas, kafka_cluster, gid, mode="shift-by", value=-20)
    assert (req.state, req.kind, req.resource) == ("pending", KIND, f"group:{gid}")
    payload = req.payload
    assert payload["group"] == gid
    assert (payload["reset"]["mode"], payload["reset"]["scope"], payload["reset"]["value"]) == (
        "shift-by",
        "all-topics",
        -20,
    )
    run = payload["dry_run"]
    assert run["columns"][:6] == ["topic", "partition", "current", "new", "lag_before", "lag_after"]
    assert run["rows"] == [[t, 0, 40, 20, 60, 80, 10, 100, ""], [t, 1, 60, 40, 40, 60, 10, 100, ""]]
    assert (run["partitions"], run["changed"], run["lag_before"], run["lag_after"]) == (2, 2, 100, 140)
    assert payload["plan_sha256"] == digest([[t, 0, 20], [t, 1, 40]])
    assert committed(sandbox, gid) == {(t, 0): 40, (t, 1): 60}  # a dry run changes nothing
    event = AuditEvent.objects.get(action="request.submit")
    assert event.outcome == "requested" and event.targets == [f"request:{req.pk}", f"group:{gid}"]
    assert event.params["payload"]["plan_sha256"] == payload["plan_sha256"]
    assert not AuditEvent.objects.filter(action__startswith="group.").exists()
    assert [s.step for s in req.events.all()] == ["submitted"]
    assert "--shift-by -20 --all-topics" in req.events.get().text


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("group", "Group 'team-b."),
        ("committed-topic", "outside your namespaces"),
        ("named-topic", "Topic 'other."),
        ("file-topic", "Topic 'other."),
    ],
)
def test_a_reset_outside_the_namespace_is_refused_and_audited(
    sandbox, personas, kafka_cluster, case, message
):
    mine, other = topic(sandbox), topic(sandbox, prefix="other.t")
    if case == "group":
        gid = group(sandbox, {(mine, 0): 40}, prefix="team-b.app")
        reset = {"mode": "to-earliest"}
    elif case == "committed-topic":  # all topics of the group: one of them is someone else's
        gid = group(sandbox, {(mine, 0): 40, (other, 1): 50})
        reset = {"mode": "to-earliest"}
    elif case == "named-topic":
        gid = group(sandbox, {(mine, 0): 40})
        reset = {"mode": "to-earliest", "scope": "topic", "topic": other}
    else:
        gid = group(sandbox, {(mine, 0): 40})
        reset = {"mode": "from-file", "file_offsets": [[mine, 0, 20], [other, 0, 20]]}
    with pytest.raises(request_checks.RequestInvalid, match=message):
        submit(personas, kafka_cluster, gid, **reset)
    assert not ChangeRequest.objects.exists()
    [refused] = AuditEvent.objects.filter(action="request.submit")
    assert refused.outcome == "refused" and message.split("'")[-1] in refused.params["reason"]
    assert refused.actor_name == "requester"
    assert committed(sandbox, gid)[(mine, 0)] == 40


def test_a_plan_that_cannot_be_made_is_refused_with_the_planners_reason(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    with pytest.raises(request_checks.RequestInvalid, match="no committed offset"):
        submit(personas, kafka_cluster, gid, mode="shift-by", value=1, scope="topic", topic=t)
    with pytest.raises(request_checks.RequestInvalid, match="unknown reset mode"):
        submit(personas, kafka_cluster, gid, mode="to-the-moon")
    assert not ChangeRequest.objects.exists()


# -- four eyes and the run ------------------------------------------------------------------------


def test_approved_by_someone_else_it_commits_exactly_the_reviewed_offsets(
    sandbox, personas, kafka_cluster, django_capture_on_commit_callbacks
):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 60})
    req = submit(personas, kafka_cluster, gid, mode="to-latest", scope="topic", topic=t)
    assert [r[3] for r in req.payload["dry_run"]["rows"]] == [100, 100]
    set_log(sandbox, t, end=150)  # records arrive meanwhile: "latest" is now 150, the review said 100
    req = approve_and_run(personas, req, django_capture_on_commit_callbacks)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert committed(sandbox, gid) == {(t, 0): 100, (t, 1): 100}
    requested, outcome = AuditEvent.objects.filter(action="group.offsets.reset").order_by("id")
    assert (requested.outcome, outcome.outcome) == ("requested", "success")
    assert (requested.actor_name, requested.on_behalf_of, requested.request_id) == (
        "operator",
        "requester",
        f"request-{req.pk}",
    )
    assert requested.params["plan_sha256"] == req.payload["plan_sha256"]
    assert outcome.before == {f"{t}-0": 40, f"{t}-1": 60}
    assert outcome.after == {f"{t}-0": 100, f"{t}-1": 100}
    assert [s.step for s in req.events.all()] == ["submitted", "approved", "queued", "running", "succeeded"]
    assert req.result["message"].startswith(f"reset 2 partitions of {gid} to the reviewed offsets")


def test_a_group_with_a_member_at_run_time_fails_the_request_naming_it(
    sandbox, personas, kafka_cluster, django_capture_on_commit_callbacks
):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    req = submit(personas, kafka_cluster, gid, mode="to-earliest")
    sandbox.add_group(gid, members={"billing-app": [(t, 0)]}, offsets={(t, 0): 40})  # a consumer came back
    req = approve_and_run(personas, req, django_capture_on_commit_callbacks)
    assert req.state == RequestState.FAILED
    assert "billing-app (/127.0.0.1)" in req.result["message"] and "1 active member" in req.result["message"]
    assert committed(sandbox, gid) == {(t, 0): 40}
    assert not AuditEvent.objects.filter(action="group.offsets.reset", outcome="requested").exists()
    failed = AuditEvent.objects.get(action="request.execute.failed")
    assert "billing-app" in json.dumps(failed.params) + json.dumps(failed.outcomes or {})


def test_the_dry_run_says_when_the_group_has_members(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40}, members={"orders-svc": [(t, 0)]})
    req = submit(personas, kafka_cluster, gid, mode="to-earliest")
    assert req.state == "pending" and "orders-svc" in req.payload["dry_run"]["members"]


def test_the_requester_cannot_approve_their_own_reset(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    req = submit(personas, kafka_cluster, gid, mode="to-earliest")
    requester = personas["requester"]
    with pytest.raises(PermissionDenied):
        requests.approve_request(actor=requester, request=req)
    RoleBinding.objects.create(cluster=kafka_cluster, user=requester, role=Role.OPERATOR)
    assert not requests.can_decide(requester, req)
    with pytest.raises(PermissionDenied, match="Four eyes"):
        requests.approve_request(actor=requester, request=req)
    req.refresh_from_db()
    assert req.state == "pending" and req.operation_id is None
    assert committed(sandbox, gid) == {(t, 0): 40}


def test_an_auto_approved_reset_runs_as_the_system_actor(
    sandbox, personas, kafka_cluster, django_capture_on_commit_callbacks
):
    AutoApproveRule.objects.create(cluster=kafka_cluster, enabled=True, kinds=[KIND], max_partitions=2)
    t = topic(sandbox, partitions=3)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 60})
    with django_capture_on_commit_callbacks(execute=True):
        req = submit(personas, kafka_cluster, gid, mode="to-earliest")
    req.refresh_from_db()
    assert req.state == "approved" and req.auto_approved and access.is_system(req.decided_by)
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED, req.result
    assert committed(sandbox, gid) == {(t, 0): 10, (t, 1): 10}
    requested = AuditEvent.objects.get(action="group.offsets.reset", outcome="requested")
    assert (requested.actor_name, requested.on_behalf_of) == (access.SYSTEM_USERNAME, "requester")
    # the rule's partition limit counts the partitions a reset sets
    big = submit(personas, kafka_cluster, gid, mode="to-earliest", scope="topic", topic=t)
    assert big.state == "pending"


def test_the_auto_approve_rule_offers_the_kind(client, personas, kafka_cluster):
    client.force_login(personas["admin"])
    url = reverse("request_rules", kwargs={"name": kafka_cluster.name})
    assert f'value="{KIND}"'.encode() in client.get(url).content
    client.post(url, {"enabled": "on", "kinds": [KIND, "topic.create"], "max_partitions": "5"})
    assert AutoApproveRule.objects.get(cluster=kafka_cluster).kinds == [KIND, "topic.create"]


@pytest.mark.parametrize("drift", ["committed", "log-start"])
def test_drift_between_review_and_run_fails_and_commits_nothing(
    sandbox, personas, kafka_cluster, django_capture_on_commit_callbacks, drift
):
    t, gid, req = approved_shift_back(sandbox, personas, kafka_cluster, django_capture_on_commit_callbacks)
    if drift == "committed":
        commit(sandbox, gid, (t, 0), 55)  # the offsets moved after the review
        expected, message = (
            {(t, 0): 55, (t, 1): 60},
            f"committed offsets moved since the dry run ({t}-0 40 → 55)",
        )
    else:
        set_log(sandbox, t, start=30)  # retention removed the records the reset would go back to
        expected, message = {(t, 0): 40, (t, 1): 60}, f"{t}-0: 20 is before the log start"
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.FAILED
    assert message in req.result["message"] and "new dry run" in req.result["message"]
    assert committed(sandbox, gid) == expected
    assert not AuditEvent.objects.filter(action="group.offsets.reset").exists()


def test_a_rerun_after_the_offsets_were_committed_converges(
    sandbox, personas, kafka_cluster, django_capture_on_commit_callbacks
):
    """A worker killed after Kafka took the offsets re-enters the step: the group now holds the
    reviewed offsets, which is success, not drift."""
    t, gid, req = approved_shift_back(sandbox, personas, kafka_cluster, django_capture_on_commit_callbacks)
    ChangeRequest.objects.filter(pk=req.pk).update(state=RequestState.RUNNING)  # the earlier attempt
    commit(sandbox, gid, (t, 0), 20)
    commit(sandbox, gid, (t, 1), 40)
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED, req.result
    assert "earlier attempt" in req.result["message"]
    assert committed(sandbox, gid) == {(t, 0): 20, (t, 1): 40}


def test_approval_checks_the_attached_dry_run_and_the_namespaces_again(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    req = submit(personas, kafka_cluster, gid, mode="to-earliest")
    tampered = {
        **req.payload,
        "dry_run": {**req.payload["dry_run"], "rows": [[t, 0, 40, 0, 60, 100, 10, 100, ""]]},
    }
    ChangeRequest.objects.filter(pk=req.pk).update(payload=tampered)
    req.refresh_from_db()
    with pytest.raises(request_checks.RequestInvalid, match="SHA-256"):
        requests.approve_request(actor=personas["operator"], request=req)
    other = submit(personas, kafka_cluster, gid, mode="to-earliest")
    RoleBinding.objects.filter(user=personas["requester"]).update(namespaces=["team-c."])
    with pytest.raises(request_checks.RequestInvalid, match="outside your namespaces"):
        requests.approve_request(actor=personas["operator"], request=other)
    assert ChangeRequest.objects.filter(state="pending").count() == 2
    assert committed(sandbox, gid) == {(t, 0): 40}


# -- pages ----------------------------------------------------------------------------------------


def test_the_form_submits_a_reset_and_the_page_shows_the_dry_run(client, sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 60})
    client.force_login(personas["requester"])
    url = reverse("request_new", kwargs={"name": kafka_cluster.name})
    page = client.get(url + f"?kind={KIND}&group={gid}")
    assert b'name="reset-mode"' in page.content and f'value="{gid}"'.encode() in page.content
    assert f'data-kinds="{KIND}"'.encode() in page.content
    form = {
        "kind": KIND,
        "group": gid,
        "reset-mode": "to-offset",
        "reset-offset": "30",
        "reset-scope": "partitions",
        "reset-topic": t,
        "reset-partitions": "1",
        "reason": "replay partition 1",
        "topic": "ignored-for-this-kind",
    }
    done = client.post(url, form)
    req = ChangeRequest.objects.get()
    assert done.status_code == 302 and done["Location"].endswith(f"/requests/{req.pk}/")
    assert req.payload["dry_run"]["rows"] == [[t, 1, 60, 30, 40, 70, 10, 100, ""]]
    client.force_login(personas["operator"])
    detail = client.get(done["Location"]).content.decode()
    assert "Consumer group offset reset" in detail and f"group:{gid}" in detail
    assert "to an offset 30" in detail and f"partitions 1 of topic {t}" in detail
    assert "--reset-offsets --to-offset 30 --topic" in detail
    assert 'id="request-dry-run"' in detail and f'data-tp="{t}-1"' in detail
    assert "40 → 70" in detail and 'id="approve"' in detail
    assert "{&#x27;" not in detail and "[[" not in detail  # no Python or JSON repr
    listing = client.get(reverse("request_list", kwargs={"name": kafka_cluster.name})).content.decode()
    assert "Consumer group offset reset" in listing


def test_the_form_says_what_is_wrong_with_a_reset(client, sandbox, personas, kafka_cluster):
    client.force_login(personas["requester"])
    url = reverse("request_new", kwargs={"name": kafka_cluster.name})
    cases = [
        ({"kind": KIND, "reset-mode": "to-latest", "reset-scope": "all-topics"}, "Name the consumer group."),
        (
            {"kind": KIND, "group": "team-a.x", "reset-mode": "to-offset", "reset-scope": "all-topics"},
            "Give the offset",
        ),
        (
            {
                "kind": KIND,
                "group": "team-b.<b>x</b>",
                "reset-mode": "to-latest",
                "reset-scope": "all-topics",
            },
            "outside your namespaces",
        ),
        (
            {"kind": KIND, "group": "team-a.x", "reset-mode": "sideways", "reset-scope": "all-topics"},
            "Select a valid choice",
        ),
    ]
    for data, message in cases:
        response = client.post(url, data)
        assert response.status_code == 200, data
        assert message.encode() in response.content, (data, response.content[-3000:])
        assert b"<b>x</b>" not in response.content
    assert not ChangeRequest.objects.exists()
