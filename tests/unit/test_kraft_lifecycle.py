"""The KRaft lifecycle through every door on a sandbox of its own (2 brokers, controllers 101-103): a voter
removed and added back, the removals that would cost the quorum its majority refused with the reason,
feature levels previewed (Kafka's validate-only) and changed, a stopped broker unregistered while a live
one with replicas is refused naming its partitions, bad input refused before Kafka with nothing changed,
the audit trail of each, and change control holding each kind until another admin approves."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from console import operations
from console.kafka import NewTopic, close_all
from console.models import AuditEvent, Cluster, Role, RoleBinding
from console.models.requests import ChangeRequest, RequestState
from console.quorum import core, features, held, unregister, voters
from console.requests import actions as requests
from sandbox.testing import running_sandbox
from tests.conftest import hold, make_personas
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def ks():
    with running_sandbox(brokers=2, controllers=3, speed=0) as c:
        yield c
        close_all()


@pytest.fixture
def kc(ks):
    """The module's sandbox registered as "kraft", its quorum, features and brokers restored after."""
    st = ks.state
    with st.lock:
        saved = (
            set(st.removed_voters),
            set(st.unregistered_brokers),
            dict(st.features),
            st.active_controller,
        )
    cluster = Cluster.objects.create(
        name="kraft", bootstrap_servers=ks.bootstrap_servers, request_timeout_s=5
    )
    yield cluster
    for cid, node in st.controllers.items():
        if not node.up:
            ks.start_controller(cid)
    for bid, node in st.brokers.items():
        if not node.up:
            ks.start_broker(bid)
    with st.lock:
        st.removed_voters, st.unregistered_brokers, st.features = set(saved[0]), set(saved[1]), dict(saved[2])
        st.active_controller = saved[3]
    ks.advance(1)  # every live node fetches again: caught up


@pytest.fixture
def people(kc, django_user_model):
    found = make_personas(kc)
    admin2 = django_user_model.objects.create_user(username="admin2", password="pw-admin2")
    RoleBinding.objects.create(cluster=kc, user=admin2, role=Role.ADMIN)
    found["admin2"] = admin2
    return found


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def voter_ids(cluster) -> list[int]:
    return sorted(v.id for v in voters.members(cluster)[0].voters)


def endpoint_of(ks, node: int) -> str:
    n = ks.state.controllers[node]
    return f"CONTROLLER://{n.host}:{n.port}"


def events(action: str) -> list[tuple[str, str | None]]:
    return list(
        AuditEvent.objects.filter(action=action).order_by("id").values_list("outcome", "cluster_name")
    )


# -- voters --------------------------------------------------------------------------------------


def test_an_admin_removes_a_voter_and_adds_it_back_with_the_audit_trail(ks, kc, people):
    admin = people["admin"]
    removed = voters.remove_voter(actor=admin, cluster=kc, node_id=103)
    assert (removed.ok, removed.confirmed) == (True, True), removed.message
    assert [v["id"] for v in removed.before] == [101, 102, 103] and [v["id"] for v in removed.after] == [
        101,
        102,
    ]
    assert voter_ids(kc) == [101, 102]
    rows = list(AuditEvent.objects.filter(action="kraft.voter.remove").order_by("id"))
    assert [r.outcome for r in rows] == ["requested", "success"]
    assert rows[1].before == {"voters": removed.before} and rows[1].after == {"voters": removed.after}
    assert rows[1].targets == ["controller:103"]
    # through the brokers the console does not know a controller's endpoint: it must be named
    with pytest.raises(core.KraftInvalid, match="give controller 103's endpoint"):
        voters.add_voter(actor=admin, cluster=kc, node_id=103)
    added = voters.add_voter(actor=admin, cluster=kc, node_id=103, endpoint=endpoint_of(ks, 103))
    assert added.ok and added.confirmed and voter_ids(kc) == [101, 102, 103]
    assert [o for o, _ in events("kraft.voter.add")] == ["refused", "requested", "success"]


def test_a_removal_that_would_lose_the_majority_is_refused_with_the_reason(ks, kc, people):
    ks.stop_controller(102)
    ks.advance(30)
    with pytest.raises(core.KraftRefused) as refused:
        voters.remove_voter(actor=people["admin"], cluster=kc, node_id=103)
    assert "1 of the 2 remaining voters are caught up, fewer than the 2 a majority needs" in str(
        refused.value
    )
    assert "102 (has not caught up recently)" in str(refused.value)
    assert voter_ids(kc) == [101, 102, 103]
    assert [o for o, _ in events("kraft.voter.remove")] == ["refused"]
    answer = client_for(people["admin"]).post(
        "/api/v1/clusters/kraft/quorum/voters/remove/", {"node_id": 103}, content_type="application/json"
    )
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "unsafe", answer.content


def test_the_leader_is_removed_only_on_purpose_and_the_last_voter_never(ks, kc, people):
    admin = people["admin"]
    with pytest.raises(core.KraftRefused, match="101 is the active controller"):
        voters.remove_voter(actor=admin, cluster=kc, node_id=101)
    result = voters.remove_voter(actor=admin, cluster=kc, node_id=101, allow_leader=True)
    assert result.ok and voters.members(kc)[0].leader_id == 102
    assert voters.remove_voter(actor=admin, cluster=kc, node_id=103).ok
    with pytest.raises(core.KraftRefused, match="102 is the last voter"):
        voters.remove_voter(actor=admin, cluster=kc, node_id=102, allow_leader=True)
    assert voter_ids(kc) == [102]


def test_adding_refuses_a_voter_a_broker_or_a_wrong_directory_id(ks, kc, people):
    admin = people["admin"]
    with pytest.raises(core.KraftRefused, match="102 is already a voter"):
        voters.add_voter(actor=admin, cluster=kc, node_id=102, endpoint=endpoint_of(ks, 102))
    with pytest.raises(core.KraftRefused, match="1 is a registered broker"):
        voters.add_voter(actor=admin, cluster=kc, node_id=1, endpoint="CONTROLLER://127.0.0.1:1")
    with pytest.raises(core.KraftRefused, match="not fetching the metadata log"):
        voters.add_voter(actor=admin, cluster=kc, node_id=777, endpoint="CONTROLLER://127.0.0.1:1")
    assert voters.remove_voter(actor=admin, cluster=kc, node_id=103).ok
    with pytest.raises(core.KraftRefused, match="is not the one controller 103 fetches with"):
        voters.add_voter(
            actor=admin, cluster=kc, node_id=103, directory_id="B" * 22, endpoint=endpoint_of(ks, 103)
        )
    assert voter_ids(kc) == [101, 102]


def test_bad_input_and_other_roles_change_nothing_on_every_door(ks, kc, people):
    admin = people["admin"]
    for kwargs, words in (
        ({"node_id": "x"}, "must be a whole number"),
        ({"node_id": 103, "directory_id": "short"}, "is not a directory id"),
        ({"node_id": 999}, "node 999 is not a voter"),
    ):
        with pytest.raises(core.KraftInvalid, match=words):
            voters.remove_voter(actor=admin, cluster=kc, **kwargs)
    with pytest.raises(core.KraftInvalid, match="has no port"):
        voters.add_voter(actor=admin, cluster=kc, node_id=103, endpoint="CONTROLLER://host")
    with pytest.raises(PermissionDenied):
        voters.remove_voter(actor=people["operator"], cluster=kc, node_id=103)
    api = client_for(admin)
    bad = api.post("/api/v1/clusters/kraft/quorum/voters/remove/", {"node_id": 103, "directory_id": "??"},
                   content_type="application/json")  # fmt: skip
    assert bad.status_code == 400 and "is not a directory id" in bad.json()["error"]["message"], bad.content
    assert (
        client_for(people["operator"])
        .post(
            "/api/v1/clusters/kraft/quorum/voters/remove/", {"node_id": 103}, content_type="application/json"
        )
        .status_code
        == 403
    )
    code, out = kafka(
        "quorum", "remove-voter", "--cluster", "kraft", "--controller-id", "999", "--as", "admin"
    )
    assert code == 4 and "node 999 is not a voter" in out
    page = client_for(admin).post(
        "/c/kraft/quorum/voters/", {"form": "add", "node_id": "103", "endpoint": "nope"}
    )
    assert page.status_code == 200 and b"has no port" in page.content
    assert voter_ids(kc) == [101, 102, 103]
    assert not AuditEvent.objects.filter(
        action__startswith="kraft.", outcome__in=["requested", "success"]
    ).exists()
    assert set(AuditEvent.objects.filter(action__startswith="kraft.").values_list("outcome", flat=True)) == {
        "refused"
    }


def test_the_page_the_api_and_the_cli_remove_and_add(ks, kc, people):
    admin = client_for(people["admin"])
    page = admin.get("/c/kraft/quorum/voters/")
    assert page.status_code == 200 and b'data-node="103" data-role="voter"' in page.content
    assert (
        admin.post(
            "/c/kraft/quorum/voters/", {"form": "remove", "node_id": "103", "action": "remove"}
        ).status_code
        == 302
    )
    assert voter_ids(kc) == [101, 102]
    answer = admin.post(
        "/api/v1/clusters/kraft/quorum/voters/add/",
        {"node_id": 103, "endpoint": endpoint_of(ks, 103)},
        content_type="application/json",
    )
    assert answer.status_code == 200 and answer.json()["ok"] is True, answer.content
    code, out = kafka(
        "quorum", "remove-voter", "--cluster", "kraft", "--controller-id", "103", "--as", "admin"
    )
    assert code == 0 and "controller 103 removed from the voters" in out
    code, out = kafka("quorum", "describe", "--cluster", "kraft", "--as", "admin")
    assert code == 0 and "Observer" in out
    code, out = kafka("quorum", "add-voter", "--cluster", "kraft", "--controller-id", "103",
                      "--controller-endpoint", endpoint_of(ks, 103), "--as", "admin")  # fmt: skip
    assert code == 0, out
    assert voter_ids(kc) == [101, 102, 103]


def test_change_control_holds_a_voter_change_until_another_admin_approves(ks, kc, people):
    hold(kc, people["admin"], [held.VOTER_GATE])
    code, out = kafka(
        "quorum", "remove-voter", "--cluster", "kraft", "--controller-id", "103", "--as", "admin"
    )
    assert code == 3, out
    answer = client_for(people["admin"]).post(
        "/api/v1/clusters/kraft/quorum/voters/remove/", {"node_id": 103, "reason": "retire"},
        content_type="application/json",
    )  # fmt: skip
    assert answer.status_code == 202, answer.content
    req = ChangeRequest.objects.get(pk=answer.json()["id"])
    assert (req.kind, req.state) == ("change.voter", RequestState.PENDING)
    assert req.review["rows"][0][:2] == ["remove", "103"]
    assert voter_ids(kc) == [101, 102, 103]
    requests.decide(actor=people["admin2"], request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED, req.result
    assert voter_ids(kc) == [101, 102]
    code, out = kafka("quorum", "add-voter", "--cluster", "kraft", "--controller-id", "103",
                      "--controller-endpoint", endpoint_of(ks, 103), "--submit-for-approval", "back", "--as", "admin")  # fmt: skip
    assert code == 0 and "held for approval" in out
    back = ChangeRequest.objects.filter(kind="change.voter", state=RequestState.PENDING).get()
    requests.decide(actor=people["admin2"], request=back, approve=True, comment="ok")
    back.refresh_from_db()
    operations.run(back.operation_id, worker="test")
    back.refresh_from_db()
    assert back.state == RequestState.SUCCEEDED, back.result
    assert voter_ids(kc) == [101, 102, 103]


# -- features ------------------------------------------------------------------------------------


def test_features_are_previewed_with_kafkas_answer_and_changed_on_every_door(ks, kc, people):
    admin = people["admin"]
    api = client_for(admin)
    answer = api.post(
        "/api/v1/clusters/kraft/quorum/features/",
        {"updates": {"group.version": 7}},
        content_type="application/json",
    )
    assert answer.status_code == 207 and answer.json()["error"]["name"] == "INVALID_UPDATE_VERSION"
    assert "Local controller 101 only supports versions 0-1" in answer.json()["error"]["message"]
    page = api.post("/c/kraft/quorum/features/", {"updates": "group.version=0", "upgrade_type": "safe-downgrade",
                                                  "action": "preview"})  # fmt: skip
    assert page.status_code == 200 and b"Kafka would accept" in page.content
    assert features.finalized(kc)["group.version"] == 1
    assert [o for o, _ in events("kraft.features.validate")] == ["failed", "success"]
    code, out = kafka(
        "features", "downgrade", "--cluster", "kraft", "--feature", "group.version=0", "--as", "admin"
    )
    assert code == 0 and "done" in out
    assert features.finalized(kc).get("group.version", 0) == 0
    answer = api.post("/api/v1/clusters/kraft/quorum/features/",
                      {"updates": {"group.version": 1}, "dry_run": False}, content_type="application/json")  # fmt: skip
    assert answer.status_code == 200 and answer.json()["after"] == {"group.version": 1}, answer.content
    rows = list(AuditEvent.objects.filter(action="kraft.features.update").order_by("id"))
    assert [r.outcome for r in rows] == ["requested", "success", "requested", "success"]
    assert rows[-1].before == {"features": {"group.version": 0}} and rows[-1].after == {
        "features": {"group.version": 1}
    }
    code, out = kafka("features", "describe", "--cluster", "kraft", "--as", "viewer")
    assert code == 0 and "metadata.version" in out


def test_a_metadata_version_downgrade_needs_unsafe_and_bad_levels_change_nothing(ks, kc, people):
    admin = people["admin"]
    with pytest.raises(core.KraftRefused, match="choose unsafe-downgrade"):
        features.update_features(
            actor=admin, cluster=kc, updates={"metadata.version": 26}, upgrade_type="safe-downgrade"
        )
    result = features.update_features(
        actor=admin, cluster=kc, updates={"metadata.version": 7}, upgrade_type="unsafe-downgrade"
    )
    assert result.error.message.endswith(
        "Invalid metadata.version 7. Unsafe metadata downgrade is not supported in this version."
    )
    for updates, words in (({"Metadata": 1}, "is not a feature name"), ("metadata.version", "is not name=level"),
                           ({"group.version": "x"}, "must be a whole number")):  # fmt: skip
        with pytest.raises(core.KraftInvalid, match=words):
            features.update_features(actor=admin, cluster=kc, updates=updates)
    bad = client_for(admin).post("/api/v1/clusters/kraft/quorum/features/",
                                 {"updates": {"metadata.version": 26}, "upgrade_type": "safe-downgrade", "dry_run": False},
                                 content_type="application/json")  # fmt: skip
    assert bad.status_code == 409
    assert features.finalized(kc)["metadata.version"] == 27
    unsafe = features.update_features(
        actor=admin, cluster=kc, updates={"metadata.version": 26}, upgrade_type="unsafe-downgrade"
    )
    assert unsafe.ok and features.finalized(kc)["metadata.version"] == 26  # 4.1-IV1 -> IV0 changed no record
    page = client_for(admin).get("/c/kraft/quorum/features/")
    assert b'id="metadata-release">(4.1-IV0)' in page.content
    # back up by release name, as kafka-features.sh upgrade --metadata 4.1 / the API's string level
    code, out = kafka(
        "features", "upgrade", "--cluster", "kraft", "--metadata", "4.1", "--dry-run", "--as", "admin"
    )
    assert code == 0 and "metadata.version" in out
    assert features.finalized(kc)["metadata.version"] == 26  # a dry run changed nothing
    answer = client_for(admin).post("/api/v1/clusters/kraft/quorum/features/",
                                    {"updates": {"metadata.version": "4.1-IV1"}, "dry_run": False},
                                    content_type="application/json")  # fmt: skip
    assert answer.status_code == 200 and answer.json()["after"] == {"metadata.version": 27}, answer.content
    listed = client_for(admin).get("/api/v1/clusters/kraft/quorum/features/").json()
    assert {f["name"]: f["release"] for f in listed}["metadata.version"] == "4.1-IV1"
    code, out = kafka("features", "describe", "--cluster", "kraft", "--output", "json", "--as", "admin")
    assert code == 0 and '"release": "4.1-IV1"' in out
    bad = client_for(admin).post("/api/v1/clusters/kraft/quorum/features/",
                                 {"updates": {"metadata.version": "9.9-IV9"}}, content_type="application/json")  # fmt: skip
    assert bad.status_code == 400 and "4.1-IV1" in bad.content.decode()


def test_change_control_holds_a_features_change_but_not_its_dry_run(ks, kc, people):
    hold(kc, people["admin"], [held.FEATURES_GATE])
    dry = features.update_features(actor=people["admin"], cluster=kc, updates={"group.version": 0},
                                   upgrade_type="safe-downgrade", dry_run=True)  # fmt: skip
    assert dry.ok
    code, out = kafka("features", "downgrade", "--cluster", "kraft", "--feature", "group.version=0",
                      "--submit-for-approval", "test", "--as", "admin")  # fmt: skip
    assert code == 0 and "held for approval" in out
    req = ChangeRequest.objects.get(kind="change.features")
    assert req.review["rows"] == [["group.version", "1", "0", "safe-downgrade"]]
    assert features.finalized(kc)["group.version"] == 1
    requests.decide(actor=people["admin2"], request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert req.state == RequestState.SUCCEEDED, req.result
    assert features.finalized(kc).get("group.version", 0) == 0


# -- unregister ----------------------------------------------------------------------------------


def test_a_live_broker_with_replicas_is_refused_and_a_stopped_empty_one_unregistered(ks, kc, people):
    from console.clusters.actions import gateway_for

    gw = gateway_for(kc)
    topic = "kraft-only-on-1"
    gw.create_topics([NewTopic(topic, 2, 1, ((1,), (1,)), {})])
    admin = people["admin"]
    with pytest.raises(core.KraftRefused) as refused:
        unregister.unregister_broker(actor=admin, cluster=kc, broker_id=1)
    assert "broker 1 is alive" in str(refused.value) and f"{topic}-0" in str(refused.value)
    code, out = kafka("brokers", "unregister", "--cluster", "kraft", "1", "--as", "admin")
    assert code == 4 and "still hosts" in out
    with pytest.raises(core.KraftRefused, match="broker 2 is alive"):
        unregister.unregister_broker(actor=admin, cluster=kc, broker_id=2)
    ks.stop_broker(2)
    assert gw.broker_registrations() == ((1,), (2,))
    page = client_for(admin).get("/c/kraft/quorum/unregister/2/")
    assert page.status_code == 200 and b"<strong>fenced</strong>" in page.content
    wrong = client_for(admin).post(
        "/c/kraft/quorum/unregister/2/", {"confirmation": "3", "action": "unregister"}
    )
    assert wrong.status_code == 200 and gw.broker_registrations() == ((1,), (2,))
    done = client_for(admin).post(
        "/c/kraft/quorum/unregister/2/", {"confirmation": "2", "action": "unregister"}
    )
    assert done.status_code == 302
    assert gw.broker_registrations() == ((1,), ())
    rows = list(AuditEvent.objects.filter(action="kraft.broker.unregister").order_by("id"))
    assert [r.outcome for r in rows] == ["refused", "refused", "refused", "requested", "success"]
    assert (rows[-1].before, rows[-1].after) == ({"broker:2": "fenced"}, {"broker:2": "not registered"})
    answer = client_for(admin).post(
        "/api/v1/clusters/kraft/brokers/2/unregister/", {}, content_type="application/json"
    )
    assert answer.status_code == 207 and answer.json()["error"]["name"] == "BROKER_ID_NOT_REGISTERED"
    gw.delete_topics([topic])


def test_the_reconciler_re_reads_each_kraft_change_whose_outcome_was_lost(ks, kc, people):
    """A KRaft change whose outcome event could not be written is settled from what Kafka shows:
    the named features' levels, the voter set, the broker's registration."""
    from console.audit import outcomes
    from console.models import OwedOutcome

    owed = [
        ("kraft.features.update", ["features"], {"updates": {"metadata.version": 27}, "upgrade_type": "upgrade"}),
        ("kraft.voter.remove", ["controller:103"], {"node_id": 103}),
        ("kraft.broker.unregister", ["broker:9"], {"broker_id": 9}),
    ]  # fmt: skip
    for action, targets, params in owed:
        outcomes.requested(actor=people["admin"], action=action, cluster=kc, targets=targets, params=params)
    assert outcomes.reconcile(grace_s=0) == 3
    found = {e.action: e.after for e in AuditEvent.objects.filter(outcome="reconciled")}
    assert found["kraft.features.update"] == {"features": {"metadata.version": 27}}
    assert [v["id"] for v in found["kraft.voter.remove"]["voters"]] == [101, 102, 103]
    assert found["kraft.broker.unregister"] == {"broker:9": "not registered"}
    assert not OwedOutcome.objects.exists()


def test_a_held_kraft_change_drifts_when_the_cluster_changed_since_its_review(ks, kc, people):
    """Approving a held features or voter change whose pinned state moved (the levels, the voter set)
    is refused as drifted: the request goes back to review with the new state, and nothing runs."""
    from console.changes import actions as changes
    from console.changes import gate

    hold(kc, people["admin"], [held.FEATURES_GATE, held.VOTER_GATE])
    code, out = kafka("features", "downgrade", "--cluster", "kraft", "--feature", "group.version=0",
                      "--submit-for-approval", "test", "--as", "admin")  # fmt: skip
    assert code == 0 and "held for approval" in out
    code, out = kafka("quorum", "remove-voter", "--cluster", "kraft", "--controller-id", "103",
                      "--submit-for-approval", "retire", "--as", "admin")  # fmt: skip
    assert code == 0 and "held for approval" in out
    with gate.passed(held.FEATURES_GATE):
        assert features.update_features(actor=people["admin"], cluster=kc, updates={"group.version": 0},
                                         upgrade_type="safe-downgrade").ok  # fmt: skip
    with gate.passed(held.VOTER_GATE):
        assert voters.remove_voter(actor=people["admin"], cluster=kc, node_id=102).ok
    for kind in ("change.features", "change.voter"):
        req = changes.approve_change(actor=people["admin2"], request=ChangeRequest.objects.get(kind=kind))
        assert req.state == RequestState.PENDING and req.events.filter(step="drifted").exists(), kind
        assert req.operation_id is None, kind
    assert voter_ids(kc) == [101, 103]  # the held removal of 103 did not run
