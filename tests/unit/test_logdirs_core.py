"""The log-dir area's pure rules: the form's and kafka-reassign-partitions' plan file's moves (a plan
that changes brokers refused with the way to the reassignment page), each move checked against what
its broker reports, and a move's progress read from the dirs."""

from __future__ import annotations

import pytest

from console.logdirs import core
from console.logdirs.core import Dir, Move, PlanError, Replica

D0, D1 = "/k/broker-1/data-0", "/k/broker-1/data-1"
CURRENT = {("t", 0): [1, 2], ("t", 1): [2, 1]}


def plan(*entries):
    return {"version": 1, "partitions": list(entries)}


def test_plan_file_gives_the_moves_and_skips_any():
    got = core.plan_moves(
        plan(
            {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": [D1, "any"]},
            {"topic": "t", "partition": 1, "replicas": [2, 1], "log_dirs": ["any", D0]},
        ),
        CURRENT,
    )
    assert got == [Move("t", 0, 1, D1), Move("t", 1, 1, D0)]


@pytest.mark.parametrize(
    "doc, expect",
    [
        ([], "must be a JSON object"),
        ({"version": 2, "partitions": []}, "Unknown plan version"),
        (
            plan({"topic": "t", "partition": 0, "replicas": [1, 3], "log_dirs": [D1, "any"]}),
            "Reassignments page",
        ),
        (
            plan({"topic": "t", "partition": 0, "replicas": [2, 1], "log_dirs": [D1, "any"]}),
            "differ from the current",
        ),
        (plan({"topic": "t", "partition": 0, "replicas": [1, 2]}), 'no "log_dirs"'),
        (plan({"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": [D1]}), "one entry per replica"),
        (
            plan({"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["data-1", "any"]}),
            "absolute path",
        ),
        (
            plan({"topic": "t", "partition": 9, "replicas": [1, 2], "log_dirs": [D1, "any"]}),
            "no such partition",
        ),
        (
            plan({"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}),
            "nothing to move",
        ),
        (plan({"topic": "t", "partition": "0", "replicas": [1, 2], "log_dirs": [D1, "any"]}), '"partition"'),
    ],
)
def test_plan_file_problems(doc, expect):
    with pytest.raises(PlanError, match=expect):
        core.plan_moves(doc, CURRENT)


def test_form_moves():
    assert core.form_moves(1, " t ", [1, 0, 1], D1) == [Move("t", 0, 1, D1), Move("t", 1, 1, D1)]
    with pytest.raises(PlanError) as e:
        core.form_moves(None, "", [], "rel/dir")
    assert len(e.value.errors) == 4
    # JSON from the API may carry anything: a number or a list for a name is refused, not a crash
    for topic, target in ((-1, D1), (["t"], D1), ("t", 5), ("t", {"a": 1})):
        with pytest.raises(PlanError):
            core.form_moves(1, topic, [0], target)


def _dirs(home=D0, fut=None, size=100, copied=0, offline=()):
    out = []
    for p in (D0, D1):
        reps = {}
        if p == home:
            reps[("t", 0)] = Replica(size, 0, False)
        if p == fut:
            reps[("t", 0)] = Replica(copied, 3, True)
        out.append(Dir(p, p in offline, 1000, 900, {} if p in offline else reps))
    return tuple(out)


@pytest.mark.parametrize(
    "move, dirs, expect",
    [
        (Move("t", 0, 1, D1), _dirs(), ""),
        (Move("t", 0, 1, "/x"), _dirs(), "LOG_DIR_NOT_FOUND"),
        (Move("t", 0, 1, D0), _dirs(), "already in"),
        (Move("t", 0, 1, D1), _dirs(offline=(D1,)), "offline"),
        (Move("t", 1, 1, D1), _dirs(), "REPLICA_NOT_AVAILABLE"),
        (Move("t", 0, 1, D1), _dirs(fut=D1), "already running"),
        (Move("t", 0, 2, D1), _dirs(), "not in the cluster"),
    ],
)
def test_check(move, dirs, expect):
    (row,) = core.check([move], {1: dirs})
    assert expect in row.problem if expect else row.problem == ""
    if not expect:
        assert (row.current, row.size) == (D0, 100)


def test_progress():
    m = Move("t", 0, 1, D1)
    assert core.progress(m, _dirs()).state == core.WAITING
    pr = core.progress(m, _dirs(fut=D1, copied=40))
    assert (pr.state, pr.copied, pr.size, pr.percent) == (core.COPYING, 40, 100, 40)
    assert core.progress(m, _dirs(home=D1)).state == core.DONE
    assert core.progress(m, _dirs(home=None)).state == core.GONE


def test_plan_file_round_trip():
    moves = [Move("t", 0, 1, D1)]
    assert core.plan_moves(core.plan_file(moves, CURRENT), CURRENT) == moves
