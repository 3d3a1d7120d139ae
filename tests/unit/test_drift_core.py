"""Drift's pure comparison: what differs between two looks and is not explained by the console."""

from __future__ import annotations

from console.drift import core


def state(topics: dict, acls: dict | None = None, quotas: dict | None = None) -> dict:
    return {"topics": topics, "acls": acls, "quotas": quotas}


def test_a_moving_topics_replication_factor_is_the_previous_looks():
    prev = state({"t": [3, 2, {}]}, {})
    cur = core.carry_unknown(prev, state({"t": [3, None, {}]}, None))
    assert cur == state({"t": [3, 2, {}]}, {})
    assert core.diff(prev, cur, {}) == []


def test_configs_that_could_not_be_read_are_the_previous_looks():
    prev = state({"t": [1, 1, {"retention.ms": "1"}]}, {})
    cur = core.carry_unknown(prev, state({"t": [1, 1, None], "new": [1, 1, None]}, {}))
    assert cur["topics"] == {"t": [1, 1, {"retention.ms": "1"}], "new": [1, 1, None]}


def test_the_aspects_the_console_touched_are_not_reported_and_the_others_are():
    prev = state({"t": [1, 2, {}], "gone": [1, 1, {}]}, {"a": {"x": 1}})
    cur = state({"t": [4, 3, {"cleanup.policy": "compact"}], "new": [2, 1, {}]}, {"b": {"y": 2}})
    touched = core.touched_by(
        [("topic.partitions.add", ["topic:t"]), ("acl.create", ["acl:b"]), ("other", ["topic:new"])],
        {"topic.partitions.add": frozenset({core.PARTITIONS}), "acl.create": frozenset({core.EXISTS})},
    )
    assert core.diff(prev, cur, touched) == [
        core.Change(
            "topic", "gone", "deleted", {"partitions": 1, "replication_factor": 1, "configs": {}}, None
        ),
        core.Change(
            "topic", "new", "created", None, {"partitions": 2, "replication_factor": 1, "configs": {}}
        ),
        core.Change(
            "topic",
            "t",
            "altered",
            {"partitions": 1, "replication_factor": 2},
            {"partitions": 4, "replication_factor": 3},
        ),
        core.Change("topic_config", "t", "altered", {}, {"cleanup.policy": "compact"}),
        core.Change("acl", "a", "deleted", {"x": 1}, None),
    ]


def test_acls_unread_in_either_look_are_not_compared():
    assert core.diff(state({}, None), state({}, {"a": {}}), {}) == []


def test_a_line_for_the_pages():
    assert core.summary(
        {"resource_type": "topic_config", "before": {"a": "1", "b": "2"}, "after": {"a": "3"}}
    ) == ("a: 1 → 3; b: 2 → (default)")
    shape = {"partitions": 3, "replication_factor": 2}
    assert core.summary({"resource_type": "topic", "change": "deleted", "before": shape}) == (
        "deleted (3 partitions, RF 2)"
    )
    assert core.summary({"resource_type": "acl", "change": "created"}) == "created"


def test_a_reassignments_throttle_targets_are_their_topics():
    touched = core.touched_by(
        [("reassignment.throttle.set", ["topic:t/leader.replication.throttled.replicas", "broker:1/x"])],
        {"reassignment.throttle.set": frozenset({core.CONFIGS})},
    )
    assert touched == {"topic:t": frozenset({core.CONFIGS}), "broker:1/x": frozenset({core.CONFIGS})}
    prev, cur = (
        state({"t": [1, 2, {}]}, {}),
        state({"t": [1, 2, {"leader.replication.throttled.replicas": "0:1"}]}, {}),
    )
    assert core.diff(prev, cur, touched) == []


def test_client_quotas_set_changed_and_removed_are_reported():
    prev = {
        "topics": {},
        "acls": {},
        "quotas": {"user=a": {"producer_byte_rate": 1.0}, "user=b": {"consumer_byte_rate": 2.0}},
    }
    cur = {
        "topics": {},
        "acls": {},
        "quotas": {"user=a": {"producer_byte_rate": 3.0}, "client-id=c": {"request_percentage": 5.0}},
    }
    assert core.diff(prev, cur, {}) == [
        core.Change("quota", "client-id=c", "created", None, {"request_percentage": 5.0}),
        core.Change("quota", "user=a", "altered", {"producer_byte_rate": 1.0}, {"producer_byte_rate": 3.0}),
        core.Change("quota", "user=b", "deleted", {"consumer_byte_rate": 2.0}, None),
    ]
    assert core.Change("quota", "user=a", "altered", None, None).target == "quota:user=a"
    assert core.summary({"resource_type": "quota", "before": {"producer_byte_rate": 1.0}, "after": {}}) == (
        "producer_byte_rate: 1.0 → (none)"
    )
    unread = core.carry_unknown(prev, {"topics": {}, "acls": {}, "quotas": None})
    assert core.diff(prev, unread, {}) == []
