"""The share groups' pure rules: lag, the --topic scope, the time, the reset plan (scopes, clamping, by
time) and the members refusal."""

from __future__ import annotations

import pytest

from console.share_groups import core
from console.share_groups.core import ResetSpec, ShareInputError

BOUNDS = {("t", 0): (2, 10), ("t", 1): (0, 0), ("u", 0): (0, 7)}


def test_lag_is_the_log_end_minus_the_start_and_unknown_without_share_state():
    assert core.lag(4, 10) == 6 and core.lag(10, 10) == 0
    assert core.lag(-1, 10) is None and core.lag(None, 10) is None and core.lag(3, None) is None


def test_the_topic_scope_reads_as_kafka_share_groups_topic_option():
    assert core.parse_topic_scope("t") == ("t", ())
    assert core.parse_topic_scope("t:2,0,2") == ("t", (0, 2))
    for bad in ("t:", "t:x", "bad topic", "t:-1"):
        with pytest.raises(ShareInputError):
            core.parse_topic_scope(bad)


def test_a_time_is_utc_unless_it_says_otherwise():
    assert core.parse_datetime("2026-01-01T00:00:00.000") == 1767225600000
    assert core.parse_datetime("2026-01-01T01:00:00+01:00") == 1767225600000
    with pytest.raises(ShareInputError, match="is not a time"):
        core.parse_datetime("yesterday")


def test_all_topics_means_the_partitions_with_share_state_and_a_topic_its_partitions():
    assert core.select_partitions(ResetSpec("to-earliest"), [("u", 0), ("t", 1)], None) == [
        ("t", 1),
        ("u", 0),
    ]
    with pytest.raises(ShareInputError, match="no share state"):
        core.select_partitions(ResetSpec("to-earliest"), [], None)
    assert core.select_partitions(ResetSpec("to-latest", "t"), [], 2) == [("t", 0), ("t", 1)]
    with pytest.raises(ShareInputError, match="has no partition 5"):
        core.select_partitions(ResetSpec("to-latest", "t", (0, 5)), [], 2)
    with pytest.raises(ShareInputError, match="does not exist"):
        core.select_partitions(ResetSpec("to-latest", "t"), [], None)


def test_the_plan_clamps_to_the_log_and_a_time_past_the_last_record_is_the_end():
    tps = [("t", 0), ("t", 1)]
    rows = core.plan_reset(ResetSpec("to-offset", "t", value=99), tps, {("t", 0): 5}, BOUNDS)
    assert [(r.current, r.new) for r in rows] == [(5, 10), (None, 0)]
    assert "past the log end" in rows[0].note
    rows = core.plan_reset(ResetSpec("to-offset", "t", value=0), [("t", 0)], {}, BOUNDS)
    assert rows[0].new == 2 and "before the log start" in rows[0].note
    assert [r.new for r in core.plan_reset(ResetSpec("to-earliest", "t"), tps, {}, BOUNDS)] == [2, 0]
    by_time = {("t", 0): 6, ("t", 1): None}
    assert [
        r.new for r in core.plan_reset(ResetSpec("to-datetime", "t", value=1), tps, {}, BOUNDS, by_time)
    ] == [6, 0]
    with pytest.raises(ShareInputError, match="could not be read"):
        core.plan_reset(ResetSpec("to-latest", "x"), [("x", 0)], {}, BOUNDS)


def test_make_spec_checks_each_mode_s_value():
    assert core.make_spec("to-offset", "t:1", offset=3) == ResetSpec("to-offset", "t", (1,), 3)
    for bad in (
        {"mode": "to-offset", "offset": -1},
        {"mode": "to-offset", "offset": None},
        {"mode": "shift-by"},
    ):
        with pytest.raises(ShareInputError):
            core.make_spec(bad["mode"], "t", offset=bad.get("offset"))
    with pytest.raises(ShareInputError):
        core.make_spec("to-datetime", "t", datetime_text="")


def test_members_are_named_and_the_confirmation_must_be_the_group_id():
    text = core.members_problem("g", [("m1", "c", "/h")], "deletion")
    assert (
        text
        == "Share group 'g' has 1 active member: m1 (c on /h). Stop its share consumers before the deletion."
    )
    assert core.members_problem("g", [], "deletion") == ""
    assert core.confirmation_problem(
        "g", " g ", "x"
    ) == "" and "Type the group id" in core.confirmation_problem("g", "h", "x")
