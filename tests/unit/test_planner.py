"""Pure planners: plan files, moves and throttles (as Kafka's tool computes them), validation, intents."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from console.reassignment import intents as pi
from console.reassignment import planner as p


def test_it_parses_a_kafka_reassign_partitions_file():
    text = json.dumps(
        {
            "version": 1,
            "partitions": [
                {"topic": "a", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]},
                {"topic": "a", "partition": 1, "replicas": [3, 1]},
            ],
        }
    )
    assert p.parse_plan(text) == {("a", 0): (1, 2), ("a", 1): (3, 1)}


def test_malformed_json_names_the_line_and_column():
    with pytest.raises(p.PlanParseError) as err:
        p.parse_plan('{"version": 1,\n "partitions": [ {"topic": "a",, } ]}')
    assert (err.value.line, err.value.column) == (2, 32)
    assert "line 2, column 32" in str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("[]", "JSON object"),
        ('{"version":2,"partitions":[]}', "version"),
        ('{"version":1,"partitions":[]}', "cannot be empty"),
        ('{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,1]}]}', "duplicate replicas"),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1]},'
            '{"topic":"a","partition":0,"replicas":[2]}]}',
            "duplicate topic partitions",
        ),
        ('{"version":1,"partitions":[{"topic":"a","partition":-1,"replicas":[1]}]}', "partition"),
        ('{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":["x"]}]}', "broker ids"),
        (
            '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["/d"]}]}',
            "log_dirs",
        ),
    ],
)
def test_it_refuses_bad_plans_with_a_reason(text, message):
    with pytest.raises(p.PlanParseError, match=message):
        p.parse_plan(text)


def test_export_is_the_same_format_and_round_trips():
    current = {("b", 1): (2, 3), ("a", 0): (1, 2)}
    text = p.export_plan(current)
    assert json.loads(text)["partitions"][0] == {
        "topic": "a",
        "partition": 0,
        "replicas": [1, 2],
        "log_dirs": ["any", "any"],
    }
    assert p.parse_plan(text) == current


def test_moves_and_throttles_match_kafkas_reassign_partitions_command():
    # The fixture of Kafka's ReassignPartitionsUnitTest.testMoveMap.
    current = {
        ("foo", 0): [1, 2, 3],
        ("foo", 1): [4, 5, 6],
        ("foo", 2): [1, 2],
        ("foo", 3): [1, 2],
        ("foo", 4): [1, 2],
        ("foo", 5): [1, 2],
        ("bar", 0): [2, 3, 4],
    }
    proposed = {
        ("foo", 0): [1, 2, 5],
        ("foo", 1): [7, 8, 4],
        ("foo", 2): [3, 4],
        ("foo", 3): [5, 6],
        ("foo", 4): [3],
        ("foo", 5): [3, 4, 5, 6],
        ("bar", 0): [1, 2, 3],
    }
    moves = p.plan_moves(current, proposed)
    assert moves[("foo", 1)] == p.Move((4, 5, 6), (7, 8))
    assert p.leader_throttles(moves) == {
        "foo": "0:1,0:2,0:3,1:4,1:5,1:6,2:1,2:2,3:1,3:2,4:1,4:2,5:1,5:2",
        "bar": "0:2,0:3,0:4",
    }
    assert p.follower_throttles(moves) == {
        "foo": "0:5,1:7,1:8,2:3,2:4,3:5,3:6,4:3,5:3,5:4,5:5,5:6",
        "bar": "0:1",
    }
    assert p.brokers_involved(moves) == {1, 2, 3, 4, 5, 6, 7, 8}


def test_adding_replicas_of_a_reassignment_in_progress_are_not_sources():
    moves = p.plan_moves({("t", 0): [1, 2, 3]}, {("t", 0): [1, 4]}, {("t", 0): [3]})
    assert moves[("t", 0)] == p.Move((1, 2), (4,))


def test_throttle_values_merge_with_existing_ones_and_unmerge_only_ours():
    value, added = p.merge_throttle("0:9,1:9", "0:1,0:9")
    assert (value, added) == ("0:9,1:9,0:1", ["0:1"])
    assert p.unmerge_throttle(value, added) == "0:9,1:9"
    assert p.unmerge_throttle("0:1", ["0:1"]) is None
    assert p.merge_throttle("*", "0:1") == ("*", [])
    for nothing in (None, "", " "):  # nothing set before us: ours, all of it added
        assert p.merge_throttle(nothing, "0:1, 1:2") == ("0:1,1:2", ["0:1", "1:2"])


def test_validation_reports_each_problem_per_partition():
    current = {("a", 0): (1, 2), ("a", 1): (2, 3), ("b", 0): (1, 2)}
    racks = {1: "r1", 2: "r2", 3: "r1", 4: "r2"}
    plan = {("a", 0): (1, 9), ("a", 1): (2, 3, 4), ("a", 7): (1, 2), ("zz", 0): (1, 2), ("b", 0): (1, 3)}
    rows = {
        (r.topic, r.partition): r
        for r in p.validate_plan(plan, current=current, racks=racks, in_progress=[("a", 0)])
    }
    assert rows[("a", 0)].problems == ("Unknown broker 9", "Already being reassigned")
    assert rows[("a", 1)].problems == ("Replication factor changes 2 → 3 (not intended)",)
    assert rows[("a", 7)].problems == ("Unknown partition",)
    assert rows[("zz", 0)].problems == ("Unknown topic",)
    assert rows[("b", 0)].problems == ("Rack constraint broken",)


def test_the_dry_run_counts_bytes_and_time_at_the_throttle():
    diff = p.plan_diff(
        {("a", 0): (1, 3), ("a", 1): (2, 3)},
        {("a", 0): (1, 2), ("a", 1): (2, 3)},
        {("a", 0): 1000, ("a", 1): 5000},
    )
    assert [(r.old, r.new, r.adding, r.removing, r.bytes_to_move) for r in diff.rows] == [
        ((1, 2), (1, 3), (3,), (2,), 1000)
    ]
    assert diff.total_bytes == 1000
    assert diff.estimated_seconds(100) == 10.0
    assert diff.estimated_seconds(None) is None


# ---- properties -----------------------------------------------------------------------------


@st.composite
def clusters(draw):
    n = draw(st.integers(min_value=3, max_value=9))
    rack_count = draw(st.integers(min_value=0, max_value=3))
    racks = {b: (f"r{b % rack_count}" if rack_count else None) for b in range(1, n + 1)}
    rf = draw(st.integers(min_value=1, max_value=min(3, n)))
    topics = draw(st.integers(min_value=1, max_value=3))
    current = {}
    for t in range(topics):
        for part in range(draw(st.integers(min_value=1, max_value=6))):
            reps = draw(st.permutations(list(racks)))[:rf]
            current[(f"t{t}", part)] = tuple(reps)
    return racks, current


def _assert_sound(plan, racks, rf=None, current=None):
    for tp, reps in plan.items():
        assert len(set(reps)) == len(reps), f"two replicas on one broker: {tp} {reps}"
        assert all(b in racks for b in reps)
        if rf is not None:
            assert len(reps) == rf
        if current is not None:
            assert len(reps) == len(current[tp])


@settings(max_examples=150, deadline=None)
@given(clusters(), st.data())
def test_moving_off_brokers_keeps_rf_and_leaves_them_empty(cluster, data):
    racks, current = cluster
    rf = max(len(r) for r in current.values())
    removable = [b for b in racks][: max(0, len(racks) - rf)]
    remove = set(data.draw(st.lists(st.sampled_from(removable), max_size=2))) if removable else set()
    plan = pi.move_off_brokers(current, racks, remove)
    _assert_sound(plan, racks, current=current)
    assert not any(remove.intersection(reps) for reps in plan.values())
    for tp, reps in plan.items():
        kept = [b for b in current[tp] if b not in remove]
        assert [b for b in reps if b in kept] == kept  # surviving replicas keep their order


@settings(max_examples=150, deadline=None)
@given(clusters(), st.integers(min_value=1, max_value=4))
def test_setting_the_replication_factor_is_rack_aware(cluster, rf):
    racks, current = cluster
    rf = min(rf, len(racks))
    plan = pi.set_replication_factor(current, racks, rf)
    _assert_sound(plan, racks, rf=rf)
    for tp, reps in plan.items():
        if len(current[tp]) < rf:
            assert reps[0] == current[tp][0]  # the preferred leader stays first
            assert p.rack_spread_ok(reps, racks) or not p.rack_spread_ok(current[tp], racks)


@settings(max_examples=150, deadline=None)
@given(clusters(), st.data())
def test_spreading_onto_new_brokers_keeps_rf_and_racks(cluster, data):
    racks, current = cluster
    new = data.draw(st.lists(st.sampled_from(sorted(racks)), min_size=1, max_size=2, unique=True))
    plan = pi.spread_onto(current, racks, new)
    _assert_sound(plan, racks, current=current)
    for tp, reps in plan.items():
        assert p.rack_spread_ok(reps, racks) or not p.rack_spread_ok(current[tp], racks)
        assert set(reps) - set(current[tp]) <= set(new)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
        max_leaves=10,
    )
)
def test_the_parser_never_fails_with_anything_but_a_plan_error(doc):
    try:
        plan = p.parse_plan(json.dumps(doc))
    except p.PlanParseError:
        return
    _assert_sound(plan, {b for reps in plan.values() for b in reps})


_odd = st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=2) | st.just([])


@settings(max_examples=500, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "topic": st.sampled_from(["t", "a.b"]) | _odd,
            "partition": st.integers(-1, 3) | _odd,
            "replicas": st.lists(st.integers(-1, 4) | st.sampled_from([True, 1.0, "2"]), max_size=4) | _odd,
            "log_dirs": st.lists(st.sampled_from(["any", "/d", None]), max_size=4) | _odd,
        },
    )
    | _odd
)
@example({"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any", "/d"]})
@example({"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any"]})
@example({"topic": "t", "partition": 0, "replicas": [2, 1, 2]})
@example({"topic": "t", "partition": 0, "replicas": [1, True]})
def test_a_plan_entry_is_read_the_same_on_the_fast_and_the_careful_path(entry):
    """The fast path accepts only what the careful path accepts, with the same result; anything
    else takes the careful path, which says what is wrong."""

    def outcome(fn):
        try:
            return fn(3, entry)
        except p.PlanParseError as exc:
            return str(exc)

    assert outcome(p._parse_entry) == outcome(p._refuse_entry)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 30)),
        st.tuples(
            st.lists(st.integers(1, 6), max_size=3, unique=True),
            st.lists(st.integers(1, 9), min_size=1, max_size=4, unique=True),
        ),
        max_size=12,
    )
)
def test_throttle_values_list_each_partition_broker_once_in_numeric_order(plan):
    current = {tp: tuple(c) for tp, (c, _) in plan.items()}
    moves = p.plan_moves(current, {tp: tuple(t) for tp, (_, t) in plan.items()})

    def expected(pick):
        pairs: dict[str, set] = {}
        for (topic, partition), move in moves.items():
            if move.destinations:
                pairs.setdefault(topic, set()).update((partition, b) for b in pick(move))
        return {t: ",".join(f"{q}:{b}" for q, b in sorted(v)) for t, v in sorted(pairs.items()) if v}

    assert p.leader_throttles(moves) == expected(lambda m: m.sources)
    assert p.follower_throttles(moves) == expected(lambda m: m.destinations)
