"""What one alert round costs the console beyond its reads (``bench/bench_alerts_eval.py``):

- kafka-python's socket drain reads ``kp_fixes.RECV_BYTES`` a ``recv`` (not 4,096), with the same
  answers: the bytes joined, an empty read a disconnection, a failure a connection error;
- a wait on a socket not yet registered no longer formats the socket's repr (system calls);
- the process's allocator keeps freed memory for the next large answer (``heap.keep_freed``);
- a round reads the clusters' rows and the system actor once, not once per cluster.
"""

from __future__ import annotations

import selectors
import socket
import types

import pytest
from kafka.net.selector import NetworkSelector
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport

from console import access
from console.alerts import evaluate, measure
from console.kafka import heap, kp_fixes
from console.models import Cluster
from console.models.alerts import Alert


class _Socket:
    """A non-blocking socket's reads: the chunks given, then "would block" (or ``end``)."""

    def __init__(self, chunks: list[bytes], end: BaseException | None = None) -> None:
        self.chunks, self.end, self.asked = list(chunks), end, []

    def recv(self, n: int) -> bytes:
        self.asked.append(n)
        if self.chunks:
            return self.chunks.pop(0)
        raise self.end or BlockingIOError()


def _transport(sock: _Socket) -> types.SimpleNamespace:
    return types.SimpleNamespace(_sock=sock)


def test_the_socket_drain_reads_large_chunks_until_the_socket_would_block():
    assert KafkaTCPTransport._sock_recv is kp_fixes._sock_recv
    assert KafkaSSLTransport._sock_recv is kp_fixes._sock_recv_tls
    sock = _Socket([b"a" * 10, b"b" * 5])
    data, err = KafkaTCPTransport._sock_recv(_transport(sock))
    assert (data, err) == (b"a" * 10 + b"b" * 5, None)
    assert sock.asked == [kp_fixes.RECV_BYTES] * 3 and kp_fixes.RECV_BYTES >= 64 * 1024


def test_the_socket_drain_reports_a_disconnection_and_a_failure_as_kafka_python_does():
    data, err = KafkaTCPTransport._sock_recv(_transport(_Socket([b"last", b""])))
    assert data == b"last" and "socket disconnected" in str(err)
    data, err = KafkaTCPTransport._sock_recv(_transport(_Socket([], ConnectionResetError(104, "reset"))))
    assert data == b"" and "reset" in str(err)
    import ssl

    data, err = KafkaSSLTransport._sock_recv(_transport(_Socket([b"x"], ssl.SSLWantReadError())))
    assert (data, err) == (b"x", None)  # TLS: "want read" is "would block"


class _NoRepr(socket.socket):
    def __repr__(self) -> str:  # getsockname + getpeername: system calls the wait must not make
        raise AssertionError("the socket's repr was formatted")


def test_waiting_on_a_socket_registers_it_without_formatting_its_repr():
    net = types.SimpleNamespace(_selector=selectors.DefaultSelector())
    reader, writer = object(), object()
    with _NoRepr(socket.AF_INET, socket.SOCK_STREAM) as sock:
        NetworkSelector.register_event(net, sock, selectors.EVENT_READ, _task(reader))
        key = net._selector.get_key(sock.fileno())
        assert key.events == selectors.EVENT_READ and key.data[1] is None
        NetworkSelector.register_event(net, sock, selectors.EVENT_WRITE, _task(writer))
        key = net._selector.get_key(sock.fileno())
        assert key.events == selectors.EVENT_READ | selectors.EVENT_WRITE
        assert key.data[0] is not None and key.data[1] is not None
    net._selector.close()


def _task(marker):
    from kafka.net.selector import Task

    def coro():
        yield marker

    return Task(coro())


def test_the_allocator_keeps_freed_memory_for_the_next_large_answer():
    assert heap.keep_freed() is True  # glibc here: both thresholds raised
    assert heap.keep_freed() is True  # once per process


@pytest.mark.django_db(transaction=True)
def test_a_round_reads_the_clusters_and_the_system_actor_once(settings, monkeypatch):
    settings.ALERTS_CLUSTER_TIMEOUT_S = 5.0
    measure.MEMORY.clear()
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens: each cluster is unreachable at once
    far = [
        Cluster.objects.create(name=f"far-{i}", bootstrap_servers=f"127.0.0.1:{port}", request_timeout_s=2)
        for i in range(3)
    ]
    calls = []
    real = access.system_actor
    monkeypatch.setattr(access, "system_actor", lambda: calls.append(1) or real())
    read_rows = []
    real_run = evaluate.Evaluator._run
    monkeypatch.setattr(
        evaluate.Evaluator,
        "_run",
        lambda self, pk, cluster=None, actor=None: (
            read_rows.append(cluster) or real_run(self, pk, cluster, actor)
        ),
    )
    assert sorted(evaluate.start_round()) == sorted(c.pk for c in far)
    assert evaluate.evaluator().idle(30)
    assert len(calls) == 1  # the round's, not one per cluster
    assert sorted(c.pk for c in read_rows) == sorted(c.pk for c in far)  # handed their rows
    for cluster in far:
        (alert,) = Alert.objects.filter(cluster=cluster, rule="cluster_unreachable")
        assert alert.state == "firing"
    measure.MEMORY.clear()
