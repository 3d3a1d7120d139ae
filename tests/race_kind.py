"""A toy Operation kind for the worker races (tests/unit/test_workers_race*.py).

``test.race`` has three steps; each appends (operation, step, pass) to its process's file in
``$RACE_RUNS_DIR``, so a test counts every execution of every step whichever process ran it. Its
middle step waits once (due again at once), so every operation is released and claimed again through
beat's tick. A test declares it for its own duration (``registry`` patched); a real Celery worker
declares it by importing ``tests.race_worker`` (``celery worker --include tests.race_worker``).
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from pathlib import Path

from console.operations import Done, Kind, Step, Wait

__all__ = ["RACE", "assert_each_ran_once", "executions", "start"]

RUNS_ENV = "RACE_RUNS_DIR"
STEPS = (("prepare", 1), ("watch", 1), ("watch", 2), ("finish", 1))  # what one operation executes


def _record(ctx, step: str) -> None:
    passes = ctx.data.setdefault("passes", {})
    passes[step] = passes.get(step, 0) + 1
    with open(Path(os.environ[RUNS_ENV]) / f"runs-{os.getpid()}.tsv", "a") as out:
        out.write(f"{ctx.op.pk}\t{step}\t{passes[step]}\n")
    time.sleep(random.uniform(0, 0.004))  # a step takes a moment: another worker may try meanwhile


def _prepare(ctx):
    _record(ctx, "prepare")


def _watch(ctx):
    _record(ctx, "watch")
    if ctx.data["passes"]["watch"] == 1:
        return Wait(0.0, text="not yet")  # due again at once: the tick takes it from here
    return None


def _finish(ctx):
    _record(ctx, "finish")
    return Done("succeeded", {"passes": dict(ctx.data["passes"])})


RACE = Kind("test.race", (Step("prepare", _prepare), Step("watch", _watch), Step("finish", _finish)))


def start(actor, count: int) -> list[int]:
    """``count`` race operations started as the console starts any (dispatched on commit)."""
    from console import operations

    return [
        operations.start(actor=actor, kind=RACE.name, cluster=None, params={"n": n}).pk for n in range(count)
    ]


def executions(runs_dir: Path) -> Counter:
    """(operation, step, pass) -> how many times it ran, over every process's file."""
    runs: Counter = Counter()
    for path in runs_dir.glob("runs-*.tsv"):
        for line in path.read_text().splitlines():
            op_id, step, n = line.split("\t")
            runs[(int(op_id), step, int(n))] += 1
    return runs


def assert_each_ran_once(ids: list[int], runs_dir: Path, steps=STEPS) -> None:
    """Every step of every operation ran exactly once; each succeeded once, audited once, chain intact."""
    from console.audit.store import verify_chain
    from console.models import AuditEvent, Operation, OperationState

    assert executions(runs_dir) == Counter((op_id, step, n) for op_id in ids for step, n in steps)
    ended = Operation.objects.filter(pk__in=ids).order_by("pk")
    assert [(o.pk, o.state, o.claimed_by, o.result) for o in ended] == [
        (op_id, OperationState.SUCCEEDED, "", {"passes": {"prepare": 1, "watch": 2, "finish": 1}})
        for op_id in ids
    ]
    actions = Counter(AuditEvent.objects.filter(operation_id__in=ids).values_list("action", flat=True))
    assert actions == {"test.race.requested": len(ids), "test.race.succeeded": len(ids)}
    status = verify_chain()
    assert (status.ok, status.broken_at) == (True, None)
