"""An "any broker" read that a live broker takes longer than the connect timeout to answer (the drift
look's DescribeConfigs of every config of 20,000 topics, ~10 s on the 1M sandbox) is not sent to every
other broker in turn: each copy is the same work again on the cluster, and at 200 brokers the 200th
got the whole timeout only after 1,000 s (the telemetry snapshot of a 1M-partition cluster did not
finish within 600 s). A broker that took the read and did not answer in time is passed over (a
frozen broker) for the next with twice the wait, until one gets the whole request timeout (5, 10,
20 s, then 30: at most four copies, and two frozen brokers are still got past); brokers that cannot
be reached at all cost no work and are still passed over whatever their number."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from console.kafka import KafkaOperationError
from console.kafka.kp_failover import FailoverMixin

CONNECT_S, REQUEST_S, BROKERS = 5.0, 30.0, 200
QUICK = int(CONNECT_S * 1000)
TIMED_OUT = KafkaOperationError(7, "REQUEST_TIMED_OUT", "no answer", True)
REFUSED = KafkaOperationError(-1, "NETWORK_EXCEPTION", "connection refused", True)


class FakeKp(FailoverMixin):
    """``_send_any`` over ``BROKERS`` ranked brokers; ``answer(node, timeout_ms)`` decides each send."""

    def __init__(self, answer) -> None:
        self.conn = SimpleNamespace(connect_timeout_s=CONNECT_S, request_timeout_s=REQUEST_S)
        self._manager = SimpleNamespace(cluster=SimpleNamespace(request_update=lambda: None))
        self._suspects = {}
        self.answer = answer
        self.sends: list[tuple[int, int | None]] = []

    def _ranked_brokers(self) -> list[int]:
        return list(range(1, BROKERS + 1))

    def _send(self, request, node, timeout_ms=None):
        self.sends.append((node, timeout_ms))
        result = self.answer(node, timeout_ms)
        if isinstance(result, KafkaOperationError):
            raise result
        return result


def slow_everywhere(node, timeout_ms):
    """Every broker is live and takes longer than the connect timeout: only the whole timeout is enough."""
    return TIMED_OUT if timeout_ms is not None else f"answer of {node}"


def test_a_slow_read_is_sent_to_a_few_brokers_not_to_every_broker():
    kp = FakeKp(slow_everywhere)
    assert kp._send_any("DescribeConfigs") == "answer of 4"
    assert kp.sends == [(1, QUICK), (2, 2 * QUICK), (3, 4 * QUICK), (4, None)]  # was one send per broker: 200


def test_a_read_that_takes_eight_seconds_is_answered_by_the_second_broker():
    kp = FakeKp(
        lambda node, timeout_ms: TIMED_OUT if timeout_ms is not None and timeout_ms < 8000 else "answer"
    )
    assert kp._send_any("DescribeConfigs") == "answer"
    assert kp.sends == [(1, QUICK), (2, 2 * QUICK)]


def test_a_read_no_broker_answers_is_asked_of_four_brokers_and_fails():
    kp = FakeKp(lambda node, timeout_ms: TIMED_OUT)
    with pytest.raises(KafkaOperationError) as raised:
        kp._send_any("DescribeConfigs")
    assert raised.value.name == "REQUEST_TIMED_OUT"
    assert [node for node, _ in kp.sends] == [1, 2, 3, 4]


def test_a_frozen_broker_is_passed_over_after_the_connect_timeout():
    kp = FakeKp(lambda node, timeout_ms: TIMED_OUT if node == 1 else f"answer of {node}")
    assert kp._send_any("Metadata") == "answer of 2"
    assert kp.sends == [(1, QUICK), (2, 2 * QUICK)]


def test_two_frozen_brokers_are_got_past():
    kp = FakeKp(lambda node, timeout_ms: TIMED_OUT if node in (1, 2) else f"answer of {node}")
    assert kp._send_any("Metadata") == "answer of 3"
    assert kp.sends == [(1, QUICK), (2, 2 * QUICK), (3, 4 * QUICK)]


def test_brokers_that_cannot_be_reached_are_passed_over_whatever_their_number():
    def answer(node, timeout_ms):
        if node <= 150:
            return REFUSED  # stopped: refused at once, no work done on the cluster
        if node == 151:
            return TIMED_OUT  # frozen
        return f"answer of {node}"

    kp = FakeKp(answer)
    assert kp._send_any("Metadata") == "answer of 152"
    assert len(kp.sends) == 152
    assert kp.sends[150] == (151, QUICK)  # the shortest wait is still there to use
    assert kp.sends[151] == (152, 2 * QUICK)


def test_other_errors_are_the_answer():
    denied = KafkaOperationError(29, "TOPIC_AUTHORIZATION_FAILED", "no", False)
    kp = FakeKp(lambda node, timeout_ms: denied)
    with pytest.raises(KafkaOperationError) as raised:
        kp._send_any("DescribeConfigs")
    assert raised.value is denied and len(kp.sends) == 1
