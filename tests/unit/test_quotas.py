"""The client quotas area on the sandbox, through every door: permissions (a viewer reads, only an
operator changes), Kafka's checks made before Kafka is called, the audit trail, the dry run, and
change control holding a quota change on the API, the page and the command line."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from console import operations
from console.clusters.actions import gateway_for
from console.kafka.quotas import QuotaAlteration
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from console.quotas import actions, core, held, reads
from console.quotas.core import QuotaInvalid
from console.requests import actions as requests
from tests.conftest import hold
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db
KEYS = tuple(core.ALL_KEYS)


@pytest.fixture
def names(kafka_cluster):
    """Unique user and client names for the test; every key of every entity touched is removed after."""
    made: list[core.Entity] = []

    def name(prefix: str = "qu") -> str:
        return f"{prefix}.{uuid.uuid4().hex[:10]}"

    name.track = made.append
    yield name
    gw = gateway_for(kafka_cluster)
    tracked = {e for e in made}
    leftovers = [e for e in (core.Entity(x.entity) for x in gw.describe_client_quotas()) if e in tracked]
    if leftovers:
        gw.alter_client_quotas([QuotaAlteration(e.parts, {k: None for k in e.keys}) for e in leftovers])


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def current(cluster, text: str) -> dict:
    return reads.current(cluster, core.parse_entity(text))


def test_an_operator_sets_changes_and_removes_quotas_with_the_audit_trail(personas, kafka_cluster, names):
    user = names()
    entity = core.entity_of(user=user, client_id="app")
    names.track(entity)
    result = actions.alter_quotas(
        actor=personas["operator"], cluster=kafka_cluster, entity=entity,
        changes={"producer_byte_rate": "1048576", "request_percentage": 50.5},
    )  # fmt: skip
    assert result.ok and result.confirmed and not result.validate_only
    assert current(kafka_cluster, entity.name) == {
        "producer_byte_rate": 1048576.0,
        "request_percentage": 50.5,
    }
    result = actions.alter_quotas(
        actor=personas["operator"], cluster=kafka_cluster, entity=entity,
        changes={"producer_byte_rate": None, "request_percentage": 75},
    )  # fmt: skip
    assert [(d.key, d.op, d.before, d.after) for d in result.diffs] == [
        ("producer_byte_rate", "remove", 1048576.0, None),
        ("request_percentage", "change", 50.5, 75.0),
    ]
    assert current(kafka_cluster, entity.name) == {"request_percentage": 75.0}
    events = list(AuditEvent.objects.filter(action="quota.alter").order_by("pk"))
    assert [(e.outcome, e.actor_name, e.targets) for e in events] == [
        ("requested", "operator", [entity.target]),
        ("success", "operator", [entity.target]),
        ("requested", "operator", [entity.target]),
        ("success", "operator", [entity.target]),
    ]
    last = events[-1]
    assert last.before == {entity.target: {"producer_byte_rate": 1048576.0, "request_percentage": 50.5}}
    assert last.after == {entity.target: {"request_percentage": 75.0}}
    assert events[2].params["remove"] == ["producer_byte_rate"]


def test_a_dry_run_changes_nothing_and_is_audited_as_one(personas, kafka_cluster, names):
    entity = core.entity_of(user=names())
    result = actions.alter_quotas(
        actor=personas["operator"], cluster=kafka_cluster, entity=entity,
        changes={"consumer_byte_rate": 2048}, validate_only=True,
    )  # fmt: skip
    assert result.ok and result.validate_only and result.event_id
    assert current(kafka_cluster, entity.name) == {}
    event = AuditEvent.objects.get(pk=result.event_id)
    assert (event.action, event.outcome) == ("quota.alter.validate", "success")


def test_a_viewer_reads_but_cannot_change(personas, kafka_cluster, names):
    entity = core.entity_of(user=names())
    with pytest.raises(PermissionDenied):
        actions.alter_quotas(
            actor=personas["viewer"], cluster=kafka_cluster, entity=entity, changes={"producer_byte_rate": 10}
        )
    assert AuditEvent.objects.filter(action="quota.alter", outcome="refused", actor_name="viewer").exists()
    assert current(kafka_cluster, entity.name) == {}
    listing = reads.list_quotas(actor=personas["viewer"], cluster=kafka_cluster)
    assert isinstance(listing.count, int)


@pytest.mark.parametrize(
    "entity, changes, words",
    [
        ("user=x", {"producer_byte_rate": -1}, "must be greater than 0"),
        ("user=x", {"producer_byte_rate": 0}, "must be greater than 0"),
        ("user=x", {"producer_byte_rate": "1.5"}, "must be a whole number"),
        ("ip=10.0.0.1", {"producer_byte_rate": 100}, "does not apply to an IP"),
        ("user=x", {"bogus_rate": 1}, "unknown quota key"),
    ],
)
def test_bad_input_is_refused_before_kafka_is_called(
    personas, kafka_cluster, entity, changes, words, monkeypatch
):
    gw = gateway_for(kafka_cluster)
    called = []
    monkeypatch.setattr(type(gw), "alter_client_quotas", lambda self, *a, **k: called.append(a))
    with pytest.raises(QuotaInvalid) as caught:
        actions.alter_quotas(
            actor=personas["operator"],
            cluster=kafka_cluster,
            entity=core.parse_entity(entity),
            changes=changes,
        )
    assert words in str(caught.value)
    assert called == []
    assert AuditEvent.objects.filter(action="quota.alter", outcome="refused").count() == 1


def test_a_too_long_name_is_refused_on_every_door(personas, kafka_cluster):
    long = "u" * 300
    api = client_for(personas["operator"]).post(
        f"/api/v1/clusters/{kafka_cluster.name}/quotas/",
        {"entity": {"user": long}, "changes": {"producer_byte_rate": 100}},
        content_type="application/json",
    )
    assert api.status_code == 422 and "longer than 255 characters" in api.content.decode()
    code, out = kafka(
        "quotas", "alter", "--user", long, "--add-config", "producer_byte_rate=100", "--as", "operator"
    )
    assert code == 4 and "longer than 255 characters" in out
    page = client_for(personas["operator"]).post(
        f"/c/{kafka_cluster.name}/quotas/",
        {"entity": f"user={long}", "producer_byte_rate": "100", "action": "apply"},
    )
    assert page.status_code == 200 and "longer than 255 characters" in page.content.decode()


def test_the_effective_quota_follows_kafkas_precedence_per_key(personas, kafka_cluster, names):
    user, client = names(), names("app")
    gw = gateway_for(kafka_cluster)
    entities = {
        f"user={user}": {"consumer_byte_rate": 2048.0},
        f"user={user},client-id=<default>": {"request_percentage": 30.0},
        f"client-id={client}": {"producer_byte_rate": 1000.0, "request_percentage": 99.0},
    }
    for text in entities:
        names.track(core.parse_entity(text))
    gw.alter_client_quotas([QuotaAlteration(core.parse_entity(t).parts, v) for t, v in entities.items()])
    view = reads.effective_quota(actor=personas["viewer"], cluster=kafka_cluster, user=user, client_id=client)
    got = {e.key: (e.value, e.source.name if e.source else None, e.level) for e in view.keys}
    assert got["consumer_byte_rate"] == (2048.0, f"user={user}", 3)
    assert got["request_percentage"] == (30.0, f"user={user},client-id=<default>", 2)
    # unless the default user or default client id set one in this shared sandbox, level 7 applies
    assert got["producer_byte_rate"][0] in (1000.0,) or got["producer_byte_rate"][2] < 7
    api = client_for(personas["viewer"]).get(
        f"/api/v1/clusters/{kafka_cluster.name}/quotas/effective/", {"user": user, "client_id": client}
    )
    assert api.status_code == 200
    assert {q["key"]: q["level"] for q in api.json()["quotas"]}["consumer_byte_rate"] == 3
    page = client_for(personas["viewer"]).get(
        f"/c/{kafka_cluster.name}/quotas/", {"user": user, "client_id": client}
    )
    assert page.status_code == 200 and f"user={user},client-id=&lt;default&gt;" in page.content.decode()
    code, out = kafka(
        "quotas", "effective", "--user", user, "--client", client, "--as", "viewer", "--output", "json"
    )
    assert code == 0, out
    assert {q["key"]: q["level"] for q in json.loads(out)["quotas"]}["request_percentage"] == 2


def test_lists_filter_and_group_on_the_api_the_page_and_the_command_line(personas, kafka_cluster, names):
    user = names()
    for text in (f"user={user}", f"user={user},client-id=c1"):
        names.track(core.parse_entity(text))
        actions.alter_quotas(
            actor=personas["operator"], cluster=kafka_cluster, entity=core.parse_entity(text),
            changes={"producer_byte_rate": 4096},
        )  # fmt: skip
    api = client_for(personas["viewer"]).get(
        f"/api/v1/clusters/{kafka_cluster.name}/quotas/", {"entity_type": "user", "name": user}
    )
    assert api.status_code == 200
    assert sorted(r["entity"] for r in api.json()["results"]) == [f"user={user}", f"user={user},client-id=c1"]
    page = client_for(personas["viewer"]).get(
        f"/c/{kafka_cluster.name}/quotas/", {"entity_type": "user", "name": user}
    )
    html = page.content.decode()
    assert (
        page.status_code == 200
        and 'id="quota-group-user"' in html
        and 'id="quota-group-user+client-id"' in html
    )
    assert 'id="quota-alter"' not in html  # a viewer gets no change form
    code, out = kafka("quotas", "list", "--user", user, "--as", "viewer", "--output", "json")
    assert code == 0, out
    assert {i["entity"]: i["quotas"] for i in json.loads(out)["items"]} == {
        f"user={user}": {"producer_byte_rate": 4096.0},
        f"user={user},client-id=c1": {"producer_byte_rate": 4096.0},
    }
    # a read: like `topics list`, it needs no --as (the console's own view of the cluster)
    assert kafka("quotas", "list", "--user", user, "--output", "json") == (0, out)
    code, _ = kafka("quotas", "effective", "--user", user, "--client", "c1")
    assert code == 0
    bad = client_for(personas["viewer"]).get(
        f"/api/v1/clusters/{kafka_cluster.name}/quotas/", {"entity_type": "group"}
    )
    assert bad.status_code == 400


def test_the_page_previews_validates_and_applies(personas, kafka_cluster, names):
    entity = core.entity_of(user=names())
    names.track(entity)
    c = client_for(personas["operator"])
    url = f"/c/{kafka_cluster.name}/quotas/"
    form = {"entity": entity.name, "consumer_byte_rate": "5000"}
    preview = c.post(url, {**form, "action": "preview"}).content.decode()
    assert 'id="quota-diff"' in preview and "5000" in preview
    valid = c.post(url, {**form, "action": "validate"}).content.decode()
    assert "Kafka accepts this change" in valid
    assert current(kafka_cluster, entity.name) == {}
    done = c.post(url, {**form, "action": "apply"})
    assert done.status_code == 302
    assert current(kafka_cluster, entity.name) == {"consumer_byte_rate": 5000.0}
    assert client_for(personas["viewer"]).post(url, {**form, "action": "apply"}).status_code == 403


def test_change_control_holds_it_on_every_door_and_catches_drift(personas, kafka_cluster, names):
    entity = core.entity_of(user=names(), client_id="app")
    names.track(entity)
    hold(kafka_cluster, personas["admin"], [held.GATE])
    code, out = kafka("quotas", "alter", "--user", entity.types["user"], "--client", "app",
                      "--add-config", "producer_byte_rate=2048", "--as", "operator")  # fmt: skip
    assert code == 3, out
    answer = client_for(personas["operator"]).post(
        f"/api/v1/clusters/{kafka_cluster.name}/quotas/",
        {"entity": entity.name, "changes": {"producer_byte_rate": 2048}, "reason": "noisy producer"},
        content_type="application/json",
    )
    assert answer.status_code == 202, answer.content
    req = ChangeRequest.objects.get(pk=answer.json()["id"])
    assert (req.kind, req.state) == ("change.quota", RequestState.PENDING)
    assert req.review["rows"] == [[entity.name, "producer_byte_rate", "set", "—", "2048"]]
    assert current(kafka_cluster, entity.name) == {}
    requests.decide(actor=personas["admin"], request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert (req.state, req.result["ok"]) == (RequestState.SUCCEEDED, True), req.result
    assert current(kafka_cluster, entity.name) == {"producer_byte_rate": 2048.0}
    # the page submits for approval; someone changes the entity meanwhile: drift sends it back
    page = client_for(personas["operator"]).post(
        f"/c/{kafka_cluster.name}/quotas/",
        {"entity": entity.name, "producer_byte_rate": "4096", "action": "apply", "justification": "more"},
    )
    assert page.status_code == 302
    second = ChangeRequest.objects.filter(kind="change.quota", state=RequestState.PENDING).get()
    gateway_for(kafka_cluster).alter_client_quotas(
        [QuotaAlteration(entity.parts, {"producer_byte_rate": 999.0})]
    )
    requests.decide(actor=personas["admin"], request=second, approve=True, comment="ok")
    second.refresh_from_db()
    assert second.state == RequestState.PENDING  # drift: back for a fresh review
    assert current(kafka_cluster, entity.name) == {"producer_byte_rate": 999.0}
    code, out = kafka("quotas", "alter", "--user", entity.types["user"], "--client", "app",
                      "--delete-config", "producer_byte_rate", "--submit-for-approval", "undo", "--as", "operator")  # fmt: skip
    assert code == 0, out
    assert "held for approval" in out


def test_the_dry_run_cli_and_the_api_answer_kafkas_refusal(personas, kafka_cluster, names):
    user = names()
    code, out = kafka("quotas", "alter", "--user", user, "--add-config", "producer_byte_rate=100",
                      "--dry-run", "--as", "operator")  # fmt: skip
    assert code == 0 and "Kafka accepts this change" in out
    code, out = kafka("quotas", "alter", "--ip", "no-such-host.invalid", "--add-config",
                      "connection_creation_rate=5", "--dry-run", "--as", "operator")  # fmt: skip
    assert code == 1 and "is not a valid IP or resolvable host" in out
    assert current(kafka_cluster, f"user={user}") == {}


def test_a_cluster_of_controllers_only_changes_quotas_it_cannot_read(personas, kafka_cluster, sandbox, names):
    from tests.unit.quorum_helpers import register_controllers

    ctl = register_controllers(sandbox, personas, name="quota-ctl")
    entity = core.entity_of(user=names())
    names.track(entity)
    result = actions.alter_quotas(
        actor=personas["operator"], cluster=ctl, entity=entity, changes={"consumer_byte_rate": 777}
    )
    assert result.ok and not result.before_known and not result.confirmed
    assert "controllers cannot describe quotas" in result.message
    assert current(kafka_cluster, entity.name) == {"consumer_byte_rate": 777.0}  # the brokers see it
    page = client_for(personas["viewer"]).get(f"/c/{ctl.name}/quotas/")
    assert page.status_code == 200 and "do not serve DescribeClientQuotas" in page.content.decode()
    assert "UNSUPPORTED_ENDPOINT_TYPE" in page.content.decode()
    api = client_for(personas["viewer"]).get(f"/api/v1/clusters/{ctl.name}/quotas/")
    assert api.status_code == 400 and api.json()["error"]["code"] == "kafka_error"


def test_the_list_pages_in_kind_order(personas, kafka_cluster, names):
    user = names()
    entities = [f"user={user}", f"user={user},client-id=<default>", f"user={user},client-id=a"]
    gw = gateway_for(kafka_cluster)
    for text in entities:
        names.track(core.parse_entity(text))
    gw.alter_client_quotas(
        [QuotaAlteration(core.parse_entity(t).parts, {"producer_byte_rate": 1.0}) for t in entities]
    )
    pages = [
        reads.list_quotas(
            actor=personas["viewer"], cluster=kafka_cluster, entity_type="user", name=user, page=p, per_page=2
        )
        for p in (1, 2, 3)
    ]
    assert [(p.page, p.pages, p.total, [r.entity.name for r in p.rows]) for p in pages] == [
        (1, 2, 3, entities[:2]),
        (2, 2, 3, entities[2:]),
        (2, 2, 3, entities[2:]),  # past the end: the last page
    ]
    assert [kind for kind, _, _ in pages[0].groups] == ["user", "user+client-id"]
    api = (
        client_for(personas["viewer"])
        .get(
            f"/api/v1/clusters/{kafka_cluster.name}/quotas/",
            {"entity_type": "user", "name": user, "per_page": 2, "page": 2},
        )
        .json()
    )
    assert (api["count"], api["page"], api["pages"], [r["entity"] for r in api["results"]]) == (
        3,
        2,
        2,
        entities[2:],
    )


def test_an_owed_outcome_is_reconciled_from_the_entitys_quotas(personas, kafka_cluster, names):
    from console.audit import outcomes
    from console.quotas import audit_names

    entity = core.entity_of(user=names())
    names.track(entity)
    gateway_for(kafka_cluster).alter_client_quotas(
        [QuotaAlteration(entity.parts, {"producer_byte_rate": 64.0})]
    )
    outcomes.requested(
        actor=personas["operator"],
        action=audit_names.QUOTA_ALTER,
        cluster=kafka_cluster,
        targets=[entity.target],
        params={"entity": entity.name, "set": {"producer_byte_rate": 64.0}, "remove": []},
    )  # the database refused the outcome after Kafka acted: the reconciler re-reads
    assert outcomes.reconcile(grace_s=0) == 1
    event = AuditEvent.objects.filter(action="quota.alter", outcome="reconciled").get()
    assert event.after == {entity.target: {"producer_byte_rate": 64.0}}


def test_the_drift_look_reads_every_quota_keyed_by_type_name(kafka_cluster, names):
    user, client = names("dr"), names("dc")
    entities = [
        core.entity_of(user=user),
        core.entity_of(user=user, client_id=client),
        core.entity_of(user=user, client_id=core.DEFAULT),
        core.entity_of(client_id=client),
    ]
    for entity in entities:
        names.track(entity)
    gw = gateway_for(kafka_cluster)
    gw.alter_client_quotas([QuotaAlteration(e.parts, {"producer_byte_rate": 2048.0}) for e in entities])
    found = gw.client_quotas()
    assert {k: v for k, v in found.items() if user in k or client in k} == {
        f"user={user}": {"producer_byte_rate": 2048.0},
        f"client-id={client},user={user}": {"producer_byte_rate": 2048.0},
        f"client-id=<default>,user={user}": {"producer_byte_rate": 2048.0},
        f"client-id={client}": {"producer_byte_rate": 2048.0},
    }  # as drift has always keyed them: parts sorted by type name
    assert found == {
        ",".join(f"{t}={'<default>' if n is None else n}" for t, n in sorted(e.entity)): dict(e.values)
        for e in gw.describe_client_quotas()
    }
