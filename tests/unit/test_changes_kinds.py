"""Change control for every gated kind on the sandbox: held with its dry run, reviewed, approved by
someone else, and then exactly the reviewed payload runs; drift for ACLs and reassignments; a held
action called directly is refused; topic and broker configs are gated apart."""

from __future__ import annotations

import uuid

import pytest

from console.acls import actions as acls
from console.acls import core as acl_core
from console.acls import held as acls_held
from console.changes import actions as changes
from console.changes import gate
from console.changes import kinds as change_kinds
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.configs import held as configs_held
from console.kafka import ConfigChange, KafkaOperationError
from console.models import AuditEvent, Operation
from console.models.reassignment import Reassignment
from console.models.requests import ChangeRequest, RequestState
from console.reassignment import actions as reassignment
from console.reassignment import elections, throttles
from console.reassignment import held as reassignment_held
from console.reassignment.actions import ELECT_KIND
from console.topics import actions as topics
from console.topics import held as topics_held
from console.topics.actions import TopicSpec
from tests.conftest import hold, run_now, run_until_finished
from tests.unit import test_changes as base
from tests.unit.reassign_world import MB, make_topic

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]
run_queued = base.run_queued


def submit(personas, cluster, prepared) -> ChangeRequest:
    return changes.submit_change(actor=personas["operator"], cluster=cluster, prepared=prepared)


def approve_and_run(req: ChangeRequest, approver) -> ChangeRequest:
    req = changes.approve_change(actor=approver, request=req)
    assert req.state == RequestState.APPROVED, req.review
    return run_queued(req)


def binding(principal: str, topic: str) -> acl_core.AclBinding:
    found, problems = acl_core.validate_binding(
        {
            "principal": principal,
            "host": "*",
            "operation": "READ",
            "permission": "ALLOW",
            "resource_type": "TOPIC",
            "resource_name": topic,
            "pattern_type": "LITERAL",
        }
    )
    assert not problems
    return found


def present(personas, cluster, b) -> bool:
    return bool(
        acls.preview_delete(actor=personas["admin"], cluster=cluster, filters=[acl_core.exact_filter(b)])
    )


def test_every_kind_the_issue_names_can_be_held_and_the_policy_offers_it():
    assert set(gate.KINDS) == {
        "topic.create", "topic.delete", "topic.partitions", "config", "broker.config", "acl",
        "reassignment", "throttle", "election", "group.reset", "estate.apply",
        "quota.alter", "scram.alter", "records.purge", "kraft.features", "kraft.voter", "kraft.unregister",
        "transaction.abort", "share_group.reset", "share_group.delete",
        "logdir.move",
    }  # fmt: skip
    assert gate.ALWAYS_HELD == {"estate.apply"}  # four eyes on every cluster, whatever the policy
    assert set(gate.PERMISSIONS) == set(gate.KINDS)
    assert {h.gate for h in change_kinds.registered().values() if not callable(h.gate)} | {
        "config",
        "broker.config",
    } == set(gate.KINDS)


def test_held_topic_creation_runs_once_approved(personas, kafka_cluster, operator2):
    hold(kafka_cluster, personas["admin"], ["topic.create"])
    name = f"chg.create.{uuid.uuid4().hex[:8]}"
    spec = TopicSpec(name, 3, 2, configs={"retention.ms": "60000"})
    with pytest.raises(gate.ApprovalRequired):
        topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=[spec])
    req = submit(
        personas,
        kafka_cluster,
        topics_held.prepare_topic_create(personas["operator"], kafka_cluster, [spec]),
    )
    assert req.review["rows"][0][:3] == [name, "does not exist", "3 partitions, RF 2; retention.ms=60000"]
    assert isinstance(gateway_for(kafka_cluster).describe_topics([name])[name], KafkaOperationError)
    req = approve_and_run(req, operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    meta = gateway_for(kafka_cluster).describe_topics([name])[name]
    assert len(meta.partitions) == 3 and meta.replication_factor == 2
    assert AuditEvent.objects.filter(action="topic.create", request_id=f"change-{req.pk}").exists()
    # drift: a topic of that name appeared between review and run
    other = TopicSpec(f"{name}.b", 1, 1)
    req2 = submit(
        personas,
        kafka_cluster,
        topics_held.prepare_topic_create(personas["operator"], kafka_cluster, [other]),
    )
    with gate.passed("topic.create"):
        topics.create_topics(actor=personas["admin"], cluster=kafka_cluster, specs=[other])
    req2 = changes.approve_change(actor=operator2, request=req2)
    assert req2.state == RequestState.PENDING and req2.events.filter(step="drifted").exists()


def test_held_partition_increase_shows_before_after_and_drifts_when_the_count_changed(
    personas, kafka_cluster, operator2
):
    hold(kafka_cluster, personas["admin"], ["topic.partitions"])
    name = f"chg.parts.{uuid.uuid4().hex[:8]}"
    with gate.passed("topic.create"):
        topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 1, 1)])
    with pytest.raises(gate.ApprovalRequired):
        topics.add_partitions(actor=personas["operator"], cluster=kafka_cluster, topic=name, total_count=2)
    with pytest.raises(ChangeInvalid, match="more than the current 1"):
        topics_held.prepare_partitions(personas["operator"], kafka_cluster, name, 1)
    req = submit(
        personas, kafka_cluster, topics_held.prepare_partitions(personas["operator"], kafka_cluster, name, 4)
    )
    assert req.review["rows"] == [[name, "1 partitions", "4 partitions"]]
    req = approve_and_run(req, operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert len(gateway_for(kafka_cluster).describe_topics([name])[name].partitions) == 4
    req2 = submit(
        personas, kafka_cluster, topics_held.prepare_partitions(personas["operator"], kafka_cluster, name, 6)
    )
    with gate.passed("topic.partitions"):
        topics.add_partitions(actor=personas["admin"], cluster=kafka_cluster, topic=name, total_count=5)
    req2 = changes.approve_change(actor=operator2, request=req2)
    assert req2.state == RequestState.PENDING and req2.events.filter(step="drifted").exists()
    assert req2.review["rows"][0][1] == "5 partitions"


def test_topic_and_broker_configs_are_gated_apart(personas, kafka_cluster, operator2):
    hold(kafka_cluster, personas["admin"], ["broker.config"])
    broker = configs.broker_resource("1")
    change = [ConfigChange("log.cleaner.threads", "SET", "2")]
    with pytest.raises(gate.ApprovalRequired):
        configs.alter_configs(
            actor=personas["operator"], cluster=kafka_cluster, resource=broker, changes=change
        )
    prepared = configs_held.prepare_config(personas["operator"], kafka_cluster, broker, change)
    assert prepared.gate == "broker.config"
    req = approve_and_run(submit(personas, kafka_cluster, prepared), operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    entry = gateway_for(kafka_cluster).describe_configs([broker])[broker]["log.cleaner.threads"]
    assert entry.value == "2"
    with gate.passed("broker.config"):  # leave the shared sandbox as it was
        configs.alter_configs(
            actor=personas["admin"], cluster=kafka_cluster, resource=broker,
            changes=[ConfigChange("log.cleaner.threads", "DELETE", None)],
        )  # fmt: skip
    assert gate.required(personas["operator"], kafka_cluster, "config") is None  # topic configs run


def test_held_acl_change_runs_the_reviewed_bindings_and_drift_is_caught(personas, kafka_cluster, operator2):
    hold(kafka_cluster, personas["admin"], ["acl"])
    topic = f"chg.acl.{uuid.uuid4().hex[:8]}"
    old, new = binding("User:old", topic), binding("User:new", topic)
    with gate.passed("acl"):
        acls.change_acls(actor=personas["admin"], cluster=kafka_cluster, creates=[old])
    with pytest.raises(gate.ApprovalRequired):
        acls.change_acls(actor=personas["operator"], cluster=kafka_cluster, creates=[new])
    req = submit(
        personas,
        kafka_cluster,
        acls_held.prepare_acl_change(personas["operator"], kafka_cluster, [old], [new]),
    )
    rows = req.review["rows"]
    assert [r[0] for r in rows] == ["delete", "create"]
    assert rows[0][1] == "User:old" and rows[0][-2:] == ["present", "deleted"]
    assert rows[1][1] == "User:new" and rows[1][-2:] == ["absent", "created"]
    assert present(personas, kafka_cluster, old) and not present(personas, kafka_cluster, new)
    req = approve_and_run(req, operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert not present(personas, kafka_cluster, old) and present(personas, kafka_cluster, new)
    # drift: the binding to delete went away after the review
    req2 = submit(
        personas,
        kafka_cluster,
        acls_held.prepare_acl_change(personas["operator"], kafka_cluster, [new], []),
    )
    with gate.passed("acl"):
        acls.change_acls(actor=personas["admin"], cluster=kafka_cluster, deletes=[new])
    req2 = changes.approve_change(actor=operator2, request=req2)
    assert req2.state == RequestState.PENDING and req2.events.filter(step="drifted").exists()
    assert "not there" in req2.review["kafka"]


def test_held_reassignment_shows_bytes_per_broker_and_eta_and_starts_exactly_the_plan(
    personas, kafka_cluster, frozen, operator2
):
    hold(kafka_cluster, personas["admin"], ["reassignment"])
    topic = make_topic(frozen, [[1, 2], [2, 3]], mb_per_partition=4)
    proposed = {(topic, 0): (1, 3), (topic, 1): (3, 1)}
    with pytest.raises(gate.ApprovalRequired):
        reassignment.start_reassignment(
            actor=personas["operator"], cluster=kafka_cluster, proposed=proposed, throttle=MB
        )
    preview = reassignment.preview_plan(kafka_cluster, proposed, throttle=MB)
    prepared = reassignment_held.prepare_reassignment(
        personas["operator"], kafka_cluster, preview, throttle=MB, elect_preferred=False, rf_change=False
    )
    req = submit(personas, kafka_cluster, prepared)
    facts = dict(req.review["facts"])
    assert facts["partitions moving"] == "2" and facts["bytes to copy"] == "8.0 MiB"
    # broker 1 copies partition 1 and sends partition 0 (its leader); 4 MB each way at 1 MB/s
    assert facts["broker 1"] == "in 4.0 MiB, out 4.0 MiB" and facts["broker 3"] == "in 4.0 MiB, out 0 B"
    assert facts["estimated time at the throttle"] == "4 s"
    assert [r[:4] for r in req.review["rows"]] == [[topic, 0, [1, 2], [1, 3]], [topic, 1, [2, 3], [3, 1]]]
    req = approve_and_run(req, operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    r = Reassignment.objects.get(cluster=kafka_cluster)
    rows = sorted(r.partitions.values_list("topic", "partition", "original", "target"))
    assert rows == [(topic, 0, [1, 2], [1, 3]), (topic, 1, [2, 3], [3, 1])]
    started = AuditEvent.objects.get(action="reassignment.execute.requested", operation_id=r.operation_id)
    assert started.params["plan_sha256"] == prepared.payload["plan_sha256"]
    assert started.actor_name == "operator" and r.throttle_bytes_per_s == MB


def test_a_held_reassignment_whose_partitions_moved_since_the_review_goes_back(
    personas, kafka_cluster, frozen, operator2
):
    hold(kafka_cluster, personas["admin"], ["reassignment"])
    topic = make_topic(frozen, [[1, 2]], mb_per_partition=1)
    preview = reassignment.preview_plan(kafka_cluster, {(topic, 0): (2, 3)}, throttle=None)
    req = submit(personas, kafka_cluster, reassignment_held.prepare_reassignment(
        personas["operator"], kafka_cluster, preview, throttle=None, elect_preferred=False, rf_change=False
    ))  # fmt: skip
    with gate.passed("reassignment"):  # an admin moves the partition meanwhile
        op = reassignment.start_reassignment(
            actor=personas["admin"], cluster=kafka_cluster, proposed={(topic, 0): (1, 3)}, throttle=None
        )
    for _ in range(30):
        run_now(op.pk)
        frozen.advance(5)
        op.refresh_from_db()
        if op.finished:
            break
    assert op.state == "succeeded"
    req = changes.approve_change(actor=operator2, request=req)
    assert req.state == RequestState.PENDING and req.events.filter(step="drifted").exists()
    assert Reassignment.objects.count() == 1  # only the admin's move


def test_held_throttle_change_and_election(personas, kafka_cluster, frozen, operator2):
    topic = make_topic(frozen, [[1, 2]], mb_per_partition=20)
    op = reassignment.start_reassignment(
        actor=personas["operator"], cluster=kafka_cluster, proposed={(topic, 0): (1, 3)}, throttle=1 * MB
    )
    run_now(op.pk)
    hold(kafka_cluster, personas["admin"], ["throttle", "election"])
    r = Reassignment.objects.get(operation=op)
    try:
        with pytest.raises(gate.ApprovalRequired):
            throttles.change_throttle(actor=personas["operator"], reassignment=r, rate=2 * MB)
        req = submit(
            personas,
            kafka_cluster,
            reassignment_held.prepare_throttle(personas["operator"], kafka_cluster, r, 3 * MB),
        )
        assert req.review["rows"][0][1:] == ["1.0 MiB/s per broker", "3.0 MiB/s per broker"]
        req = approve_and_run(req, operator2)
        assert req.state == RequestState.SUCCEEDED, req.result
        r.refresh_from_db()
        assert r.throttle_bytes_per_s == 3 * MB
        changed = AuditEvent.objects.get(action="reassignment.throttle.changed", operation_id=op.pk)
        assert (changed.before, changed.after) == ({"rate": MB}, {"rate": 3 * MB})
    finally:
        with gate.passed():
            reassignment.cancel_reassignment(actor=personas["operator"], reassignment=r)
        run_until_finished(op, 10)
    assert op.finished
    with pytest.raises(gate.ApprovalRequired):
        elections.start_election(
            actor=personas["operator"],
            cluster=kafka_cluster,
            election_type="preferred",
            partitions=[(topic, 0)],
        )
    req = submit(
        personas,
        kafka_cluster,
        reassignment_held.prepare_election(personas["operator"], kafka_cluster, "preferred", [(topic, 0)]),
    )
    assert req.review["rows"][0][0:2] == [topic, 0] and req.review["rows"][0][4] == "1 (preferred)"
    with pytest.raises(ChangeInvalid, match="Type 'unclean sandbox'"):
        reassignment_held.prepare_election(personas["admin"], kafka_cluster, "unclean", [(topic, 0)])
    req = approve_and_run(req, operator2)
    assert req.state == RequestState.SUCCEEDED, req.result
    election = Operation.objects.filter(kind=ELECT_KIND).latest("id")
    assert election.params == {"type": "PREFERRED", "partitions": [[topic, 0]]}


def test_held_changes_and_break_glass_reach_the_notification_channels(personas, kafka_cluster, operator2):
    from console.models.notify import NotificationDelivery
    from console.notify import events
    from tests.unit.test_notify_wiring import _subscribe

    _subscribe(
        personas["admin"], kafka_cluster, events.CHANGE_HELD, events.BREAK_GLASS, events.REQUEST_APPROVED
    )
    hold(kafka_cluster, personas["admin"], ["topic.partitions"])
    name = f"chg.notify.{uuid.uuid4().hex[:8]}"
    with gate.passed("topic.create"):
        topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 1, 1)])
    req = submit(
        personas, kafka_cluster, topics_held.prepare_partitions(personas["operator"], kafka_cluster, name, 2)
    )
    changes.approve_change(actor=operator2, request=req)
    glass = changes.break_glass(
        actor=personas["admin"],
        cluster=kafka_cluster,
        prepared=topics_held.prepare_partitions(personas["admin"], kafka_cluster, name, 3),
        justification="incident 42: consumers need more partitions now",
    )
    assert glass.state == RequestState.SUCCEEDED, glass.result
    sent = list(NotificationDelivery.objects.order_by("id").values_list("event", "payload"))
    assert [e for e, _ in sent] == [events.CHANGE_HELD, events.REQUEST_APPROVED, events.BREAK_GLASS]
    assert "incident 42" in sent[-1][1]["text"]


def test_one_review_queue_over_the_clusters_filterable_by_cluster_kind_and_state(
    client, personas, kafka_cluster, operator2
):
    from django.urls import reverse

    from console.models import Cluster, Role, RoleBinding

    other = Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:1", request_timeout_s=1)
    RoleBinding.objects.create(cluster=other, user=personas["operator"], role=Role.VIEWER)
    hold(kafka_cluster, personas["admin"], ["acl"])
    b = binding("User:queue", f"chg.queue.{uuid.uuid4().hex[:8]}")
    held = submit(
        personas, kafka_cluster, acls_held.prepare_acl_change(personas["operator"], kafka_cluster, [], [b])
    )
    elsewhere = ChangeRequest.objects.create(  # someone else's request on a cluster the operator only views
        cluster=other, kind="topic.create", resource="topic:x", payload={}, requested_by=personas["admin"],
        requested_by_name="admin",
    )  # fmt: skip
    client.force_login(personas["admin"])
    page = client.get(reverse("review_queue")).content.decode()
    assert f"/c/sandbox/requests/{held.pk}/" in page and f"/c/other/requests/{elsewhere.pk}/" in page
    only = client.get(reverse("review_queue"), {"cluster": "other"}).content.decode()
    assert f"/requests/{held.pk}/" not in only and f"/requests/{elsewhere.pk}/" in only
    kinds = client.get(reverse("review_queue"), {"kind": "change.acl", "state": "pending"}).content.decode()
    assert f"/requests/{held.pk}/" in kinds and f"/requests/{elsewhere.pk}/" not in kinds
    client.force_login(personas["operator"])  # approver on sandbox, a mere viewer on "other"
    mine = client.get(reverse("review_queue")).content.decode()
    assert f"/requests/{held.pk}/" in mine and f"/requests/{elsewhere.pk}/" not in mine
