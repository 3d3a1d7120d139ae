"""The offset-reset planner (kafka-consumer-groups --reset-offsets semantics), without Kafka."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.groups.core import (
    ResetPlanError,
    ResetSpec,
    lag,
    parse_offsets_csv,
    parse_partitions,
    plan_reset,
    select_partitions,
    to_csv,
)

T = "orders"
COUNTS = {T: 3, "audit": 2}
COMMITTED = {(T, 0): 50, (T, 1): 5, ("audit", 1): 7}
START = {(T, 0): 10, (T, 1): 10, (T, 2): 0, ("audit", 0): 0, ("audit", 1): 0}
END = {(T, 0): 100, (T, 1): 20, (T, 2): 0, ("audit", 0): 4, ("audit", 1): 9}


def plan(spec: ResetSpec, by_time=None):
    tps = select_partitions(spec, COMMITTED, COUNTS)
    return plan_reset(spec, tps, COMMITTED, START, END, by_time)


def rows(p):
    return [(r.topic, r.partition, r.current, r.new) for r in p.rows]


# -- scopes ---------------------------------------------------------------------------------------


def test_it_resets_every_committed_partition_for_all_topics():
    p = plan(ResetSpec("to-earliest"))
    assert rows(p) == [("audit", 1, 7, 0), (T, 0, 50, 10), (T, 1, 5, 10)]


def test_it_resets_every_partition_of_a_topic_committed_or_not():
    p = plan(ResetSpec("to-latest", "topic", T))
    assert rows(p) == [(T, 0, 50, 100), (T, 1, 5, 20), (T, 2, None, 0)]


def test_it_resets_chosen_partitions_only():
    p = plan(ResetSpec("to-latest", "partitions", T, (1,)))
    assert rows(p) == [(T, 1, 5, 20)]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (ResetSpec("to-latest", "topic", "nope"), "Topic 'nope' does not exist"),
        (ResetSpec("to-latest", "topic", ""), "Name the topic"),
        (ResetSpec("to-latest", "partitions", T, (1, 7)), "has no partition 7 (it has 3: 0–2)"),
        (ResetSpec("to-latest", "partitions", T, ()), "Choose at least one partition"),
        (ResetSpec("sideways"), "Unknown reset mode"),
        (ResetSpec("to-latest", "everything", T), "Unknown scope"),
    ],
)
def test_a_scope_that_names_nothing_real_is_refused_with_the_reason(spec, says):
    with pytest.raises(ResetPlanError) as caught:
        select_partitions(spec, COMMITTED, COUNTS)
    assert says in str(caught.value)


def test_all_topics_of_a_group_without_offsets_is_refused():
    with pytest.raises(ResetPlanError, match="no committed offsets"):
        select_partitions(ResetSpec("to-earliest"), {}, COUNTS)


# -- modes ----------------------------------------------------------------------------------------


def test_to_offset_sets_the_offset_and_clamps_to_the_log_like_the_kafka_tool():
    p = plan(ResetSpec("to-offset", "topic", T, value=15))
    assert rows(p) == [(T, 0, 50, 15), (T, 1, 5, 15), (T, 2, None, 0)]
    assert [bool(r.note) for r in p.rows] == [False, False, True]
    assert "past the log end" in p.rows[2].note
    low = plan(ResetSpec("to-offset", "partitions", T, (0,), value=3))
    assert rows(low) == [(T, 0, 50, 10)] and "before the log start" in low.rows[0].note


def test_shift_by_moves_from_the_committed_offset_and_clamps():
    p = plan(ResetSpec("shift-by", value=-45))
    assert rows(p) == [("audit", 1, 7, 0), (T, 0, 50, 10), (T, 1, 5, 10)]
    forward = plan(ResetSpec("shift-by", "partitions", T, (0, 1), value=30))
    assert rows(forward) == [(T, 0, 50, 80), (T, 1, 5, 20)]


def test_shift_by_refuses_a_partition_without_a_committed_offset():
    with pytest.raises(ResetPlanError, match="cannot shift orders-2: the group has no committed offset"):
        plan(ResetSpec("shift-by", "topic", T, value=1))


def test_to_datetime_takes_the_first_offset_at_or_after_the_time_else_the_log_end():
    by_time = {(T, 0): 60, (T, 1): -1, (T, 2): -1}
    p = plan(ResetSpec("to-datetime", "topic", T, value=1_700_000_000_000), by_time)
    assert rows(p) == [(T, 0, 50, 60), (T, 1, 5, 20), (T, 2, None, 0)]


def test_from_file_uses_the_files_partitions_whatever_the_scope():
    spec = ResetSpec("from-file", "topic", "audit", file_offsets={(T, 1): 12, (T, 0): 999})
    p = plan(spec)
    assert rows(p) == [(T, 0, 50, 100), (T, 1, 5, 12)]


def test_from_file_names_partitions_that_do_not_exist():
    spec = ResetSpec("from-file", file_offsets={(T, 5): 1, ("gone", 0): 1})
    with pytest.raises(ResetPlanError) as caught:
        plan(spec)
    assert caught.value.errors == [
        "gone-0 does not exist (topic 'gone' does not exist).",
        "orders-5 does not exist (topic 'orders' has 3 partitions).",
    ]


def test_unreadable_log_offsets_stop_the_plan():
    spec = ResetSpec("to-earliest", "topic", T)
    tps = select_partitions(spec, COMMITTED, COUNTS)
    with pytest.raises(ResetPlanError, match="log offsets of orders-1 could not be read"):
        plan_reset(spec, tps, COMMITTED, START, {**END, (T, 1): None})


def test_the_plan_says_the_lag_before_and_after():
    p = plan(ResetSpec("to-earliest", "topic", T))
    assert [(r.lag_before, r.lag_after) for r in p.rows] == [(50, 90), (15, 10), (None, 0)]
    assert (p.lag_before, p.lag_after, p.changed) == (65, 100, 3)
    assert p.offsets == {(T, 0): 10, (T, 1): 10, (T, 2): 0}
    assert p.before == {(T, 0): 50, (T, 1): 5, (T, 2): None}


def test_the_spec_reads_like_the_kafka_tool():
    assert ResetSpec("to-earliest").describe() == "--to-earliest --all-topics"
    assert (
        ResetSpec("shift-by", "partitions", T, (0, 2), value=-5).describe()
        == "--shift-by -5 --topic orders:0,2"
    )
    assert ResetSpec("to-offset", "topic", T, value=7).describe() == "--to-offset 7 --topic orders"


def test_lag_is_unknown_without_both_offsets():
    assert lag(5, 9) == 4 and lag(9, 5) == 0 and lag(None, 5) is None and lag(5, None) is None


# -- input ----------------------------------------------------------------------------------------


def test_partitions_are_numbers_and_ranges():
    assert parse_partitions("0, 2,5-7 2") == (0, 2, 5, 6, 7)
    for bad, says in [
        ("x", "'x' is not"),
        ("3-1", "empty range"),
        ("", "at least one"),
        ("-1", "'-1'"),
        ("²", "'²'"),
    ]:
        with pytest.raises(ResetPlanError, match=says):
            parse_partitions(bad)
    with pytest.raises(ResetPlanError, match="at most"):
        parse_partitions("0-999999")


def test_the_reset_file_is_read_with_its_header_and_other_groups_lines():
    text = "topic,partition,offset\norders,0,5\n\n g1,orders,1,6\nother,orders,2,99\n"
    assert parse_offsets_csv(text, "g1") == {(T, 0): 5, (T, 1): 6}


def test_every_bad_line_of_the_reset_file_is_named():
    text = "orders,0,5\norders,zero,5\norders,1\n,2,3\norders,0,7\norders,3,-1\n"
    with pytest.raises(ResetPlanError) as caught:
        parse_offsets_csv(text)
    assert caught.value.errors == [
        "line 2: partition and offset must be whole numbers >= 0",
        "line 3: expected topic,partition,offset (2 fields)",
        "line 4: the topic is empty",
        "line 5: orders-0 is already on line 1",
        "line 6: partition and offset must be whole numbers >= 0",
    ]


def test_a_file_that_is_not_csv_or_is_empty_is_refused():
    with pytest.raises(ResetPlanError, match="not CSV"):
        parse_offsets_csv('orders,0,"5')
    with pytest.raises(ResetPlanError, match="no line"):
        parse_offsets_csv("\n\n")


def test_an_exported_plan_reads_back_as_the_same_offsets():
    p = plan(ResetSpec("to-latest", "topic", T))
    assert parse_offsets_csv(to_csv(p.rows)) == p.offsets


@given(st.text(max_size=300))
def test_the_file_parser_never_fails_otherwise(text):
    try:
        out = parse_offsets_csv(text)
    except ResetPlanError as exc:
        assert exc.errors
    else:
        assert out and all(p >= 0 and o >= 0 for (_, p), o in out.items())


@given(st.text(max_size=100))
def test_the_partition_parser_never_fails_otherwise(text):
    try:
        out = parse_partitions(text)
    except ResetPlanError:
        return
    assert out == tuple(sorted(set(out))) and all(p >= 0 for p in out)
