"""The purge's pure core: the request checked (offsets, a time, the whole topic, kafka-delete-records'
JSON, an API body) and the plan per partition (new start, records and bytes that go, groups below)."""

from __future__ import annotations

import json

import pytest

from console.purge import core
from console.purge.core import TargetError


def errors_of(fn, *args) -> list[str]:
    with pytest.raises(TargetError) as caught:
        fn(*args)
    return caught.value.errors


def test_offsets_are_checked_and_sorted():
    target = core.offsets_target("t", {"2": "10", 0: -1})
    assert (target.mode, target.offsets) == ("offsets", ((0, -1), (2, 10)))
    assert target.summary == "records of t below 0: end, 2: 10"
    assert core.target_from_json(target.as_json()) == target


@pytest.mark.parametrize(
    "offsets, words",
    [
        ({}, "name at least one partition"),
        ({0: -2}, "between -1 and"),
        ({-1: 5}, "a partition must be between 0"),
        ({0: "ten"}, "must be a whole number, not 'ten'"),
        ({0: True}, "must be a whole number"),
        ({0: 1.5}, "must be a whole number"),
    ],
)
def test_bad_offsets_are_refused_with_the_reason(offsets, words):
    assert any(words in e for e in errors_of(core.offsets_target, "t", offsets))


def test_a_partition_named_twice_with_two_offsets_is_refused():
    assert errors_of(core.offsets_target, "t", [(0, 1), (0, 2)]) == [
        "partition 0 is named twice, with offsets 1 and 2"
    ]


def test_times_read_as_iso_8601_or_ms():
    assert core.time_target("t", "2023-11-14T22:13:20Z").before_ms == 1_700_000_000_000
    assert core.time_target("t", "2023-11-14T22:13:20").before_ms == 1_700_000_000_000  # no zone: UTC
    assert core.time_target("t", "2023-11-14T23:13:20+01:00").before_ms == 1_700_000_000_000
    assert core.time_target("t", 1_700_000_000_000, ["1", 0]).partitions == (0, 1)
    assert core.show_time(1_700_000_000_000) == "2023-11-14T22:13:20.000Z"
    assert "is not a time" in errors_of(core.time_target, "t", "yesterday")[0]
    assert "give a time" in errors_of(core.time_target, "t", "")[0]


def test_the_kafka_delete_records_json_is_read_for_one_topic():
    doc = {
        "partitions": [
            {"topic": "t", "partition": 1, "offset": 5},
            {"topic": "t", "partition": 0, "offset": -1},
        ],
        "version": 1,
    }
    assert core.offset_json_target("t", json.dumps(doc)).offsets == ((0, -1), (1, 5))
    other = {"partitions": [{"topic": "u", "partition": 0, "offset": 1}], "version": 1}
    assert "names topic 'u', not 't'" in errors_of(core.offset_json_target, "t", other)[0]
    assert "version must be 1" in errors_of(core.offset_json_target, "t", {**doc, "version": 2})[0]
    assert "is not JSON" in errors_of(core.offset_json_target, "t", "{nope")[0]
    assert (
        'needs "topic", "partition" and "offset"'
        in errors_of(core.offset_json_target, "t", {"partitions": [{"topic": "t"}]})[0]
    )


def test_an_api_body_names_exactly_one_way():
    assert core.from_body("t", {"all": True}).mode == "all"
    assert core.from_body("t", {"before": 5, "partitions": [1]}).partitions == (1,)
    assert core.from_body("t", {"partitions": [{"partition": 0, "offset": 3}]}).offsets == ((0, 3),)
    assert "exactly one of" in errors_of(core.from_body, "t", {"all": True, "before": 5})[0]
    assert "exactly one of" in errors_of(core.from_body, "t", {})[0]
    assert (
        'needs "partition" and "offset"'
        in errors_of(core.from_body, "t", {"partitions": [{"partition": 0}]})[0]
    )
    assert (
        "list of partition numbers"
        in errors_of(core.from_body, "t", {"before": 5, "partitions": [{"partition": 0}]})[0]
    )


def test_internal_topics_are_kafkas_own():
    assert core.is_internal("__consumer_offsets") and core.is_internal("__anything")
    assert core.is_internal("x", flagged=True) and not core.is_internal("orders")


BOUNDS = {0: (10, 110), 1: (0, 50), 2: (5, 5)}


def test_the_plan_counts_records_and_estimates_bytes_and_names_the_groups_below():
    target = core.offsets_target("t", {0: 60, 1: -1, 2: 5})
    plan = core.plan(
        target,
        BOUNDS,
        sizes={0: 10_000, 1: 500, 2: 0},
        committed={"g-behind": {0: 30, 1: 50}, "g-ahead": {0: 100}, "g-at": {0: 60}},
    )
    rows = [
        (p.partition, p.start, p.end, p.new_start, p.messages, p.bytes_estimate, p.groups_below)
        for p in plan.partitions
    ]
    assert rows == [
        (0, 10, 110, 60, 50, 5_000, (("g-behind", 30),)),
        (1, 0, 50, 50, 50, 500, ()),
        (2, 5, 5, 5, 0, 0, ()),
    ]
    assert (plan.messages, plan.bytes_estimate, plan.groups_below, plan.offsets) == (
        100,
        5_500,
        ["g-behind"],
        {0: 60, 1: 50},
    )
    assert not plan.problems


def test_an_offset_past_the_end_or_an_unknown_partition_is_a_problem():
    plan = core.plan(core.offsets_target("t", {0: 111, 7: 1}), BOUNDS)
    assert list(plan.problems) == [
        "partition 0: offset 111 is past its end (110); nothing was purged",
        "partition 7: t has no such partition (3 partitions)",
    ]
    assert plan.messages == 0


def test_an_offset_below_the_start_moves_nothing():
    plan = core.plan(core.offsets_target("t", {0: 3}), BOUNDS, committed={"g-already-below": {0: 1}})
    assert (plan.partitions[0].new_start, plan.messages, plan.offsets) == (10, 0, {})
    assert plan.groups_below == []  # its position is gone already; this purge does not move it


def test_a_time_uses_kafkas_offsets_and_the_end_when_no_record_is_that_recent():
    plan = core.plan(core.time_target("t", 5), BOUNDS, time_offsets={0: 40, 1: None, 2: None})
    assert [(p.partition, p.new_start, p.messages) for p in plan.partitions] == [
        (0, 40, 30),
        (1, 50, 50),
        (2, 5, 0),
    ]


def test_the_whole_topic_goes_to_each_end_and_the_pin_follows_the_end():
    plan = core.plan(core.all_target("t"), BOUNDS)
    assert plan.offsets == {0: 110, 1: 50}
    assert core.pin(plan) == [[0, 10, 110], [1, 0, 50], [2, 5, 5]]
    assert plan.bytes_estimate is None  # sizes unknown
