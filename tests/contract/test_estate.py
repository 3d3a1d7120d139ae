"""The estate as code against Kafka: a 20-topic namespace (``estate.`` prefix) exported, edited (a
topic grown, a config changed and one removed, a topic and an ACL added, a topic left out with
deletions asked for), planned with exactly those rows and Kafka's validate-only answers, held for
four eyes, approved by a second operator, run through the areas' actions, and planned again: no
drift. Passes on the sandbox and on a real Kafka shared with others (only this test's namespace is
read and changed; everything is deleted afterwards)."""

from __future__ import annotations

import pytest
import yaml

from console.changes import actions as changes
from console.estate import held, reads
from console.estate.core import TopicState
from console.kafka import AclBinding, AclBindingFilter, NewTopic
from console.models import Cluster, Role, RoleBinding
from console.models.requests import RequestState
from console.topics import cache as metadata_cache
from tests.conftest import make_personas
from tests.unit.test_changes import run_queued

from .conftest import eventually, unique

pytestmark = [pytest.mark.contract, pytest.mark.django_db]
COUNT = 20


@pytest.fixture
def namespace(gw):
    """20 one-partition topics (every fifth with a retention override) and a PREFIXED read ACL."""
    ns = unique("estate.ct") + "."
    principal = f"User:{unique('estate')}"
    specs = [
        NewTopic(f"{ns}t{i:02d}", 1, 1, None, {"retention.ms": "86400000"} if i % 5 == 0 else {})
        for i in range(COUNT)
    ]
    assert not [r for r in gw.create_topics(specs).values() if isinstance(r, Exception)]
    gw.create_acls([AclBinding("TOPIC", ns, "PREFIXED", principal, "*", "READ", "ALLOW")])
    eventually(lambda: gw.describe_topics([s.name for s in specs]),
               lambda got: all(not isinstance(v, Exception) for v in got.values()))  # fmt: skip
    # Kafka: CreateAcls is the controller's; the broker answering DescribeAcls may not have the
    # binding yet (failed once on a cluster just started: the export listed no ACL).
    eventually(lambda: gw.describe_acls(AclBindingFilter(principal=principal)), bool)
    try:
        yield ns, principal
    finally:
        names = [t.name for t in gw.list_topics_metadata().topics if t.name.startswith(ns)]
        gw.delete_topics(names)
        gw.delete_acls([AclBindingFilter(principal=principal)])


@pytest.fixture
def people(endpoints, django_user_model):
    cluster = Cluster.objects.create(name="estate-contract", bootstrap_servers=endpoints.bootstrap_servers,
                                     request_timeout_s=15)  # fmt: skip
    personas = make_personas(cluster)
    second = django_user_model.objects.create_user(username="operator2", password="pw-operator2")
    RoleBinding.objects.create(cluster=cluster, user=second, role=Role.OPERATOR)
    metadata_cache.clear()
    yield cluster, personas, second
    metadata_cache.clear()


def test_a_namespace_round_trips_through_plan_approval_and_no_drift(gw, namespace, people):
    ns, principal = namespace
    cluster, personas, second = people
    doc = yaml.safe_load(reads.export_estate(actor=personas["viewer"], cluster=cluster, namespace=ns))
    assert (doc["kind"], doc["version"], doc["namespace"]) == ("KafkaEstate", 1, ns)
    assert [t["name"] for t in doc["topics"]] == [f"{ns}t{i:02d}" for i in range(COUNT)]
    assert doc["topics"][0] == {"name": f"{ns}t00", "partitions": 1, "replication_factor": 1,
                                "configs": {"retention.ms": "86400000"}}  # fmt: skip
    assert doc["topics"][1] == {"name": f"{ns}t01", "partitions": 1, "replication_factor": 1}
    assert doc["acls"] == [{"resource_type": "TOPIC", "resource_name": ns, "pattern_type": "PREFIXED",
                            "principal": principal, "host": "*", "operation": "READ", "permission": "ALLOW"}]  # fmt: skip

    by = {t["name"]: t for t in doc["topics"]}
    by[f"{ns}t01"]["partitions"] = 3
    by[f"{ns}t05"]["configs"]["retention.ms"] = "3600000"
    del by[f"{ns}t10"]["configs"]
    doc["topics"] = [t for t in doc["topics"] if t["name"] != f"{ns}t19"]
    doc["topics"].append({"name": f"{ns}new", "partitions": 2, "replication_factor": 1,
                          "configs": {"cleanup.policy": "compact"}})  # fmt: skip
    doc["acls"].append({"resource_type": "GROUP", "resource_name": f"{ns}app", "pattern_type": "LITERAL",
                        "principal": principal, "host": "*", "operation": "READ", "permission": "ALLOW"})  # fmt: skip
    text = yaml.safe_dump(doc, sort_keys=False)

    req = held.submit_plan(
        actor=personas["operator"], cluster=cluster, text=text, delete=True, reason="contract"
    )
    assert (req.state, req.approvals_required) == (RequestState.PENDING, 1)
    assert req.review["rows"] == [
        [f"topic:{ns}new", "create", "does not exist", "2 partitions, RF 1; cleanup.policy=compact", "valid"],
        [f"topic:{ns}t01", "alter", "1 partitions", "3 partitions", "valid"],
        [f"topic:{ns}t05", "alter", "retention.ms=86400000", "retention.ms=3600000", "valid"],
        [f"topic:{ns}t10", "alter", "retention.ms=86400000", "retention.ms not set (default)", "valid"],
        [f"acl:{principal} ALLOW READ on GROUP:LITERAL:{ns}app from *", "create", "absent", "present", ""],
        [f"topic:{ns}t19", "delete", "1 partitions", "deleted", ""],
    ]
    changes.approve_change(actor=second, request=req, comment="contract")
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result

    names = [f"{ns}{n}" for n in ("t01", "t05", "t10", "t19", "new")]

    def live():
        metadata_cache.clear()
        return {t.name: t for t in reads.live_state(cluster, ns, names=names).topics}

    assert eventually(live, lambda got: f"{ns}t19" not in got and f"{ns}new" in got) == {
        f"{ns}t01": TopicState(f"{ns}t01", 3, 1, {}),
        f"{ns}t05": TopicState(f"{ns}t05", 1, 1, {"retention.ms": "3600000"}),
        f"{ns}t10": TopicState(f"{ns}t10", 1, 1, {}),
        f"{ns}new": TopicState(f"{ns}new", 2, 1, {"cleanup.policy": "compact"}),
    }

    def again():
        metadata_cache.clear()
        return reads.plan_estate(actor=personas["viewer"], cluster=cluster, text=text, delete=True)

    final = eventually(again, lambda p: not p.drift)
    assert final.rows == [] and final.ok
