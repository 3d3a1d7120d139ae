"""Change control against the sandbox: the policy (and its absence), holding a gated action with its
dry run, four eyes with one and two approvers, the reviewed payload pinned by its digest, drift
between review and run, approval expiry, break glass."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console import operations
from console.changes import actions as changes
from console.changes import approvals, gate
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.configs import held as configs_held
from console.groups import held as groups_held
from console.groups.core import ResetSpec
from console.kafka import ConfigChange
from console.models import AuditEvent, Role
from console.models.changes import ChangeApproval
from console.models.requests import ChangeRequest, Notification, RequestState
from console.topics import actions as topics
from console.topics import cache as metadata_cache
from console.topics import held as topics_held
from console.topics.actions import TopicSpec
from tests.conftest import hold

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def retention(cluster, topic: str) -> str:
    res = configs.topic_resource(topic)
    return gateway_for(cluster).describe_configs([res])[res]["retention.ms"].value


def prepared_retention(actor, cluster, topic, value: str):
    """``actor``'s held change setting the topic's retention.ms to ``value``, prepared (its dry run and review)."""
    return configs_held.prepare_config(
        actor, cluster, configs.topic_resource(topic), [ConfigChange("retention.ms", "SET", value)]
    )


def held_config(personas, cluster, topic, value="7200000") -> ChangeRequest:
    prepared = prepared_retention(personas["operator"], cluster, topic, value)
    return changes.submit_change(actor=personas["operator"], cluster=cluster, prepared=prepared)


def run_queued(req: ChangeRequest) -> ChangeRequest:
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    return req


def test_without_a_policy_every_action_runs_at_once(personas, kafka_cluster, topic):
    assert gate.required(personas["operator"], kafka_cluster, "config") is None
    done = configs.alter_configs(
        actor=personas["operator"],
        cluster=kafka_cluster,
        resource=configs.topic_resource(topic),
        changes=[ConfigChange("retention.ms", "SET", "5000")],
    )
    assert done.ok and retention(kafka_cluster, topic) == "5000"


def test_a_gated_action_called_directly_is_refused_and_audited(personas, kafka_cluster, topic):
    hold(kafka_cluster, personas["admin"], ["config"])
    res = configs.topic_resource(topic)
    change = [ConfigChange("retention.ms", "SET", "5000")]
    dry = configs.alter_configs(
        actor=personas["operator"], cluster=kafka_cluster, resource=res, changes=change, validate_only=True
    )
    assert dry.ok  # a dry run is never held
    with pytest.raises(gate.ApprovalRequired, match="need approval"):
        configs.alter_configs(actor=personas["operator"], cluster=kafka_cluster, resource=res, changes=change)
    assert retention(kafka_cluster, topic) == "1000"
    refused = AuditEvent.objects.get(action="config.alter", outcome="refused")
    assert "need approval" in refused.params["reason"] and refused.actor_name == "operator"


def test_the_policy_names_roles_and_only_admins_set_it(personas, kafka_cluster):
    with pytest.raises(PermissionDenied):
        hold(kafka_cluster, personas["operator"], ["config"])
    with pytest.raises(ChangeInvalid, match="approvers must be 1 or 2"):
        hold(kafka_cluster, personas["admin"], ["config"], approvers=3)
    hold(kafka_cluster, personas["admin"], ["config"], roles=[Role.OPERATOR])
    assert gate.required(personas["operator"], kafka_cluster, "config") is not None
    assert gate.required(personas["admin"], kafka_cluster, "config") is None  # bound to no listed role
    assert gate.required(personas["operator"], kafka_cluster, "acl") is None  # kind not held
    event = AuditEvent.objects.get(action="change.policy.update", outcome="success")
    assert event.after["kinds"] == ["config"] and event.after["roles"] == [Role.OPERATOR]


def test_held_config_change_is_approved_by_another_and_runs_exactly_the_reviewed_payload(
    personas, kafka_cluster, topic, operator2
):
    hold(kafka_cluster, personas["admin"], ["config"])
    req = held_config(personas, kafka_cluster, topic)
    assert req.gated and req.state == RequestState.PENDING and req.approvals_required == 1
    assert req.review["rows"] == [["retention.ms", "SET", "1000", "7200000"]]
    assert req.review["ok"] and "valid" in req.review["kafka"]
    assert req.payload_sha256 == approvals.payload_digest(req.payload)
    assert retention(kafka_cluster, topic) == "1000"  # nothing ran yet
    assert Notification.objects.filter(user=operator2, request=req).exists()
    with pytest.raises(PermissionDenied, match="Four eyes"):
        changes.approve_change(actor=personas["operator"], request=req)
    with pytest.raises(PermissionDenied):
        changes.approve_change(actor=personas["viewer"], request=req)
    changes.approve_change(actor=operator2, request=req, comment="looks right")
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert retention(kafka_cluster, topic) == "7200000"
    applied = AuditEvent.objects.get(action="config.alter", outcome="success")
    assert applied.actor_name == "operator" and applied.request_id == f"change-{req.pk}"
    steps = [
        (a, o)
        for a, o in AuditEvent.objects.filter(action__startswith="change.").values_list("action", "outcome")
    ]
    assert ("change.submit", "requested") in steps and ("change.approve", "approved") in steps


def test_two_approvers_never_the_author_and_not_the_same_one_twice(personas, kafka_cluster, topic, operator2):
    hold(kafka_cluster, personas["admin"], ["config"], approvers=2)
    req = held_config(personas, kafka_cluster, topic)
    changes.approve_change(actor=operator2, request=req)
    req.refresh_from_db()
    assert req.state == RequestState.PENDING and req.operation_id is None
    with pytest.raises(ChangeInvalid, match="already approved"):
        changes.approve_change(actor=operator2, request=req)
    with pytest.raises(PermissionDenied, match="Four eyes"):
        changes.approve_change(actor=personas["operator"], request=req)
    assert retention(kafka_cluster, topic) == "1000"
    changes.approve_change(actor=personas["admin"], request=req)
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED and retention(kafka_cluster, topic) == "7200000"


def test_a_tampered_payload_is_not_approved(personas, kafka_cluster, topic, operator2):
    hold(kafka_cluster, personas["admin"], ["config"])
    req = held_config(personas, kafka_cluster, topic)
    ChangeRequest.objects.filter(pk=req.pk).update(
        payload={**req.payload, "changes": [{"name": "retention.ms", "op": "SET", "value": "1"}]}
    )
    req.refresh_from_db()
    with pytest.raises(ChangeInvalid, match="does not match its reviewed digest"):
        changes.approve_change(actor=operator2, request=req)
    assert retention(kafka_cluster, topic) == "1000"


def test_config_drift_between_review_and_approval_sends_it_back_with_the_new_diff(
    personas, kafka_cluster, topic, operator2
):
    hold(kafka_cluster, personas["admin"], ["config"], roles=[Role.OPERATOR])
    req = held_config(personas, kafka_cluster, topic)
    configs.alter_configs(  # someone else changes the same config meanwhile (admins are not held here)
        actor=personas["admin"],
        cluster=kafka_cluster,
        resource=configs.topic_resource(topic),
        changes=[ConfigChange("retention.ms", "SET", "3000")],
    )
    changes.approve_change(actor=operator2, request=req)
    req.refresh_from_db()
    assert req.state == RequestState.PENDING and req.operation_id is None
    assert req.review["rows"] == [["retention.ms", "SET", "3000", "7200000"]]
    assert req.review["reviewed_before"] == [["retention.ms", "SET", "1000", "7200000"]]
    assert not ChangeApproval.objects.filter(request=req).exists()  # a fresh review is needed
    assert req.events.filter(step="drifted").exists()
    assert retention(kafka_cluster, topic) == "3000"
    changes.approve_change(actor=operator2, request=req)  # reviewed again: now it runs
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED and retention(kafka_cluster, topic) == "7200000"


def test_drift_after_approval_is_caught_right_before_the_run(personas, kafka_cluster, topic, operator2):
    hold(kafka_cluster, personas["admin"], ["config"], roles=[Role.OPERATOR])
    req = held_config(personas, kafka_cluster, topic)
    changes.approve_change(actor=operator2, request=req)
    configs.alter_configs(
        actor=personas["admin"],
        cluster=kafka_cluster,
        resource=configs.topic_resource(topic),
        changes=[ConfigChange("retention.ms", "SET", "3000")],
    )
    req = run_queued(req)
    assert req.state == RequestState.PENDING and retention(kafka_cluster, topic) == "3000"
    assert req.review["rows"][0][2] == "3000"


def test_expired_approvals_do_not_count(personas, kafka_cluster, topic, operator2, settings):
    settings.APPROVAL_TTL_H = 1
    hold(kafka_cluster, personas["admin"], ["config"], approvers=2)
    req = held_config(personas, kafka_cluster, topic)
    changes.approve_change(actor=operator2, request=req)
    ChangeApproval.objects.filter(request=req).update(created_at=timezone.now() - timedelta(hours=2))
    changes.approve_change(actor=personas["admin"], request=req)
    req.refresh_from_db()
    assert req.state == RequestState.PENDING and len(approvals.fresh_approvals(req)) == 1
    assert retention(kafka_cluster, topic) == "1000"


def test_topic_delete_drift_when_the_topic_is_gone(personas, kafka_cluster, topic, operator2):
    hold(kafka_cluster, personas["admin"], ["topic.delete"], roles=[Role.OPERATOR])
    prepared = topics_held.prepare_topic_delete(personas["operator"], kafka_cluster, [topic])
    assert prepared.review["rows"] == [[topic, "1 partitions", "deleted"]]
    req = changes.submit_change(actor=personas["operator"], cluster=kafka_cluster, prepared=prepared)
    gateway_for(kafka_cluster).delete_topics([topic])
    metadata_cache.clear()
    changes.approve_change(actor=operator2, request=req)
    req.refresh_from_db()
    assert req.state == RequestState.PENDING and req.review["rows"] == [[topic, "does not exist", "deleted"]]


def test_offset_reset_drift_when_the_committed_offsets_moved(personas, kafka_cluster, sandbox, operator2):
    name = f"chg.{uuid.uuid4().hex[:10]}"
    sandbox.create_topic(name, partitions=1)
    with sandbox.state.lock:
        part = sandbox.state.topics[name].partitions[0]
        part.log_start_offset, part.end_offset = 10, 100
    gid = f"grp-{uuid.uuid4().hex[:8]}"
    sandbox.add_group(gid, offsets={(name, 0): 40})
    hold(kafka_cluster, personas["admin"], ["group.reset"])
    prepared = groups_held.prepare_group_reset(
        personas["operator"], kafka_cluster, gid, ResetSpec("to-earliest")
    )
    assert prepared.review["rows"][0][:4] == [name, 0, 40, 10]
    req = changes.submit_change(actor=personas["operator"], cluster=kafka_cluster, prepared=prepared)
    with sandbox.state.lock:
        sandbox.state.groups[gid].offsets[(name, 0)] = 55  # the consumer committed meanwhile
    changes.approve_change(actor=operator2, request=req)
    req.refresh_from_db()
    assert req.state == RequestState.PENDING and req.review["rows"][0][2] == 55
    changes.approve_change(actor=operator2, request=req)
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    with sandbox.state.lock:
        assert sandbox.state.groups[gid].offsets[(name, 0)] == 10


def test_break_glass_runs_at_once_flagged_and_tells_the_approvers(personas, kafka_cluster, topic, operator2):
    hold(kafka_cluster, personas["admin"], ["config"])
    prepared = prepared_retention(personas["admin"], kafka_cluster, topic, "9000")
    with pytest.raises(ChangeInvalid, match="justification"):
        changes.break_glass(
            actor=personas["admin"], cluster=kafka_cluster, prepared=prepared, justification="no"
        )
    with pytest.raises(PermissionDenied):
        changes.break_glass(
            actor=personas["operator"],
            cluster=kafka_cluster,
            prepared=prepared,
            justification="incident 42 now",
        )
    req = changes.break_glass(
        actor=personas["admin"],
        cluster=kafka_cluster,
        prepared=prepared,
        justification="incident 42: disk full",
    )
    assert req.state == RequestState.SUCCEEDED and retention(kafka_cluster, topic) == "9000"
    flagged = AuditEvent.objects.get(action="change.break_glass", outcome="requested")
    assert AuditEvent.objects.filter(action="change.break_glass", outcome="refused").count() == 2
    assert flagged.params["break_glass"] is True and "disk full" in flagged.params["justification"]
    assert Notification.objects.filter(user=operator2, request=req).exists()


# -- the pages that hold an action ----------------------------------------------------------------


def test_the_topic_delete_page_submits_a_held_deletion_and_admins_may_break_glass(
    client, personas, kafka_cluster, topic, operator2
):
    from django.urls import reverse

    hold(kafka_cluster, personas["admin"], ["topic.delete"])
    url = reverse("topic_delete", kwargs={"name": kafka_cluster.name})
    client.force_login(personas["operator"])
    shown = client.post(url, {"names": [topic]}).content.decode()
    assert 'id="submit-for-review"' in shown and 'id="break-glass"' not in shown
    wrong = client.post(url, {"names": [topic], "confirmation": "nope", "action": "submit"})
    assert b"does not match" in wrong.content and not ChangeRequest.objects.exists()
    held = client.post(url, {"names": [topic], "confirmation": topic, "action": "submit"})
    req = ChangeRequest.objects.get(gated=True)
    assert held.status_code == 302 and held["Location"].endswith(f"/requests/{req.pk}/")
    assert req.review["rows"] == [[topic, "1 partitions", "deleted"]]
    metadata_cache.clear()
    assert topic in metadata_cache.get_snapshot(kafka_cluster).by_name  # nothing deleted yet
    client.force_login(personas["admin"])
    page = client.get(reverse("request_detail", kwargs={"name": kafka_cluster.name, "request_id": req.pk}))
    assert (
        page.status_code == 200 and b'id="change-review"' in page.content and b'id="approve"' in page.content
    )
    other = f"{topic}-b"
    topics.create_topics(actor=personas["admin"], cluster=kafka_cluster, specs=[TopicSpec(other, 1, 1)])
    glass = client.post(
        url,
        {
            "names": [other],
            "confirmation": other,
            "action": "break_glass",
            "justification": "incident 7: runaway",
        },
    )
    assert glass.status_code == 302
    assert ChangeRequest.objects.get(gated=True, resource=f"topic:{other}").state == RequestState.SUCCEEDED
    metadata_cache.clear()
    assert other not in metadata_cache.get_snapshot(kafka_cluster, refresh=True).by_name


def test_the_reset_page_submits_a_held_reset_and_refuses_a_busy_group(
    client, personas, kafka_cluster, sandbox, operator2
):
    from django.urls import reverse

    name = f"chg.{uuid.uuid4().hex[:10]}"
    sandbox.create_topic(name, partitions=1)
    with sandbox.state.lock:
        part = sandbox.state.topics[name].partitions[0]
        part.log_start_offset, part.end_offset = 10, 100
    idle, busy = f"grp-{uuid.uuid4().hex[:8]}", f"grp-{uuid.uuid4().hex[:8]}"
    sandbox.add_group(idle, offsets={(name, 0): 40})
    sandbox.add_group(busy, offsets={(name, 0): 40}, members={"app": [(name, 0)]})
    hold(kafka_cluster, personas["admin"], ["group.reset"])
    client.force_login(personas["operator"])
    body = {"mode": "to-earliest", "scope": "all-topics", "confirmation": "", "action": "execute"}

    def post(group, **extra):
        return client.post(
            reverse("group_reset", kwargs={"name": kafka_cluster.name, "group": group}), {**body, **extra}
        )

    refused = post(busy, confirmation=busy)
    assert refused.status_code == 200 and b"active member" in refused.content
    held = post(idle, confirmation=idle)
    assert held.status_code == 302
    req = ChangeRequest.objects.get(gated=True)
    assert req.review["rows"][0][:4] == [name, 0, 40, 10]
    with sandbox.state.lock:
        assert sandbox.state.groups[idle].offsets[(name, 0)] == 40  # held, not run


def test_holding_an_action_needs_the_actions_own_permission(personas, kafka_cluster, topic):
    hold(kafka_cluster, personas["admin"], ["config"])
    prepared = prepared_retention(personas["operator"], kafka_cluster, topic, "5")
    with pytest.raises(PermissionDenied):
        changes.submit_change(actor=personas["viewer"], cluster=kafka_cluster, prepared=prepared)
    assert not ChangeRequest.objects.exists()
    assert AuditEvent.objects.filter(action="change.submit", outcome="refused", actor_name="viewer").exists()


def test_a_reset_over_several_topics_is_not_taken_for_drift(personas, kafka_cluster, sandbox, operator2):
    names = sorted(f"chg.{uuid.uuid4().hex[:10]}" for _ in range(2))
    offsets = {}
    for name in names:
        sandbox.create_topic(name, partitions=3)
        with sandbox.state.lock:
            for part in sandbox.state.topics[name].partitions:
                part.log_start_offset, part.end_offset = 10, 100
        offsets.update({(name, p): 50 + p for p in range(3)})
    gid = f"grp-{uuid.uuid4().hex[:8]}"
    sandbox.add_group(gid, offsets=offsets)
    hold(kafka_cluster, personas["admin"], ["group.reset"])
    prepared = groups_held.prepare_group_reset(
        personas["operator"], kafka_cluster, gid, ResetSpec("to-latest")
    )
    req = changes.submit_change(actor=personas["operator"], cluster=kafka_cluster, prepared=prepared)
    changes.approve_change(actor=operator2, request=req)
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    with sandbox.state.lock:
        assert all(sandbox.state.groups[gid].offsets[tp] == 100 for tp in offsets)
