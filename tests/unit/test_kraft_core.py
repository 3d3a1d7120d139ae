"""The KRaft lifecycle's rules as plain data: majorities after a voter removal, who may become a voter,
which broker may be unregistered, and the input checks (no Kafka, no database)."""

from __future__ import annotations

import pytest

from console.quorum import core

M = core.Member


def voters(*spec: tuple[int, bool]) -> list[core.Member]:
    return [M(i, f"dir{i:019d}", ok, "" if ok else "9 records behind the high watermark") for i, ok in spec]


@pytest.mark.parametrize(
    ("spec", "node", "unsafe"),
    [
        (((1, True), (2, True), (3, True)), 3, False),  # 2 of 2 left caught up
        (((1, True), (2, False), (3, True)), 3, True),  # 1 of 2: no majority of the new set
        (((1, True), (2, False), (3, True)), 2, False),  # removing the lagging one is what helps
        (((1, True), (2, True), (3, False), (4, False), (5, True)), 5, True),  # 2 of 4 < 3
        (((1, True), (2, True), (3, True), (4, False), (5, True)), 4, False),
        (((1, True), (2, True)), 2, False),  # 1 of 1
    ],
)
def test_a_removal_keeps_a_caught_up_majority_of_the_new_voter_set(spec, node, unsafe):
    invalid, problems = core.removal_problems(voters(*spec), 1, node, None, allow_leader=False)
    assert invalid == [] and bool(problems) is unsafe, problems


def test_the_leader_counts_as_caught_up_and_is_removed_only_on_purpose():
    vs = voters((1, False), (2, True), (3, True))
    assert core.removal_problems(vs, 1, 3, None, allow_leader=False) == ([], [])
    _, problems = core.removal_problems(vs, 1, 1, None, allow_leader=False)
    assert problems == [
        "1 is the active controller: it would resign after the change and the quorum would elect another "
        "leader (no metadata change is accepted meanwhile); confirm removing the leader on purpose"
    ]
    assert core.removal_problems(vs, 1, 1, None, allow_leader=True) == ([], [])


def test_the_last_voter_a_stranger_and_a_wrong_directory_id_are_refused():
    assert core.removal_problems(voters((1, True)), 1, 1, None, allow_leader=True)[1] == [
        "1 is the last voter: removing it would leave the metadata log without a quorum"
    ]
    assert core.removal_problems(voters((1, True), (2, True)), 1, 7, None, allow_leader=False)[0] == [
        "node 7 is not a voter (voters: 1, 2)"
    ]
    invalid, _ = core.removal_problems(voters((1, True), (2, True)), 1, 2, "x" * 22, allow_leader=False)
    assert invalid and "Kafka matches both" in invalid[0]


def test_only_a_caught_up_observer_controller_with_its_directory_id_is_added():
    vs = voters((1, True), (2, True))
    obs = [M(3, "d3", True), M(4, "d4", False, "500 records behind the high watermark"), M(10, "d10", True)]
    assert core.addition_problems(vs, obs, {10}, 3, "d3") == []
    assert core.addition_problems(vs, obs, {10}, 2, "d2") == ["2 is already a voter"]
    assert "registered broker" in core.addition_problems(vs, obs, {10}, 10, "d10")[0]
    assert "not fetching the metadata log" in core.addition_problems(vs, obs, {10}, 5, "d5")[0]
    assert (
        "is not the one controller 3 fetches with (d3)" in core.addition_problems(vs, obs, {10}, 3, "dx")[0]
    )
    assert core.addition_problems(vs, obs, {10}, 4, "d4") == [
        "controller 4 is not caught up (500 records behind the high watermark); wait until it is"
    ]


def test_a_broker_is_unregistered_only_when_stopped_and_empty_and_the_refusal_names_partitions():
    assert core.unregister_problems(4, False, []) == []
    problems = core.unregister_problems(4, True, [f"t-{i}" for i in range(8)])
    assert problems[0].startswith("broker 4 is alive (registered and heartbeating)")
    assert "still hosts 8 replica(s) (t-0, t-1, t-2, t-3, t-4 and 3 more)" in problems[1]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"metadata.version": 27}, {"metadata.version": 27}),
        (["metadata.version=27", "group.version=1"], {"metadata.version": 27, "group.version": 1}),
        ("metadata.version=27,\ngroup.version=0", {"metadata.version": 27, "group.version": 0}),
        # a release name as kafka-features.sh --metadata takes it; a bare release is its newest level
        ("metadata.version=4.1-IV1", {"metadata.version": 27}),
        ({"metadata.version": "3.3-iv3"}, {"metadata.version": 7}),
        ("metadata.version=4.0", {"metadata.version": 25}),
        ("metadata.version=3.7-IV4", {"metadata.version": 19}),
    ],
)
def test_feature_updates_read_like_kafka_features_sh(given, expected):
    assert core.feature_updates(given) == expected


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("", "name at least one feature=level"),
        ("metadata.version", "is not name=level"),
        ("Metadata.Version=1", "is not a feature name"),
        ("group.version=x", "must be a whole number"),
        ("group.version=99999", "must be a whole number"),
        ("group.version=4.1-IV1", "must be a whole number"),  # release names are metadata.version's only
        ("metadata.version=4.1-IV9", "a level or a release such as 4.1-IV1"),
        ("metadata.version=3.2", "a level or a release such as 4.1-IV1"),  # before KRaft's oldest, 3.3-IV3
        ("group.version=1,group.version=0", "group.version is named twice"),
    ],
)
def test_bad_feature_updates_are_named(given, words):
    with pytest.raises(core.KraftInvalid, match=words):
        core.feature_updates(given)


def test_endpoints_directory_ids_and_node_ids_are_checked():
    assert core.endpoint("CONTROLLER://10.0.0.3:9093") == ("CONTROLLER", "10.0.0.3", 9093)
    assert core.endpoint("host.example:9093") == ("CONTROLLER", "host.example", 9093)
    for bad in ("host", "host:0", "CONTROLLER://:9093", "B@D://h:1"):
        with pytest.raises(core.KraftInvalid):
            core.endpoint(bad)
    assert core.directory_id(" lxal53sNTRe7UuxYnfmUwA ") == "lxal53sNTRe7UuxYnfmUwA"
    for bad in ("AAAAAAAAAAAAAAAAAAAAAA", "short", "lxal53sNTRe7UuxYnfmUw!"):
        with pytest.raises(core.KraftInvalid):
            core.directory_id(bad)
    assert core.node_id(" 103 ") == 103
    for bad in ("-1", "x", str(2**31)):
        with pytest.raises(core.KraftInvalid):
            core.node_id(bad)


def test_caught_up_is_judged_against_the_freshest_voter():
    assert core.caught_up(0, 1000, 1000, 100, 5000) == (True, "")
    assert core.caught_up(500, 1000, 1000, 100, 5000) == (False, "500 records behind the high watermark")
    assert core.caught_up(0, 1000, 9000, 100, 5000) == (False, "has not caught up recently")
    assert core.caught_up(0, None, None, 100, 5000) == (True, "")


def test_metadata_levels_and_release_names_match_kafkas_metadata_version():
    assert [core.metadata_release(level) for level in (7, 8, 14, 21, 22, 26, 27)] == [
        "3.3-IV3", "3.4-IV0", "3.6-IV2", "3.9-IV0", "4.0-IV0", "4.1-IV0", "4.1-IV1",
    ]  # fmt: skip
    assert core.metadata_release(6) == "" and core.metadata_release(None) == ""
    assert all(core.metadata_level(name) == level for name, level in core.METADATA_RELEASES.items())
