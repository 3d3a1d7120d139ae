"""How the kafka-python client fails over: bootstrap from whichever address answers first, reads
that any broker answers go past one that does not answer within the connect timeout, and nodes
that refuse connections are not waited for.

A broker that stopped refuses connections at once; a frozen one (SIGSTOP, a stuck JVM, a cut-off
network) accepts them and never answers. kafka-python's own bootstrap gives one random address the
whole timeout and its "least loaded node" may be such a broker, still in the cached Metadata.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterable
from typing import Any

from kafka.errors import KafkaTimeoutError, NodeNotReadyError, RequestTimedOutError
from kafka.future import Future
from kafka.protocol.admin import DescribeClusterRequest

from .errors import KafkaOperationError

BROKER_ENDPOINT = 1

#: Reads any broker answers alike: sent to "any broker", one that does not answer within the connect
#: timeout is passed over for the next (a frozen broker, or one cached in Metadata that stopped).
ANY_BROKER_READS = frozenset(
    {
        "Metadata",
        "DescribeQuorum",
        "ApiVersions",
        "DescribeCluster",
        "DescribeConfigs",
        "DescribeAcls",
        "ListPartitionReassignments",
        "FindCoordinator",
        "DescribeTopicPartitions",
    }
)
#: How long a broker that failed a request is tried last for "any broker" requests (seconds).
SUSPECT_S = 30.0
CONNECTION_TROUBLE = ("NETWORK_EXCEPTION", "REQUEST_TIMED_OUT")


def request_name(request: Any) -> str:
    """What a request is called in errors and in ``ANY_BROKER_READS``: its API's name
    ("DescribeCluster"), also for a console subclass that says which API it is (``API_NAME``)."""
    return getattr(request, "API_NAME", None) or type(request).__name__.removesuffix("Request")


def done_future() -> Future:
    return Future().success(True)


class FailoverMixin:
    """Part of ``KpClient``: bootstrap, "any broker" reads and pings, each bounded by the connect timeout."""

    conn: Any
    _manager: Any
    _suspects: dict[Any, float]

    def _bootstrap(self) -> None:
        """Ask every bootstrap address at once (DescribeCluster as a broker, KIP-919) and read
        Metadata from the first that answers.

        kafka-python's own bootstrap picks one address at random and gives its handshake the whole
        timeout, so a broker that accepts connections but does not answer (frozen, overloaded)
        stalled the first read for the request timeout, then failed it with two brokers up.
        """
        manager = self._manager
        request = DescribeClusterRequest(
            include_cluster_authorized_operations=False, endpoint_type=BROKER_ENDPOINT, min_version=1
        )
        boots = manager.cluster.bootstrap_brokers()
        answers = self._first_answers(request, [b.node_id for b in boots])
        by_id = {b.node_id: b for b in boots}
        errors: list[KafkaOperationError] = []
        for node, answer in answers:
            if isinstance(answer, KafkaOperationError) and answer.name != "UNSUPPORTED_VERSION":
                errors.append(answer)  # an old broker without KIP-919: its Metadata decides
                continue
            if getattr(answer, "error_code", 0) == 114:
                boot = by_id[node]
                raise KafkaOperationError(
                    114,
                    "MISMATCHED_ENDPOINT_TYPE",
                    f"{boot.host}:{boot.port} is a controller, not a broker: "
                    "register these addresses as bootstrap controllers",
                    False,
                )
            try:
                manager.run(manager.cluster.refresh_metadata, node)
            except Exception as exc:  # noqa: BLE001 - the next address that answered
                errors.append(self._error(exc, "bootstrap"))
                continue
            # kafka-python's refresh loop (started by a failed connection) must not bootstrap again
            manager._bootstrap_future = done_future()
            manager.run(manager.cluster.start_refresh_loop)
            manager.run(self._close_idle, [b.node_id for b in boots])
            return
        raise (
            errors[0]
            if errors
            else self._error(KafkaTimeoutError("no bootstrap address answered"), "bootstrap")
        )

    def _close_idle(self, nodes: list[Any]) -> None:
        """Close the bootstrap connections that have nothing in flight (on the I/O thread); the others
        close when their answer or their timeout comes (closing them now logs an abort)."""
        for node in nodes:
            conn = self._manager._conns.get(node)
            if conn is not None and conn.connected and not conn.in_flight_requests:
                conn.close()

    def _first_answers(self, request: Any, nodes: list[Any]) -> list[tuple[Any, Any]]:
        """Send ``request`` to every node at once; ``[(node, response | KafkaOperationError)]`` in the
        order they answered, waiting no longer than it takes the first to answer (or all to fail;
        a node that has not answered by then is left out). A node that accepts connections but never
        answers costs nothing here, as long as another one answers."""
        what = request_name(request)
        done: list[tuple[Any, Any]] = []
        lock = threading.Lock()
        answered = threading.Event()

        def finished(node: Any, future: Any) -> None:
            result = future.value if future.exception is None else self._error(future.exception, what)
            with lock:
                done.append((node, result))
                if future.exception is None or len(done) == len(nodes):
                    answered.set()

        for node in nodes:
            future = self._manager.call_soon(self._manager.send, request, node)
            future.add_both(lambda _, node=node, future=future: finished(node, future))
        answered.wait(self.conn.request_timeout_s + self.conn.connect_timeout_s + 1)
        with lock:
            ordered = sorted(done, key=lambda pair: isinstance(pair[1], KafkaOperationError))
        return ordered

    def _refuses(self, node_id: Any) -> bool:
        """True when the node's address refuses connections right now (stopped: waiting is useless)."""
        node = self._manager.cluster.broker_metadata(node_id) if node_id is not None else None
        if node is None:
            return False
        try:
            socket.create_connection(
                (node.host, node.port), timeout=min(self.conn.connect_timeout_s, 1.0)
            ).close()
        except ConnectionRefusedError:
            return True
        except OSError:
            return False
        return False

    def _send_any(self, request: Any) -> Any:
        """A read any broker answers: to the best live broker. One that took the request and did not
        answer in time (frozen, or stopped while still in the cached Metadata) is passed over for the
        next, which gets twice as long (the connect timeout first), until one gets the whole request
        timeout; one that cannot be reached is passed over whatever the count.

        A broker that did not answer in time is not always frozen: a read that takes a live broker
        longer than the connect timeout (DescribeConfigs of every config of 20,000 topics) is still
        being worked on there. Passing it on to every other broker with the same short wait had each
        of them do the same work again: at 200 brokers 200 copies of the read and 1,000 s before the
        last broker got the whole timeout. Doubling the wait sends at most a few copies (5, 10, 20 s,
        then the whole timeout) and still gets past two frozen brokers."""
        candidates = self._ranked_brokers()
        wait_ms = int(self.conn.connect_timeout_s * 1000)
        whole_ms = int(self.conn.request_timeout_s * 1000)
        for i, node in enumerate(candidates):
            last = i == len(candidates) - 1
            patient = last or wait_ms >= whole_ms
            try:
                return self._send(request, node, None if patient else wait_ms)
            except KafkaOperationError as err:
                if last or err.name not in CONNECTION_TROUBLE:
                    raise
                if err.name == "REQUEST_TIMED_OUT":
                    if patient:
                        raise  # it had the whole timeout: the cluster is not answering this read
                    wait_ms *= 2  # the read may be slow rather than the broker frozen
                self._manager.cluster.request_update()  # it may have left the cluster: re-read Metadata
        raise AssertionError("unreachable: the last candidate returns or raises")

    def _ranked_brokers(self) -> list[Any]:
        """Brokers of the cached Metadata: connected ones first, those with the fewest requests in
        flight before busier ones (a small read does not queue behind a 46 MB Metadata answer on the
        same connection), those that failed lately last."""
        now = time.monotonic()
        conns = self._manager._conns
        suspects = {n for n, at in self._suspects.items() if now - at < SUSPECT_S}

        def rank(node: int) -> tuple[bool, bool, int]:
            conn = conns.get(node)
            connected = conn is not None and conn.connected
            return node in suspects, not connected, len(conn.in_flight_requests) if connected else 0

        nodes = [b.node_id for b in self._manager.cluster.brokers()]
        return sorted(nodes or [b.node_id for b in self._manager.cluster.bootstrap_brokers()], key=rank)

    def ping(self, nodes: Iterable[int]) -> dict[int, KafkaOperationError | None]:
        """ApiVersions to each node at once, within the connect timeout: None when it answered. A node
        in reconnect backoff (it failed lately, maybe came back) is asked again until then."""
        return self.start_ping(nodes)()

    def start_ping(self, nodes: Iterable[int]) -> Any:
        """``ping`` in two halves: the requests go out now, the returned function waits for them."""
        from kafka.protocol.metadata import ApiVersionsRequest

        self.ensure_ready()
        deadline = time.monotonic() + self.conn.connect_timeout_s

        def send(node: int) -> Any:
            request = ApiVersionsRequest(
                client_software_name="kafka-operator-console", client_software_version="1", min_version=3
            )
            left_ms = max(100, int((deadline - time.monotonic()) * 1000))
            return self._manager.call_soon(self._manager.send, request, node, left_ms)

        sent = {node: send(node) for node in nodes}
        seconds = self.conn.connect_timeout_s
        return lambda skip=(): self._ping_answers(sent, send, deadline, seconds, skip)

    def _ping_answers(
        self, sent: dict[int, Any], send: Any, deadline: float, seconds: float, skip: Iterable[int]
    ) -> dict:
        """The answers of ``start_ping``; nodes in ``skip`` (known fenced) are not waited for."""
        out: dict[int, KafkaOperationError | None] = {}
        for node in [n for n in sent if n not in set(skip)]:
            while True:
                future = sent[node]
                while not future.is_done and time.monotonic() < deadline + 0.5:
                    time.sleep(0.02)
                if (
                    future.is_done
                    and isinstance(future.exception, NodeNotReadyError)
                    and time.monotonic() < deadline - 0.1
                ):
                    time.sleep(0.1)
                    sent[node] = send(node)
                    continue
                break
            if not future.is_done or isinstance(future.exception, KafkaTimeoutError | RequestTimedOutError):
                out[node] = KafkaOperationError(
                    7, "REQUEST_TIMED_OUT", f"no answer within {seconds:g} s", True
                )
            elif future.exception is not None:
                out[node] = self._error(future.exception, "ApiVersions")
            else:
                out[node] = None
            if out[node] is not None:
                self._suspects[node] = time.monotonic()
                self._manager.cluster.request_update()  # it may have left: the next ping skips it
            else:
                self._suspects.pop(node, None)
        return out
