"""The KRaft lifecycle on the sandbox and on a real Kafka 4.1 with a dynamic quorum (kraft.version 1):
UpdateFeatures' dry run and refusals word for word, UnregisterBroker of an id Kafka does not know and the
console's refusal of a live broker that hosts replicas, the voter APIs' refusals, and one voter removed
and added back through the console's own actions.

Nothing here changes the shared cluster for good: feature updates are validate-only (a dry run of the
current metadata.version and refused levels), no real broker is unregistered, and the voter that is
removed (the highest-numbered voter that does not lead) is added back in a ``finally`` that keeps
trying until DescribeQuorum shows the original voter set again.
"""

from __future__ import annotations

import time

import pytest

from console.kafka import KafkaOperationError
from console.kafka.kraft import QuorumMembers
from console.models import AuditEvent, Cluster
from console.quorum import core, features, unregister, voters
from console.topics import cache as metadata_cache
from tests.conftest import make_personas

from .conftest import eventually

pytestmark = pytest.mark.contract
ALL_FAILED = "The update failed for all features since the following feature had an error: "


@pytest.fixture(params=["brokers", "controllers"])
def any_gw(request):
    return request.getfixturevalue("gw" if request.param == "brokers" else "cgw")


@pytest.fixture
def admin(db, endpoints):
    cluster = Cluster.objects.create(
        name="contract-kraft", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=15
    )
    metadata_cache.clear()
    yield make_personas(cluster)["admin"], cluster
    metadata_cache.clear()


def _levels(gw) -> dict[str, int]:
    return {f.name: int(f.finalized_max or 0) for f in gw.describe_features().values()}


def _supported(gw, name: str) -> tuple[int, int]:
    f = gw.describe_features()[name]
    return f.supported_min, f.supported_max


# -- features ------------------------------------------------------------------------------------


def test_the_dry_run_of_the_current_metadata_version_is_accepted_and_changes_nothing(any_gw):
    before = _levels(any_gw)
    mv = before["metadata.version"]
    answer = any_gw.update_features({"metadata.version": mv}, "upgrade", validate_only=True)
    assert answer == {"metadata.version": None}
    assert _levels(any_gw) == before


def test_kafka_refuses_levels_out_of_range_unknown_features_and_downgrades_in_its_words(any_gw):
    before = _levels(any_gw)
    mv = before["metadata.version"]
    lo, hi = _supported(any_gw, "metadata.version")
    leader = any_gw.quorum_members().leader_id  # Kafka names the active controller ("Local controller")
    cases = [
        ({"metadata.version": hi + 1}, "upgrade", f"Invalid update version {hi + 1} for feature metadata.version. Local controller {leader} only supports versions {lo}-{hi}"),
        ({"ct.unknown.version": 1}, "upgrade", f"Invalid update version 1 for feature ct.unknown.version. Local controller {leader} does not support this feature."),
        ({"metadata.version": mv - 1}, "upgrade", f"Invalid update version {mv - 1} for feature metadata.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."),
        ({"metadata.version": lo}, "safe-downgrade", f"Invalid metadata.version {lo}. Refusing to perform the requested downgrade because it might delete metadata information."),
        ({"metadata.version": lo}, "unsafe-downgrade", f"Invalid metadata.version {lo}. Unsafe metadata downgrade is not supported in this version."),
        ({"kraft.version": 0}, "safe-downgrade", "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature."),
    ]  # fmt: skip
    for updates, kind, words in cases:
        answer = any_gw.update_features(updates, kind, validate_only=True)
        err = next(iter(answer.values()))
        assert err is not None and (err.name, err.message) == ("INVALID_UPDATE_VERSION", ALL_FAILED + words)
    assert _levels(any_gw) == before


@pytest.mark.django_db
def test_the_console_dry_run_shows_kafkas_answer_and_refuses_a_downgrade_not_asked_as_unsafe(gw, admin):
    actor, cluster = admin
    mv = _levels(gw)["metadata.version"]
    result = features.update_features(
        actor=actor, cluster=cluster, updates={"metadata.version": mv}, dry_run=True
    )
    assert result.ok and result.before == {"metadata.version": mv} and "would accept" in result.message
    event = AuditEvent.objects.get(pk=result.event_id)
    assert event.action == "kraft.features.validate" and event.outcome == "success"
    bad = features.update_features(actor=actor, cluster=cluster, updates={"group.version": 99}, dry_run=True)
    assert bad.error is not None and bad.error.name == "INVALID_UPDATE_VERSION"
    assert "only supports versions 0-1" in bad.error.message
    with pytest.raises(core.KraftRefused, match="choose unsafe-downgrade"):
        features.update_features(
            actor=actor, cluster=cluster, updates={"metadata.version": mv - 1},
            upgrade_type="safe-downgrade", dry_run=True,
        )  # fmt: skip
    assert _levels(gw)["metadata.version"] == mv


# -- unregister ----------------------------------------------------------------------------------


def test_kafka_answers_broker_id_not_registered_for_an_unknown_broker(any_gw):
    with pytest.raises(KafkaOperationError) as caught:
        any_gw.unregister_broker(4242)
    assert (caught.value.name, caught.value.message) == (
        "BROKER_ID_NOT_REGISTERED",
        "Broker ID 4242 is not currently registered",
    )


@pytest.mark.django_db
def test_the_console_refuses_a_live_broker_with_replicas_and_passes_kafkas_answer_for_an_unknown_one(
    gw, admin, topics, broker_ids
):
    actor, cluster = admin
    topic = topics.create(partitions=2, replication_factor=len(broker_ids))
    broker = broker_ids[0]
    with pytest.raises(core.KraftRefused) as refused:
        unregister.unregister_broker(actor=actor, cluster=cluster, broker_id=broker)
    text = str(refused.value)
    hosted = gw.replicas_hosted(broker)
    assert f"{topic}-0" in hosted and f"{topic}-1" in hosted
    assert f"broker {broker} is alive (registered and heartbeating)" in text
    assert f"broker {broker} still hosts {len(hosted):,} replica(s) ({', '.join(hosted[:5])}" in text
    assert broker in gw.broker_registrations()[0]  # still registered: nothing was sent
    result = unregister.unregister_broker(actor=actor, cluster=cluster, broker_id=4242)
    assert result.error.name == "BROKER_ID_NOT_REGISTERED"
    actions = list(
        AuditEvent.objects.filter(action="kraft.broker.unregister").values_list("outcome", flat=True)
    )
    assert actions.count("refused") == 1 and "failed" in actions


# -- voters --------------------------------------------------------------------------------------


def test_kafka_refuses_voter_changes_it_cannot_make(any_gw):
    q = any_gw.quorum_members()
    voter = max(v.id for v in q.voters if v.id != q.leader_id)
    dir_id = q.voter(voter).directory_id
    with pytest.raises(KafkaOperationError) as dup:
        any_gw.add_raft_voter(voter, dir_id, q.listeners_of(voter))
    assert (
        dup.value.name == "DUPLICATE_VOTER"
        and f"ReplicaKey(id={voter}, directoryId={dir_id})" in dup.value.message
    )
    with pytest.raises(KafkaOperationError) as missing:
        any_gw.remove_raft_voter(voter, "AAAAAAAAAAAAAAAAAAAAAQ")
    assert missing.value.name == "VOTER_NOT_FOUND"
    assert missing.value.message.startswith(
        f"Cannot remove voter ReplicaKey(id={voter}, directoryId=AAAAAAAAAAAAAAAAAAAAAQ)"
    )
    with pytest.raises(KafkaOperationError) as invalid:
        any_gw.remove_raft_voter(voter, "AAAAAAAAAAAAAAAAAAAAAA")
    assert (invalid.value.name, invalid.value.message) == (
        "INVALID_REQUEST",
        "Remove voter request didn't include a valid voter",
    )
    assert sorted(v.id for v in any_gw.quorum_members().voters) == sorted(v.id for v in q.voters)


def _restore(gw, original: QuorumMembers, node: int) -> None:
    """Add ``node`` back until DescribeQuorum shows the original voters (60 s at most)."""
    deadline = time.monotonic() + 60
    want = sorted(v.id for v in original.voters)
    while time.monotonic() < deadline:
        now = gw.quorum_members()
        if sorted(v.id for v in now.voters) == want:
            return
        try:
            gw.add_raft_voter(node, original.voter(node).directory_id, original.listeners_of(node))
        except KafkaOperationError:
            time.sleep(1)
    raise AssertionError(
        f"voter {node} could not be added back: restore it with kafka-metadata-quorum.sh add-controller"
    )


@pytest.mark.django_db
def test_the_console_removes_a_follower_voter_and_adds_it_back(gw, admin):
    actor, cluster = admin
    original = gw.quorum_members()
    node = max(v.id for v in original.voters if v.id != original.leader_id)
    with pytest.raises(core.KraftInvalid, match="is not a voter"):
        voters.remove_voter(actor=actor, cluster=cluster, node_id=4242)
    with pytest.raises(core.KraftRefused, match="is the active controller"):
        voters.remove_voter(actor=actor, cluster=cluster, node_id=original.leader_id)
    try:
        removed = voters.remove_voter(actor=actor, cluster=cluster, node_id=node)
        assert removed.ok and removed.confirmed, removed.message
        assert node not in [v["id"] for v in removed.after]
        with pytest.raises(core.KraftRefused, match="already a voter"):
            voters.add_voter(actor=actor, cluster=cluster, node_id=original.leader_id, endpoint="127.0.0.1:1")
        where = original.listeners_of(node)[0]
        added = eventually(
            lambda: _try_add(actor, cluster, node, core.endpoint_text(*where)),
            lambda r: r is not None,
            timeout=30,
        )
        assert added is not None and added.ok and added.confirmed, added and added.message
        assert sorted(v["id"] for v in added.after) == sorted(v.id for v in original.voters)
    finally:
        _restore(gw, original, node)
    assert sorted(v.id for v in gw.quorum_members().voters) == sorted(v.id for v in original.voters)
    kinds = list(
        AuditEvent.objects.filter(action__startswith="kraft.voter.")
        .order_by("id")
        .values_list("action", "outcome")
    )
    assert ("kraft.voter.remove", "success") in kinds and ("kraft.voter.add", "success") in kinds


def _try_add(actor, cluster, node, endpoint):
    """The console's add, or None while the removed controller is not yet a caught-up observer."""
    try:
        return voters.add_voter(actor=actor, cluster=cluster, node_id=node, endpoint=endpoint)
    except core.KraftRefused:
        return None
