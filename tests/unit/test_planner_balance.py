"""The balance planner: sound plans (no duplicate broker, RF and racks kept), near its lower bound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from console.reassignment import planner
from console.reassignment.balance import balance_plan, bytes_per_broker, lower_bound


@st.composite
def skewed(draw):
    n = draw(st.integers(min_value=3, max_value=8))
    rack_count = draw(st.sampled_from([0, 2, 3]))
    racks = {b: (f"r{b % rack_count}" if rack_count else None) for b in range(1, n + 1)}
    rf = draw(st.integers(min_value=1, max_value=min(3, n)))
    heavy = draw(st.lists(st.sampled_from(sorted(racks)), min_size=rf, max_size=rf, unique=True))
    assignment, sizes = {}, {}
    for p in range(draw(st.integers(min_value=1, max_value=40))):
        reps = heavy if draw(st.booleans()) else draw(st.permutations(sorted(racks)))[:rf]
        assignment[("t", p)] = tuple(reps)
        sizes[("t", p)] = draw(st.integers(min_value=0, max_value=10_000))
    return assignment, sizes, racks


@settings(max_examples=150, deadline=None)
@given(skewed())
def test_balance_plans_are_sound_and_never_beat_their_lower_bound(cluster):
    assignment, sizes, racks = cluster
    result = balance_plan(assignment, sizes, racks)
    for tp, reps in result.plan.items():
        assert len(set(reps)) == len(reps) == len(assignment[tp])
        assert all(b in racks for b in reps)
        assert planner.rack_spread_ok(reps, racks) or not planner.rack_spread_ok(assignment[tp], racks)
    merged = {**assignment, **result.plan}
    assert bytes_per_broker(merged, sizes, racks) == result.after
    avg = sum(result.after.values()) / len(racks)
    if all(0.95 * avg <= v <= 1.05 * avg for v in result.after.values()):
        assert result.bytes_to_move >= result.lower_bound  # the bound is a true lower bound
    assert max(result.after.values()) <= max(result.before.values())


def test_it_moves_close_to_the_bound_on_a_skewed_cluster():
    racks = {b: None for b in range(1, 7)}
    assignment = {("t", p): (1, 2) for p in range(60)}
    sizes = {("t", p): 100 for p in range(60)}
    result = balance_plan(assignment, sizes, racks)
    assert result.lower_bound == lower_bound(result.before, 0.05)
    assert result.bytes_to_move <= 1.1 * result.lower_bound
    assert max(result.after.values()) <= 1.05 * sum(result.after.values()) / 6 + 100
