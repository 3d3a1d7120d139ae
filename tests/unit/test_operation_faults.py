"""The fault matrix: every Operation kind, failed or killed at each of its steps, still ends.

For every registered kind and every step k of its run (and cancel) path:
- ``flaky``: every Kafka call in step k times out for its first two attempts (a step that
  makes no Kafka call raises after its work instead), then the cluster answers again;
- ``down``: from step k on, every Kafka call times out for good (a step without one raises
  on every attempt);
- ``kill``: the worker dies once at step k after the step's work but before the runner
  records it (no exception handler runs), and a later worker finds the claim gone quiet.
Each run must end ``succeeded``/``failed``/``cancelled`` or ``errored`` within the attempt limit,
never stay ``pending`` or ``running`` - except a step that watches Kafka's own work (the move):
while Kafka is ``down`` it stays ``running`` in "lost contact" past the attempt limit, spending
no attempt, and ends ``succeeded`` once the cluster answers again. For reassignments, no throttle config may remain on the
sandbox unless the ledger lists it as owed, and once the cluster answers again the janitor
takes every owed entry back.
"""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from console.audit import store as audit
from console.clusters import actions as cluster_actions
from console.clusters import worker as health
from console.integrity import chain as audit_chain
from console.kafka import KafkaOperationError
from console.models import Operation
from console.models.operations import FINISHED_STATES
from console.models.reassignment import OWED_STATES, Reassignment, ThrottleEntry
from console.operations import registry
from console.reassignment import actions as reassignment
from console.reassignment import elections
from console.reassignment import janitor as reassign_janitor
from console.requests import actions as requests
from console.telemetry import capacity
from pipeline import generate, lake, reference
from tests.conftest import run_now, throttle_configs_on

pytestmark = pytest.mark.django_db

MB = 1024 * 1024
MAX_ATTEMPTS = 3
_names = itertools.count()

# Every kind and the names of its steps, per path. A kind or step added without a row here
# fails test_the_matrix_covers_every_registered_kind_and_step.
MATRIX = {
    ("health.check", "run"): ("queue", "database", "kafka", "report"),
    ("election.run", "run"): ("elect",),
    ("request.execute", "run"): ("execute",),
    ("pipeline.run", "run"): ("run",),
    ("audit.verify", "run"): ("verify",),
    ("reassignment.execute", "run"): ("throttle", "submit", "move", "remove throttles", "elect", "finish"),
    ("reassignment.execute", "cancel"): ("revert", "remove throttles", "finish"),
    ("logdir.move", "run"): (
        "record throttle",
        "set throttle",
        "submit",
        "move",
        "restore throttle",
        "finish",
    ),
    ("logdir.move", "cancel"): ("revert", "restore throttle", "finish"),
}
CASES = [
    pytest.param(kind, path, k, mode, id=f"{kind}-{path}-{k}:{name}-{mode}")
    for (kind, path), steps in MATRIX.items()
    for k, name in enumerate(steps)
    for mode in ("flaky", "down", "kill")
]


def test_the_matrix_covers_every_registered_kind_and_step():
    registered = {}
    for name, kind in registry.kinds().items():
        registered[(name, "run")] = tuple(s.name for s in kind.steps)
        if kind.cancel_steps:
            registered[(name, "cancel")] = tuple(s.name for s in kind.cancel_steps)
    assert registered == MATRIX


class Killed(BaseException):
    """The worker process dies: no ``except Exception`` in the runner sees it."""


def _timeout(*args, **kwargs):
    raise KafkaOperationError(
        code=7, name="REQUEST_TIMED_OUT", message="injected: the cluster did not answer", retriable=True
    )


class _Outage:
    """Stands in for a gateway while the cluster is unreachable: every call times out."""

    def __init__(self, fault):
        self._fault = fault

    def __getattr__(self, name):
        self._fault.calls += 1
        return _timeout


class Fault:
    """Wraps the kind's step k and the gateway: the injected failure of one matrix case."""

    def __init__(self, mode: str, monkeypatch):
        self.mode = mode
        self.outage = False
        self.calls = 0
        self.hits = 0
        real = cluster_actions.get_gateway
        monkeypatch.setattr(
            cluster_actions,
            "get_gateway",
            lambda conn, **kw: _Outage(self) if self.outage else real(conn, **kw),
        )

    def wrap(self, fn):
        def step(ctx):
            self.hits += 1
            if self.mode == "kill":
                outcome = fn(ctx)
                if self.hits == 1:
                    raise Killed(f"worker killed after {fn.__name__}")
                return outcome
            failing = self.mode == "down" or self.hits <= 2
            self.outage = self.outage or failing
            self.calls = 0
            try:
                outcome = fn(ctx)
            finally:
                if self.mode == "flaky":
                    self.outage = False
            if failing and not self.calls:  # the step made no Kafka call: fail it after its work
                raise RuntimeError(f"injected failure after {fn.__name__}")
            return outcome

        return step


def _inject(monkeypatch, kind_name: str, path: str, k: int, fault: Fault) -> None:
    kind = registry.kind_for(kind_name)
    steps = list(kind.cancel_steps if path == "cancel" else kind.steps)
    steps[k] = dataclasses.replace(steps[k], fn=fault.wrap(steps[k].fn))
    field = "cancel_steps" if path == "cancel" else "steps"
    monkeypatch.setitem(registry._KINDS, kind_name, dataclasses.replace(kind, **{field: tuple(steps)}))


def drive(op_id: int, sandbox=None, limit: int = 80) -> Operation:
    """Workers and beat, with time passing: waits fall due, a dead worker's claim goes quiet."""
    for i in range(limit):
        op = Operation.objects.get(pk=op_id)
        if op.state in FINISHED_STATES:
            return op
        if op.claimed_by:  # its worker died: the claim goes quiet
            quiet = timezone.now() - timedelta(seconds=django_settings.OPERATION_STALE_AFTER_S + 1)
            Operation.objects.filter(pk=op_id).update(heartbeat_at=quiet)
        if sandbox is not None:
            sandbox.advance(3)
        try:
            run_now(op_id, worker=f"worker-{i}")
        except Killed:
            pass
    op = Operation.objects.get(pk=op_id)
    pytest.fail(f"operation {op_id} did not end after {limit} runs: {op.state} at {op.path}/{op.step}")


# ---- one way to start each kind ----------------------------------------------------------


def _start_health(ctx):
    return health.start_health_check(actor=ctx["personas"]["operator"], cluster=ctx["cluster"])


def _start_election(ctx):
    topic = _topic(ctx["sandbox"], [[2, 1], [3, 2]])
    return elections.start_election(
        actor=ctx["personas"]["operator"],
        cluster=ctx["cluster"],
        election_type="PREFERRED",
        partitions=[(topic, 0), (topic, 1)],
    )


def _start_request(ctx):
    req = requests.submit_request(
        actor=ctx["personas"]["requester"],
        cluster=ctx["cluster"],
        kind="topic.create",
        payload={"name": f"team-a.fault-{next(_names)}", "partitions": 2, "replication_factor": 2},
        reason="fault matrix",
    )
    requests.approve_request(actor=ctx["personas"]["admin"], request=req)
    req.refresh_from_db()
    return req.operation


def _start_pipeline(ctx):
    start = datetime(2026, 4, 1, tzinfo=UTC)
    generate.write_lake(ctx["lake"], ctx["cluster"].name, generate.Shape(topics=2, snapshots=4), start)
    return capacity.start_pipeline_run(
        actor=ctx["personas"]["operator"],
        cluster=ctx["cluster"],
        since=start,
        until=start + timedelta(days=1),
    )


def _start_verify(ctx):
    with transaction.atomic():
        audit.record(
            actor=ctx["personas"]["admin"], action="test.event", cluster=ctx["cluster"], outcome="success"
        )
    return audit_chain.start_verify(actor=ctx["personas"]["admin"])


def _topic(sandbox, assignment, mb_per_partition=0):
    name = f"fault-t{next(_names)}"
    sandbox.create_topic(
        name, partitions=len(assignment), replication_factor=len(assignment[0]), assignment=assignment
    )
    if mb_per_partition:
        sandbox.produce_synthetic(name, mb_per_partition * MB * len(assignment))
        sandbox.advance(1)
        sandbox.produce_synthetic(name, 0)
    return name


def _start_reassignment(ctx):
    topic = _topic(ctx["sandbox"], [[1, 2], [2, 3]], mb_per_partition=4)
    ctx["topic"] = topic
    return reassignment.start_reassignment(
        actor=ctx["personas"]["operator"],
        cluster=ctx["cluster"],
        proposed={(topic, 0): (1, 3)},
        throttle=1 * MB,
        elect_preferred=True,
    )


@pytest.fixture(scope="module")
def jbod():
    """A sandbox whose brokers have two log dirs each, for the moves between them (its clock moved here)."""
    from console.kafka import close_all
    from sandbox.testing import running_sandbox

    with running_sandbox(brokers=3, controllers=1, log_dirs=2, speed=0) as sb:
        yield sb
        close_all()


IO_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"


def _start_logdir_move(ctx):
    """Broker 1's replica of a 24 MiB partition moved to its other dir at 4 MiB/s (several polls)."""
    from console.logdirs import actions as logdirs
    from console.logdirs.core import Move
    from console.models import Cluster, Role, RoleBinding
    from sandbox.logdirs import dir_of

    sb = ctx["sandbox"] = ctx["jbod"]
    cluster = ctx["cluster"] = Cluster.objects.create(
        name=f"fault-jbod-{next(_names)}", bootstrap_servers=sb.bootstrap_servers, request_timeout_s=5
    )
    RoleBinding.objects.create(cluster=cluster, user=ctx["personas"]["operator"], role=Role.OPERATOR)
    topic = ctx["topic"] = f"fault-ld{next(_names)}"
    sb.create_topic(topic, partitions=1, replication_factor=2, assignment=[[1, 2]])
    with sb.state.lock:
        part = sb.state.topics[topic].partitions[0]
        part.sizes[1] = part.sizes[2] = 24 * MB
        here = dir_of(sb.state.brokers[1], part)
    there = next(d for d in sb.state.brokers[1].log_dirs if d != here)
    return logdirs.move_replicas(
        actor=ctx["personas"]["operator"], cluster=cluster, moves=[Move(topic, 0, 1, there)], throttle=4 * MB
    )


STARTERS = {
    "logdir.move": _start_logdir_move,
    "health.check": _start_health,
    "election.run": _start_election,
    "request.execute": _start_request,
    "pipeline.run": _start_pipeline,
    "audit.verify": _start_verify,
    "reassignment.execute": _start_reassignment,
}


def _reference_engine(spark, lake_dir, cluster, since, until, params, progress=None, **_incremental):
    tables = {ds: lake.read_window(lake_dir, ds, cluster, since, until) for ds in lake.DATASETS}
    return reference.compute(tables, params)


@pytest.mark.parametrize(("kind", "path", "k", "mode"), CASES)
def test_every_kind_ends_whatever_fails_at_each_step(
    kind, path, k, mode, personas, kafka_cluster, frozen, jbod, tmp_path, monkeypatch, settings
):
    settings.OPERATION_MAX_ATTEMPTS = MAX_ATTEMPTS
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path))
    monkeypatch.setattr("pipeline.jobs.run_jobs", _reference_engine)
    monkeypatch.setattr("pipeline.spark.build_session", lambda cfg: None)
    ctx = {"personas": personas, "cluster": kafka_cluster, "sandbox": frozen, "lake": tmp_path, "jbod": jbod}
    op = STARTERS[kind](ctx)
    frozen = ctx["sandbox"]  # the sandbox the kind works on (a log-dir move's has two dirs per broker)
    if path == "cancel" and kind == "logdir.move":  # the throttle set, the copy under way, then cancelled
        from console.logdirs import actions as logdirs

        for _ in range(4):
            run_now(op.pk)
        op.refresh_from_db()
        assert op.state == "running" and op.data["throttles"], (op.state, op.data)
        logdirs.cancel(actor=personas["operator"], op=op)
    elif path == "cancel":  # under way first (throttles set, moving), then the operator cancels
        run_now(op.pk)
        r = Reassignment.objects.get(operation=op)
        assert ThrottleEntry.objects.filter(reassignment=r, state__in=OWED_STATES).exists()
        reassignment.cancel_reassignment(actor=personas["operator"], reassignment=r)
    fault = Fault(mode, monkeypatch)
    _inject(monkeypatch, kind, path, k, fault)

    watching = registry.kind_for(kind).path(path)[k].watches_kafka
    if mode == "down" and watching:  # lost contact for longer than the attempt limit, then back
        for i in range(40):  # up to the faulty step (its first run loses contact)
            if fault.hits:
                break
            frozen.advance(3)
            run_now(op.pk, worker=f"before-{i}")
        for i in range(MAX_ATTEMPTS + 3):
            frozen.advance(3)
            run_now(op.pk, worker=f"lost-{i}")
        op.refresh_from_db()
        lost = op.data["lost_contact"]["attempts"]
        assert (op.state, op.attempts, lost) == ("running", 0, MAX_ATTEMPTS + 4)
        fault.mode, fault.outage = "over", False

    op = drive(op.pk, frozen)

    assert fault.hits, "the faulty step never ran"
    assert op.state in FINISHED_STATES
    assert op.attempts <= MAX_ATTEMPTS
    if (mode == "flaky" and (kind, k) != ("health.check", 2)) or (mode == "down" and watching):
        assert op.state in ("succeeded", "cancelled"), op.error  # (a check reports the outage it saw)
    if op.state == "errored":
        assert op.attempts == MAX_ATTEMPTS and op.error.startswith(f"gave up after {MAX_ATTEMPTS} attempts")
    if kind == "reassignment.execute":
        fault.outage = False
        _assert_no_unlisted_throttle(kafka_cluster, ctx["topic"])
        if op.state != "errored":
            assert not ThrottleEntry.objects.filter(cluster=kafka_cluster, state__in=OWED_STATES).exists()
        frozen.advance(60)  # whatever Kafka was still moving has arrived
        reassign_janitor.sweep_throttles()
        assert not ThrottleEntry.objects.filter(cluster=kafka_cluster, state__in=OWED_STATES).exists()
        assert _throttles_on_kafka(kafka_cluster, ctx["topic"]) == set()
    if kind == "logdir.move":
        ledger = op.data.get("throttles") or {}
        left = IO_RATE in jbod.state.broker_configs.get("1", {})
        if op.state != "errored":  # the intra-broker throttle was taken back (none was set before)
            assert not left, ledger
        else:  # what is left is listed as owed in the operation's ledger, and the janitor takes it back
            from console.logdirs import worker as logdir_moves

            assert not left or ledger["1"]["state"] in ("recorded", "set"), ledger
            fault.outage = False  # the cluster answers again
            logdir_moves.sweep_owed_throttles()
            op.refresh_from_db()
            assert IO_RATE not in jbod.state.broker_configs.get("1", {}), op.data.get("throttles")
            assert all(e["state"] not in ("recorded", "set") for e in op.data.get("throttles", {}).values())


def _throttles_on_kafka(cluster, topic) -> set[tuple[str, str, str]]:
    return throttle_configs_on(cluster_actions.gateway_for(cluster), topic)


def _assert_no_unlisted_throttle(cluster, topic) -> None:
    owed = set(
        ThrottleEntry.objects.filter(cluster=cluster, state__in=OWED_STATES).values_list(
            "resource_type", "resource_name", "config"
        )
    )
    assert _throttles_on_kafka(cluster, topic) <= owed
