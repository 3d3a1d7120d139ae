"""The pure part of paced reassignments: the next batch under N per broker, the rates per broker,
and which throttles a settled partition gives back."""

from __future__ import annotations

import pytest

from console.reassignment import pacing, planner, throttles
from console.reassignment.pacing import Pacing, Queued


def test_it_submits_one_partition_per_broker_with_n_1():
    queued = [Queued(1, (1, 2), (1, 3)), Queued(2, (1, 2), (1, 3)), Queued(3, (4, 5), (4, 6))]
    # the first counts against 2 and 3; the second would too; the third is on other brokers
    assert pacing.next_batch(queued, [], limit=1, most=100) == [1, 3]


def test_in_flight_partitions_count_against_the_brokers_they_add_or_remove():
    queued = [Queued(2, (1, 2), (1, 3)), Queued(3, (1, 4), (1, 5)), Queued(4, (2, 4), (1, 4))]
    moving = [((1, 2), (2, 3))]  # adds 3, removes 1: brokers 1 and 3 are busy
    # 2 needs 3 (busy); 3 needs 4 and 5 (free); 4 needs 1 (busy)
    assert pacing.next_batch(queued, moving, limit=1, most=100) == [3]
    assert pacing.next_batch(queued, moving, limit=2, most=100) == [2, 3, 4]
    assert pacing.in_flight_per_broker(moving) == {1: 1, 3: 1}


def test_the_queue_keeps_its_order_and_one_request_holds_at_most_most():
    queued = [Queued(i, (1,), (2,)) for i in range(10)]
    assert pacing.next_batch(queued, [], limit=4, most=100) == [0, 1, 2, 3]
    assert pacing.next_batch(queued, [], limit=100, most=3) == [0, 1, 2]


def test_a_reorder_only_move_counts_against_no_broker():
    assert pacing.counted_brokers((1, 2), (2, 1)) == frozenset()
    assert pacing.next_batch([Queued(1, (1, 2), (2, 1))], [((1, 2), (1, 3))] * 5, limit=1, most=10) == [1]


def test_rates_per_broker_are_the_override_then_the_direction_then_the_throttle():
    p = Pacing(leader=100, follower=None, brokers={3: 7})
    assert pacing.rates_of(1, 50, p) == (100, 50)
    assert pacing.rates_of(3, 50, p) == (7, 7)
    assert pacing.rates_of(1, None, Pacing(follower=9)) == (None, 9)


def test_the_throttle_plan_sets_separate_leader_and_follower_rates():
    moves = planner.plan_moves({("t", 0): (1, 2)}, {("t", 0): (1, 3)})
    wanted = throttles.throttle_plan(moves, None, Pacing(leader=2000, follower=3000, brokers={3: 5000}))
    assert wanted[("BROKER", "1", throttles.LEADER_RATE)] == "2000"
    assert wanted[("BROKER", "1", throttles.FOLLOWER_RATE)] == "3000"
    assert wanted[("BROKER", "3", throttles.LEADER_RATE)] == "5000"
    assert wanted[("TOPIC", "t", throttles.FOLLOWER_REPLICAS)] == "0:3"
    # the single throttle keeps meaning both
    single = throttles.throttle_plan(moves, 1000)
    assert {v for (k, _, c), v in single.items() if k == "BROKER"} == {"1000"}


def test_a_settled_partition_gives_back_only_its_own_entries_and_idle_brokers():
    still = planner.plan_moves({("t", 1): (1, 2)}, {("t", 1): (1, 3)})
    wanted = pacing.wanted_entries(still)
    assert wanted[("t", "leader")] == {"1:1", "1:2"}
    added = ["0:1", "0:2", "1:1", "1:2"]
    assert pacing.entries_to_give_back(added, wanted[("t", "leader")]) == ["0:1", "0:2"]
    assert pacing.brokers_to_release({1, 2, 3, 4}, still) == {4}


@pytest.mark.parametrize("bad", [0, -1, "3", 1.5, True, 10**6])
def test_a_bad_max_moves_is_refused(bad):
    with pytest.raises(pacing.PacingInvalid):
        pacing.check_max_moves(bad)


@pytest.mark.parametrize("bad", [0, -5, "x", 2.5])
def test_a_rate_that_is_not_a_positive_integer_is_refused(bad):
    with pytest.raises(pacing.PacingInvalid):
        pacing.check_rate(bad, "leader throttle")


def test_broker_rates_parse_and_refuse_clearly():
    assert pacing.parse_broker_rates("3=5, 4=1.5", scale=2) == {3: 10, 4: 3}
    for bad in ("3", "x=5", "3=abc", "3=-1", "3=1,3=2"):
        with pytest.raises(pacing.PacingInvalid):
            pacing.parse_broker_rates(bad)
    with pytest.raises(pacing.PacingInvalid, match="broker\\(s\\) 9"):
        pacing.check_overrides({9: 100}, {1, 2, 3})
