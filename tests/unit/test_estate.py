"""The estate as code against the sandbox: export a namespace, edit it, plan it (exactly the edited
resources, validated by Kafka), hold it for four eyes whatever the policy, approve as a second user,
run it through the areas' actions (audited), plan again (no drift); drift between review and
approval; a run that fails part-way says what was and was not applied."""

from __future__ import annotations

import pytest
import yaml
from django.core.exceptions import PermissionDenied

from console import operations
from console.changes import actions as changes
from console.changes import gate
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.estate import core, held, reads
from console.kafka import ConfigChange, ConfigResource
from console.models import AuditEvent, Role
from console.models.requests import ChangeRequest, RequestState
from console.topics import actions as topics
from console.topics import policy as topic_policy
from console.topics.batch import TopicSpec
from tests.conftest import hold
from tests.unit.estate_world import drop_namespaces, make_namespace  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def run_queued(req: ChangeRequest) -> ChangeRequest:
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    return req


def overrides(cluster, name: str) -> dict[str, str]:
    res = ConfigResource("TOPIC", name)
    entries = gateway_for(cluster).describe_configs([res])[res]
    return {k: e.value for k, e in entries.items() if e.source == "DYNAMIC_TOPIC_CONFIG"}


LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def edited(doc: dict, ns: str) -> str:
    """The exported file with five edits: t001 grows to 3 partitions, t010's retention changes,
    t020's override is removed, a new topic, a new ACL; and t499 left out."""
    by = {t["name"]: t for t in doc["topics"]}
    by[f"{ns}t001"]["partitions"] = 3
    by[f"{ns}t010"]["configs"]["retention.ms"] = "3600000"
    del by[f"{ns}t020"]["configs"]
    doc["topics"] = [t for t in doc["topics"] if t["name"] != f"{ns}t499"]
    doc["topics"].append(
        {
            "name": f"{ns}new",
            "partitions": 2,
            "replication_factor": 1,
            "configs": {"cleanup.policy": "compact"},
        }
    )
    doc["acls"].append(
        {"resource_type": "GROUP", "resource_name": f"{ns}app", "pattern_type": "LITERAL", "principal": "User:app",
         "host": "*", "operation": "READ", "permission": "ALLOW"}
    )  # fmt: skip
    return yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)


def test_it_round_trips_a_500_topic_namespace_through_plan_approval_and_no_drift(
    personas, kafka_cluster, operator2
):
    ns = make_namespace(personas, kafka_cluster, 500)
    text = reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns)
    doc = yaml.load(text, Loader=LOADER)
    assert (doc["kind"], doc["version"], doc["cluster"], doc["namespace"]) == (
        "KafkaEstate",
        1,
        "sandbox",
        ns,
    )
    assert [t["name"] for t in doc["topics"]] == [f"{ns}t{i:03d}" for i in range(500)]
    assert doc["topics"][0] == {"name": f"{ns}t000", "partitions": 1, "replication_factor": 1,
                                "configs": {"retention.ms": "86400000"}}  # fmt: skip
    assert doc["topics"][1] == {"name": f"{ns}t001", "partitions": 1, "replication_factor": 1}
    assert doc["acls"] == [{"resource_type": "TOPIC", "resource_name": ns, "pattern_type": "PREFIXED",
                            "principal": "User:app", "host": "*", "operation": "READ", "permission": "ALLOW"}]  # fmt: skip

    changed = edited(doc, ns)
    assert gate.policy_of(kafka_cluster) is None  # no change-control policy: held all the same
    req = held.submit_plan(
        actor=personas["operator"], cluster=kafka_cluster, text=changed, delete=True, reason="q4"
    )
    assert (req.kind, req.state, req.gated, req.approvals_required) == (
        "estate.apply",
        RequestState.PENDING,
        True,
        1,
    )
    assert req.review["rows"] == [
        [f"topic:{ns}new", "create", "does not exist", "2 partitions, RF 1; cleanup.policy=compact", "valid"],
        [f"topic:{ns}t001", "alter", "1 partitions", "3 partitions", "valid"],
        [f"topic:{ns}t010", "alter", "retention.ms=86400000", "retention.ms=3600000", "valid"],
        [f"topic:{ns}t020", "alter", "retention.ms=86400000", "retention.ms not set (default)", "valid"],
        [f"acl:User:app ALLOW READ on GROUP:LITERAL:{ns}app from *", "create", "absent", "present", ""],
        [f"topic:{ns}t499", "delete", "1 partitions", "deleted", ""],
    ]
    assert req.review["ok"] and req.resource == f"estate:{ns}"
    assert overrides(kafka_cluster, f"{ns}t010") == {"retention.ms": "86400000"}  # nothing ran yet
    with pytest.raises(PermissionDenied, match="Four eyes"):
        changes.approve_change(actor=personas["operator"], request=req)
    changes.approve_change(actor=operator2, request=req, comment="ok")
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert req.result["message"].startswith("applied (6): ")

    names = [f"{ns}{n}" for n in ("t001", "t010", "t020", "t499", "new")]
    live = {t.name: t for t in reads.live_state(kafka_cluster, ns, names=names).topics}
    assert live == {
        f"{ns}t001": core.TopicState(f"{ns}t001", 3, 1, {}),
        f"{ns}t010": core.TopicState(f"{ns}t010", 1, 1, {"retention.ms": "3600000"}),
        f"{ns}t020": core.TopicState(f"{ns}t020", 1, 1, {}),
        f"{ns}new": core.TopicState(f"{ns}new", 2, 1, {"cleanup.policy": "compact"}),
    }
    audited = AuditEvent.objects.filter(request_id=f"change-{req.pk}", outcome="success")
    assert sorted(audited.values_list("action", flat=True)) == sorted(
        ["topic.create", "topic.partitions.add", "config.alter", "config.alter", "acl.create", "topic.delete"]
    )
    assert set(audited.values_list("actor_name", flat=True)) == {"operator"}

    again = reads.plan_estate(actor=personas["viewer"], cluster=kafka_cluster, text=changed, delete=True)
    assert not again.drift and again.rows == []


def test_it_keeps_what_is_not_in_the_file_unless_deletions_are_asked_for(personas, kafka_cluster):
    ns = make_namespace(personas, kafka_cluster, 2)
    text = reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns)
    assert reads.plan_estate(actor=personas["viewer"], cluster=kafka_cluster, text=text).rows == []
    with pytest.raises(ChangeInvalid, match="no drift"):
        held.submit_plan(actor=personas["operator"], cluster=kafka_cluster, text=text)
    doc = yaml.safe_load(text)
    doc["topics"], doc["acls"] = doc["topics"][:1], []
    kept = reads.plan_estate(actor=personas["viewer"], cluster=kafka_cluster, text=yaml.safe_dump(doc))
    assert kept.rows == [
        [f"topic:{ns}t001", "not in file, kept", "present", "present (deletions were not asked for)"],
        [f"acl:User:app ALLOW READ on TOPIC:PREFIXED:{ns} from *", "not in file, kept", "present",
         "present (deletions were not asked for)"],
    ]  # fmt: skip
    assert kept.drift and kept.changes == 0
    with pytest.raises(ChangeInvalid, match="nothing to apply: what is not in the file is kept"):
        held.submit_plan(actor=personas["operator"], cluster=kafka_cluster, text=yaml.safe_dump(doc))
    gone = reads.plan_estate(
        actor=personas["viewer"], cluster=kafka_cluster, text=yaml.safe_dump(doc), delete=True
    )
    assert [r[:2] for r in gone.rows] == [
        [f"acl:User:app ALLOW READ on TOPIC:PREFIXED:{ns} from *", "delete"],
        [f"topic:{ns}t001", "delete"],
    ]


def test_it_sends_the_plan_back_for_review_when_a_planned_topic_moved(personas, kafka_cluster, operator2):
    ns = make_namespace(personas, kafka_cluster, 3)
    text = reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns)
    doc = yaml.safe_load(text)
    doc["topics"][1]["configs"] = {"retention.ms": "5000"}
    req = held.submit_plan(actor=personas["operator"], cluster=kafka_cluster, text=yaml.safe_dump(doc))
    configs.alter_configs(
        actor=personas["operator"], cluster=kafka_cluster, resource=configs.topic_resource(f"{ns}t001"),
        changes=[ConfigChange("segment.ms", "SET", "600000")],
    )  # fmt: skip
    req = changes.approve_change(actor=operator2, request=req)
    assert req.state == RequestState.PENDING
    assert req.review["reviewed_before"] == [
        [f"topic:{ns}t001", "alter", "retention.ms not set (default)", "retention.ms=5000", "valid"]
    ]
    assert req.events.filter(step="drifted").exists()
    assert overrides(kafka_cluster, f"{ns}t001") == {"segment.ms": "600000"}


def test_it_stops_at_the_first_failing_step_and_says_what_was_applied(
    personas, kafka_cluster, operator2, sandbox
):
    ns = make_namespace(personas, kafka_cluster, 3)
    doc = yaml.safe_load(reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns))
    doc["topics"][0]["partitions"] = 2
    doc["topics"] = doc["topics"][:2]
    doc["acls"].append(
        {"resource_type": "TOPIC", "resource_name": f"{ns}t000", "principal": "User:b", "operation": "WRITE"}
    )
    req = held.submit_plan(
        actor=personas["operator"], cluster=kafka_cluster, text=yaml.safe_dump(doc), delete=True
    )
    changes.approve_change(actor=operator2, request=req)
    sandbox.inject_fault("CreateAcls", error_code=31, count=1)  # CLUSTER_AUTHORIZATION_FAILED
    try:
        req = run_queued(req)
    finally:
        sandbox.clear_faults()
    assert req.state == RequestState.FAILED
    message = req.result["message"]
    assert message.startswith("stopped at 'change ACLs'; failed: acl:User:b ALLOW WRITE on TOPIC:LITERAL:")
    assert f"applied (1): topic:{ns}t000." in message
    assert message.endswith(
        f"not applied (2): acl:User:b ALLOW WRITE on TOPIC:LITERAL:{ns}t000 from *, topic:{ns}t002"
    )
    live = {t.name: t for t in reads.live_state(kafka_cluster, ns).topics}
    assert live[f"{ns}t000"].partitions == 2 and f"{ns}t002" in live


def test_it_needs_view_to_plan_and_the_permissions_of_the_plan_to_submit(personas, kafka_cluster):
    ns = make_namespace(personas, kafka_cluster, 2)
    text = reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns)
    with pytest.raises(PermissionDenied):
        reads.export_estate(actor=personas["outsider"], cluster=kafka_cluster, namespace=ns)
    grown = text.replace("partitions: 1", "partitions: 2", 1)
    assert len(reads.plan_estate(actor=personas["viewer"], cluster=kafka_cluster, text=grown).rows) == 1
    with pytest.raises(PermissionDenied):
        held.submit_plan(actor=personas["viewer"], cluster=kafka_cluster, text=grown)
    assert not ChangeRequest.objects.exists()


def test_it_refuses_what_kafka_cannot_do(personas, kafka_cluster):
    ns = make_namespace(personas, kafka_cluster, 2)
    topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(f"{ns}wide", 3, 1)]
    )
    doc = yaml.safe_load(reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns))
    assert [t["name"] for t in doc["topics"]] == [f"{ns}t000", f"{ns}t001", f"{ns}wide"]
    doc["topics"][1]["replication_factor"] = 2
    doc["topics"][2]["partitions"] = 2
    doc["topics"].append({"name": f"{ns}huge", "partitions": 1, "replication_factor": 9})
    plan = reads.plan_estate(actor=personas["viewer"], cluster=kafka_cluster, text=yaml.safe_dump(doc))
    assert plan.refused == [
        f"{ns}t001: the replication factor changes from 1 to 2; change it with a reassignment, not the estate",
        f"{ns}wide: Kafka cannot remove partitions (3 -> 2)",
    ]
    assert plan.drift and not plan.ok
    assert list(plan.answers) == [f"topic:{ns}huge"]
    assert plan.answers[f"topic:{ns}huge"].startswith("Kafka: INVALID_REPLICATION_FACTOR")
    with pytest.raises(ChangeInvalid, match="reassignment") as refused:
        held.submit_plan(actor=personas["operator"], cluster=kafka_cluster, text=yaml.safe_dump(doc))
    assert any("INVALID_REPLICATION_FACTOR" in e for e in refused.value.errors)
    assert not ChangeRequest.objects.exists()


def test_it_refuses_what_the_console_policy_would_refuse_at_the_run(personas, kafka_cluster):
    ns = make_namespace(personas, kafka_cluster, 3)
    topic_policy.update_topic_policy(
        actor=personas["admin"], cluster=kafka_cluster,
        values={"max_partitions": 4, "protected_topics": [f"{ns}t002"], "name_pattern": f"{ns}t*"},
    )  # fmt: skip
    doc = yaml.safe_load(reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns))
    doc["topics"][0]["partitions"] = 5
    doc["topics"] = doc["topics"][:2] + [{"name": f"{ns}other", "partitions": 1, "replication_factor": 1}]
    plan = reads.plan_estate(
        actor=personas["viewer"], cluster=kafka_cluster, text=yaml.safe_dump(doc), delete=True
    )
    assert plan.answers == {
        f"topic:{ns}other": f"console policy: The name must match the pattern '{ns}t*'. [policy rule: name_pattern]",
        f"topic:{ns}t000": "console policy: 5 partitions exceed this cluster's limit of 4 [policy rule: max_partitions]",
        f"topic:{ns}t002": f"console policy: it is protected on this cluster (matches '{ns}t002') [policy rule: protected_topics]",
    }
    with pytest.raises(ChangeInvalid, match="max_partitions"):
        held.submit_plan(
            actor=personas["operator"], cluster=kafka_cluster, text=yaml.safe_dump(doc), delete=True
        )


def test_it_creates_topics_in_batches_the_policy_allows(personas, kafka_cluster, operator2):
    ns = make_namespace(personas, kafka_cluster, 1)
    topic_policy.update_topic_policy(
        actor=personas["admin"], cluster=kafka_cluster, values={"max_batch_size": 2}
    )
    doc = yaml.safe_load(reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns))
    doc["topics"] += [{"name": f"{ns}n{i}", "partitions": 1, "replication_factor": 1} for i in range(3)]
    req = held.submit_plan(actor=personas["operator"], cluster=kafka_cluster, text=yaml.safe_dump(doc))
    changes.approve_change(actor=operator2, request=req)
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    created = AuditEvent.objects.filter(
        request_id=f"change-{req.pk}", action="topic.create", outcome="success"
    )
    assert sorted(len(e.targets) for e in created) == [1, 2]
    assert {t.name for t in reads.live_state(kafka_cluster, ns).topics} == {
        f"{ns}t000",
        f"{ns}n0",
        f"{ns}n1",
        f"{ns}n2",
    }


def test_it_is_held_for_the_policys_approvers_even_when_the_policy_holds_nothing_of_it(
    personas, kafka_cluster
):
    ns = make_namespace(personas, kafka_cluster, 1)
    hold(kafka_cluster, personas["admin"], ["config"], roles=[Role.VIEWER], approvers=2)
    assert (
        gate.required(personas["operator"], kafka_cluster, "config") is None
    )  # the policy holds not the operator
    grown = reads.export_estate(actor=personas["viewer"], cluster=kafka_cluster, namespace=ns).replace(
        "partitions: 1", "partitions: 2"
    )
    req = held.submit_plan(actor=personas["operator"], cluster=kafka_cluster, text=grown)
    assert (req.state, req.approvals_required, req.gated) == (RequestState.PENDING, 2, True)
