"""UpdateFeatures (57), UnregisterBroker (64), AddRaftVoter (80) and RemoveRaftVoter (81) on the wire, with
the error codes and words Kafka 4.1 answers (checked against a real 4.1 cluster: see the contract test
``tests/contract/test_kraft_lifecycle.py``)."""

from __future__ import annotations

import uuid

from kafka.protocol.admin import DescribeClusterRequest, DescribeQuorumRequest, UpdateFeaturesRequest
from kafka.protocol.metadata import ApiVersionsRequest

from sandbox.handlers.kraft import directory_id
from sandbox.protocol.kraft import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UnregisterBrokerRequest,
    UnregisterBrokerResponse,
)
from tests.sandbox.conftest import call

ALL_FAILED = "The update failed for all features since the following feature had an error: "
ZERO = uuid.UUID(int=0)


def _ctl(cluster, node: int) -> str:
    n = cluster.state.controllers[node]
    return f"{n.host}:{n.port}"


def _features(cluster, hostport=None):
    resp = call(
        hostport or cluster.bootstrap_servers.split(",")[0],
        ApiVersionsRequest(client_software_name="t", client_software_version="1"),
        3,
    )
    return {f.name: f.max_version_level for f in resp.finalized_features}, resp.finalized_features_epoch


def _update(cluster, updates, kind=1, validate_only=False, version=2, hostport=None):
    K = UpdateFeaturesRequest.FeatureUpdateKey
    req = UpdateFeaturesRequest(
        timeout_ms=1000,
        feature_updates=[
            K(feature=n, max_version_level=v, allow_downgrade=kind != 1, upgrade_type=kind)
            for n, v in updates.items()
        ],
        validate_only=validate_only,
    )
    return call(hostport or _ctl(cluster, cluster.state.active_controller), req, version)


def _quorum(cluster):
    q = DescribeQuorumRequest
    part = q.TopicData.PartitionData(partition_index=0)
    resp = call(
        _ctl(cluster, cluster.state.active_controller),
        q(topics=[q.TopicData(topic_name="__cluster_metadata", partitions=[part])]),
        2,
    )
    p = resp.topics[0].partitions[0]
    return p, [v.replica_id for v in p.current_voters], sorted(o.replica_id for o in p.observers), resp


def _remove(cluster, node, dir_id=None, hostport=None):
    req = RemoveRaftVoterRequest(
        cluster_id=None, voter_id=node, voter_directory_id=directory_id(node) if dir_id is None else dir_id
    )
    resp = call(
        hostport or _ctl(cluster, cluster.state.active_controller),
        req,
        0,
        response_cls=RemoveRaftVoterResponse,
    )
    return resp.error_code, resp.error_message


def _add(cluster, node, dir_id=None, listener="CONTROLLER", port=None):
    n = cluster.state.controllers[node]
    req = AddRaftVoterRequest(
        cluster_id=None,
        timeout_ms=1000,
        voter_id=node,
        voter_directory_id=directory_id(node) if dir_id is None else dir_id,
        listeners=[AddRaftVoterRequest.Listener(name=listener, host=n.host, port=port or n.port)],
    )
    resp = call(_ctl(cluster, cluster.state.active_controller), req, 0, response_cls=AddRaftVoterResponse)
    return resp.error_code, resp.error_message


def _unregister(cluster, broker, hostport=None):
    resp = call(
        hostport or cluster.bootstrap_servers.split(",")[0],
        UnregisterBrokerRequest(broker_id=broker),
        0,
        response_cls=UnregisterBrokerResponse,
    )
    return resp.error_code, resp.error_message


def _registered(cluster):
    req = DescribeClusterRequest(
        include_cluster_authorized_operations=False, endpoint_type=1, include_fenced_brokers=True
    )
    resp = call(cluster.bootstrap_servers.split(",")[0], req, 2)
    return {b.broker_id: b.is_fenced for b in resp.brokers}


# -- UpdateFeatures ------------------------------------------------------------------------------


def test_it_validates_feature_updates_with_kafkas_words_and_changes_nothing(cluster):
    before = _features(cluster)
    ok = _update(cluster, {"metadata.version": 27}, validate_only=True)
    assert (ok.error_code, ok.error_message) == (0, None)
    cases = [
        ({"metadata.version": 28}, 1, "Invalid update version 28 for feature metadata.version. Local controller 101 only supports versions 7-27"),
        ({"foo.version": 1}, 1, "Invalid update version 1 for feature foo.version. Local controller 101 does not support this feature."),
        ({"metadata.version": 26}, 1, "Invalid update version 26 for feature metadata.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."),
        ({"metadata.version": 7}, 2, "Invalid metadata.version 7. Refusing to perform the requested downgrade because it might delete metadata information."),
        ({"metadata.version": 7}, 3, "Invalid metadata.version 7. Unsafe metadata downgrade is not supported in this version."),
        ({"group.version": -1}, 1, "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."),
        ({"kraft.version": 0}, 2, "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature."),
        ({"group.version": 1}, 9, "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."),
        ({"group.version": 1, "foo.version": 1}, 1, "Invalid update version 1 for feature foo.version. Local controller 101 does not support this feature."),
    ]  # fmt: skip
    for updates, kind, words in cases:
        for validate_only in (True, False):
            resp = _update(cluster, updates, kind, validate_only=validate_only)
            assert (resp.error_code, resp.error_message) == (95, ALL_FAILED + words), updates
    assert _features(cluster) == before


def test_it_applies_a_safe_downgrade_and_an_upgrade_and_bumps_the_epoch(cluster):
    levels, epoch = _features(cluster)
    assert levels["group.version"] == 1
    assert _update(cluster, {"group.version": 0}, 2).error_code == 0
    after, epoch2 = _features(cluster)
    assert "group.version" not in after and epoch2 == epoch + 1  # level 0: no longer finalized
    assert _update(cluster, {"group.version": 1}).error_code == 0
    assert _features(cluster)[0]["group.version"] == 1
    # 27 -> 26 changes no metadata: Kafka 4.1 takes it as a safe downgrade
    assert _update(cluster, {"metadata.version": 26}, 2).error_code == 0
    assert _features(cluster)[0]["metadata.version"] == 26
    assert _update(cluster, {"metadata.version": 27}).error_code == 0


def test_it_answers_update_features_v1_with_per_feature_results_and_not_on_an_inactive_controller(cluster):
    resp = _update(cluster, {"group.version": 5}, version=1, validate_only=True)
    assert resp.error_code == 95 and [r.feature for r in resp.results] == ["group.version"]
    inactive = _update(cluster, {"group.version": 0}, 2, hostport=_ctl(cluster, 102))
    assert inactive.error_code == 41
    assert _features(cluster)[0]["group.version"] == 1


# -- UnregisterBroker ----------------------------------------------------------------------------


def test_it_unregisters_only_registered_brokers_and_a_live_one_registers_again(cluster):
    assert _unregister(cluster, 42) == (102, "Broker ID 42 is not currently registered")
    assert _unregister(cluster, 101) == (102, "Broker ID 101 is not currently registered")
    assert _unregister(cluster, 2) == (0, None)  # Kafka answers it for a live broker too
    assert _registered(cluster) == {1: False, 2: False, 3: False}
    cluster.stop_broker(3)
    assert _registered(cluster) == {1: False, 2: False, 3: True}
    assert _unregister(cluster, 3, _ctl(cluster, 102)) == (41, None)  # not the active controller
    assert _unregister(cluster, 3, _ctl(cluster, 101)) == (0, None)
    assert _registered(cluster) == {1: False, 2: False}
    assert _unregister(cluster, 3) == (102, "Broker ID 3 is not currently registered")
    cluster.start_broker(3)
    assert _registered(cluster) == {1: False, 2: False, 3: False}


# -- AddRaftVoter / RemoveRaftVoter --------------------------------------------------------------


def test_it_removes_a_voter_which_stays_an_observer_and_adds_it_back(cluster):
    assert _remove(cluster, 103) == (0, None)
    part, voters, observers, resp = _quorum(cluster)
    assert voters == [101, 102] and observers == [1, 2, 3, 103]
    assert [n.node_id for n in resp.nodes] == [101, 102]
    assert _add(cluster, 103) == (0, None)
    assert _quorum(cluster)[1:3] == ([101, 102, 103], [1, 2, 3])


def test_it_refuses_voter_changes_as_kafka_does(cluster):
    key = "ReplicaKey(id={}, directoryId={})"
    dq = _quorum(cluster)[0]
    shown = {v.replica_id: v.replica_directory_id for v in dq.current_voters}
    import base64

    def text(u):
        return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")

    voter_set = "[" + ", ".join(key.format(i, text(shown[i])) for i in (101, 102, 103)) + "]"
    other = uuid.uuid4()
    assert _remove(cluster, 102, ZERO) == (42, "Remove voter request didn't include a valid voter")
    assert _remove(cluster, 102, other) == (
        127,
        f"Cannot remove voter {key.format(102, text(other))} from the set of voters {voter_set}",
    )
    assert _remove(cluster, 55, other)[0] == 127
    assert _remove(cluster, 102, hostport=_ctl(cluster, 102)) == (6, None)
    assert _add(cluster, 102) == (
        126,
        f"The voter id for {key.format(102, text(shown[102]))} is already part of the set of voters {voter_set}.",
    )
    assert _add(cluster, 103, ZERO) == (42, "Add voter request didn't include a valid voter")
    assert _remove(cluster, 103) == (0, None)
    assert _add(cluster, 103, other) == (
        7,
        f"Aborted add voter operation for {key.format(103, text(other))} since it is lagging behind",
    )
    assert _add(cluster, 103, listener="EXTERNAL")[0] == 42
    assert _quorum(cluster)[1] == [101, 102]
    cluster.state.features["kraft.version"] = 0
    try:
        assert _add(cluster, 103) == (
            35,
            "Cluster doesn't support adding voter because the kraft.version feature is 0",
        )
        assert _remove(cluster, 102) == (
            35,
            "Cluster doesn't support removing voter because the kraft.version feature is 0",
        )
    finally:
        cluster.state.features["kraft.version"] = 1
    # a real 4.1 leader added a voter named with a wrong port (the voter then corrects its endpoint)
    assert _add(cluster, 103, port=1) == (0, None)
    assert [n.listeners[0].port for n in _quorum(cluster)[3].nodes if n.node_id == 103] == [
        cluster.state.controllers[103].port
    ]


def test_it_moves_the_leadership_when_the_leader_is_removed_and_never_removes_the_last_voter(cluster):
    assert _remove(cluster, 101) == (0, None)
    part, voters, observers, _ = _quorum(cluster)
    assert (part.leader_id, part.leader_epoch, voters) == (102, 2, [102, 103])
    assert 101 in observers
    assert _remove(cluster, 103) == (0, None)
    assert _remove(cluster, 102)[0] == 127  # the last voter
    assert _quorum(cluster)[1] == [102]


def test_it_times_out_a_removal_the_remaining_voters_cannot_commit(cluster):
    cluster.stop_controller(102)
    assert _remove(cluster, 103) == (7, None)
    assert _quorum(cluster)[1] == [101, 102, 103]
