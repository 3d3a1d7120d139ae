"""A reassignment whose throttle removal meets a stopped broker: the step is retried, never skipped.

The console moves a partition onto broker 3 under throttle; as the move completes, broker 3 stops.
Its rate configs cannot be taken back, so the operation stays running, owing them in the ledger;
once the broker is back, the retry takes them back and the operation succeeds. Runs against the
sandbox, or a real cluster started by ``../shared/kafka-local/start.sh`` (the broker is paused
with SIGSTOP and resumed with SIGCONT: its process, found from the script's pid files).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from pathlib import Path

import pytest

from console.kafka import ConfigResource, KafkaOperationError
from console.models import Cluster, Operation
from console.models.reassignment import OWED_STATES, Reassignment, ThrottleEntry
from console.operations import registry
from console.reassignment import actions as reassignment
from console.reassignment import throttles
from tests.conftest import make_personas, run_now
from tests.contract.conftest import Endpoints, eventually, rates_on

pytestmark = [pytest.mark.contract, pytest.mark.django_db]

PID_DIR = Path(os.environ.get("KAFKA_LOCAL_PIDS", "/opt/realkafka/run/pids"))
STOPPED = 3
REMOVE_STEP = "remove throttles"


class Brokers:
    """Stop and start one broker of whichever cluster the contract tests run against."""

    def __init__(self, endpoints: Endpoints, request: pytest.FixtureRequest) -> None:
        self.real = endpoints.real
        self.sandbox = None if endpoints.real else request.getfixturevalue("sandbox")
        self.stopped: set[int] = set()
        if self.real and not (PID_DIR / f"broker-{STOPPED}.pid").exists():
            pytest.skip(f"stopping a real broker needs the pid files of kafka-local ({PID_DIR})")

    def _pid(self, broker: int) -> int:
        return int((PID_DIR / f"broker-{broker}.pid").read_text().strip())

    def stop(self, broker: int) -> None:
        self.stopped.add(broker)
        if self.real:
            os.kill(self._pid(broker), signal.SIGSTOP)
        else:
            self.sandbox.stop_broker(broker)

    def start(self, broker: int) -> None:
        self.stopped.discard(broker)
        if self.real:
            os.kill(self._pid(broker), signal.SIGCONT)
        else:
            self.sandbox.start_broker(broker)


@pytest.fixture
def brokers(endpoints, request, broker_rates_restored):  # restored after the brokers are back
    control = Brokers(endpoints, request)
    yield control
    for broker in sorted(control.stopped):  # whatever happened, the cluster is whole again
        control.start(broker)


def test_throttle_removal_is_retried_until_a_stopped_broker_is_back(
    endpoints, gw, topics, broker_ids, broker_rates_restored, brokers, monkeypatch, settings
):
    assert {1, 2, STOPPED} <= set(broker_ids), "needs brokers 1, 2 and 3"
    before = broker_rates_restored  # rates already there (another test's) are restored, not removed
    settings.OPERATION_MAX_ATTEMPTS = 10
    cluster = Cluster.objects.create(
        name="contract", bootstrap_servers=endpoints.bootstrap_servers, request_timeout_s=5
    )
    people = make_personas(cluster)
    topic = topics.create(partitions=1, replication_factor=2, replica_assignment=((1, 2),))

    # Stop broker 3 right as the move has completed, before the throttles are taken back.
    kind = registry.kind_for(reassignment.KIND)
    steps = list(kind.steps)
    k = next(i for i, s in enumerate(steps) if s.name == REMOVE_STEP)
    remove = steps[k].fn
    seen = []

    def stop_then_remove(ctx):
        if not seen:
            brokers.stop(STOPPED)
        seen.append(time.monotonic())
        return remove(ctx)

    steps[k] = dataclasses.replace(steps[k], fn=stop_then_remove)
    monkeypatch.setitem(registry._KINDS, kind.name, dataclasses.replace(kind, steps=tuple(steps)))

    op = reassignment.start_reassignment(
        actor=people["operator"],
        cluster=cluster,
        proposed={(topic, 0): (1, STOPPED)},
        throttle=10 * 1024 * 1024,
    )
    r = Reassignment.objects.get(operation=op)
    deadline = time.monotonic() + 60
    while not seen and time.monotonic() < deadline:  # the empty partition moves at once
        run_now(op.pk)
        time.sleep(0.5)
    assert seen, "the reassignment never reached its throttle removal"

    op.refresh_from_db()
    assert op.state == "running" and op.attempts >= 1, (op.state, op.error)
    assert "throttle configs could not be taken back yet" in op.last_error
    owed = ThrottleEntry.objects.filter(reassignment=r, state__in=OWED_STATES)
    assert owed.filter(resource_type="BROKER", resource_name=str(STOPPED)).exists()
    # (Topic configs may be owed too: on real Kafka a request the client sends to the paused broker
    # times out like one addressed to it; the retry takes them back with the rest.)

    run_now(op.pk)  # still down: another failed attempt, still running, nothing skipped
    op.refresh_from_db()
    assert op.state == "running" and op.attempts >= 2

    brokers.start(STOPPED)
    eventually(lambda: _rates_reachable(gw), timeout=60, interval=1)
    op = _until_ended(op.pk, timeout=60)

    assert op.state == "succeeded", op.error
    assert not ThrottleEntry.objects.filter(reassignment=r, state__in=OWED_STATES).exists()
    for broker in (1, 2, STOPPED):
        assert rates_on(gw, broker) == before[broker]
    described = gw.describe_configs([ConfigResource("TOPIC", topic)])[ConfigResource("TOPIC", topic)]
    assert {
        k: e.value
        for k, e in described.items()
        if k in throttles.REPLICA_CONFIGS and e.source == "DYNAMIC_TOPIC_CONFIG"
    } == {}


def _rates_reachable(gw) -> bool:
    try:
        rates_on(gw, STOPPED)
    except (AssertionError, KafkaOperationError):
        return False
    return True


def _until_ended(op_id: int, timeout: float) -> Operation:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        op = Operation.objects.get(pk=op_id)
        if op.finished:
            return op
        run_now(op_id)
        time.sleep(0.5)
    return Operation.objects.get(pk=op_id)
