"""A small request/response client over kafka-python's connection and protocol classes.

It covers what librdkafka lacks (D2): reassignments, log dirs, quorum, features, broker
loggers and the whole KIP-919 direct-to-controller mode, which neither client can bootstrap:

* broker mode: bootstrap from the brokers' Metadata as kafka-python does, then send each
  request to a chosen broker (or any broker; brokers forward controller requests);
* controller mode: DescribeCluster v1+ with endpoint type 2 to a bootstrap controller, learn
  every controller and the active one, and send requests to the active controller.

Every failure leaves as :class:`KafkaOperationError`.
"""

from __future__ import annotations

import importlib
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from kafka.errors import KafkaTimeoutError, NodeNotReadyError, UnknownBrokerIdError
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.protocol.admin import DescribeClusterRequest
from kafka.protocol.metadata import MetadataResponse

from . import errlog, heap, kp_fixes
from .clientconf import kafka_python_config
from .connection import ClusterConnection
from .diagnose import probe_addresses
from .errors import KafkaOperationError, from_code, translate
from .kp_failover import ANY_BROKER_READS, CONNECTION_TROUBLE, FailoverMixin, done_future, request_name
from .types import BrokerInfo, ClusterInfo

# kafka-python is imported here, once, when console.kafka is imported, not lazily inside the
# gateway's methods: its protocol packages import their submodules (kafka.protocol.consumer's
# __init__ imports .group, .offsets, ...), and Python's per-module import locks deadlock when two
# threads run the first import of a package and of one of its submodules at once (one holds the
# submodule's lock and waits for the package, the other holds the package's lock and waits for the
# submodule: ``_DeadlockError: deadlock detected by _ModuleLock('kafka.protocol.consumer')``). The
# telemetry snapshot asks the log dirs on a helper thread while the offsets are read, and the web
# server runs threaded workers, so the first Kafka calls of a process do run concurrently (issue 19).
# The gateway modules' own imports inside functions then find these modules loaded.
EAGER_IMPORTS = (
    "kafka.errors",
    "kafka.net.sasl",
    "kafka.net.sasl.gssapi",
    "kafka.net.sasl.oauth",
    "kafka.protocol.admin",
    "kafka.protocol.admin.groups",
    "kafka.protocol.admin.transactions",
    "kafka.protocol.api_data",
    "kafka.protocol.api_message",
    "kafka.protocol.consumer",
    "kafka.protocol.consumer.group",
    "kafka.protocol.consumer.metadata",
    "kafka.protocol.consumer.offsets",
    "kafka.protocol.metadata",
    "kafka.protocol.metadata.find_coordinator",
    "kafka.protocol.producer.transaction",
    "kafka.protocol.schemas",
)
for _module in EAGER_IMPORTS:
    importlib.import_module(_module)
errlog.install()  # kafka-python's reconnect errors: the first of each kind logged, repeats counted
kp_fixes.install()  # Kafka's last answer before it closes (a refused login) is read, not dropped
heap.keep_freed()  # a large answer's memory is kept for the next (no fresh pages each read)

BROKER_ENDPOINT = 1
CONTROLLER_ENDPOINT = 2
_LEADER_MOVED = (6, 41)  # NOT_LEADER_OR_FOLLOWER, NOT_CONTROLLER


class KpClient(FailoverMixin):
    """Thread-safe: kafka-python runs all I/O on its own thread; callers block on results."""

    def __init__(self, conn: ClusterConnection) -> None:
        self.conn = conn
        self._lock = threading.Lock()
        cfg = kafka_python_config(conn)
        self._net = NetworkSelector(**cfg)
        self._manager = KafkaConnectionManager(self._net, **cfg)
        self._net.start()
        if conn.controller_mode:
            # Controllers do not serve Metadata: kafka-python's refresh loop, started by any failed
            # connection, would "bootstrap" from them forever (an error line a second) and hold the
            # bootstrap node in reconnect backoff, so the controllers never answered again. The
            # quorum is learnt with DescribeCluster (refresh_controllers) instead.
            self._manager.cluster._refresh_loop_future = done_future()
        self._suspects: dict[Any, float] = {}  # node -> when it last failed a request
        self._bootstrapped = False
        self._closed = False
        self.controllers: tuple[BrokerInfo, ...] = ()
        self.active_controller: int | None = None
        self.cluster_id: str | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._manager.close()
        finally:
            self._net.stop()

    def ensure_ready(self) -> None:
        """Bootstrap once (fast failure with the address when nothing answers)."""
        if self._bootstrapped:
            return
        with self._lock:
            if self._bootstrapped:
                return
            probe_addresses(self.conn)
            if self.conn.controller_mode:
                self.refresh_controllers()
            else:
                self._bootstrap()
            self._bootstrapped = True

    # -- sending ----------------------------------------------------------------------------

    def _error(self, exc: BaseException, what: str) -> KafkaOperationError:
        err = translate(exc, f"{what} via {self.conn.address_text}")
        if err.name == "REQUEST_TIMED_OUT":
            err = err.with_message(
                f"no answer to {what} from {self.conn.address_text} within {self.conn.request_timeout_s:g} s"
            )
        elif err.name == "NETWORK_EXCEPTION":
            err = err.with_message(
                f"cannot talk to Kafka at {self.conn.address_text} ({what}): {str(exc) or type(exc).__name__}"
            )
        if err.name in ("UNSUPPORTED_VERSION",) and self.conn.controller_mode:
            return KafkaOperationError(
                115, "UNSUPPORTED_ENDPOINT_TYPE", f"{what} is not served by the controllers", False
            )
        return err

    def send(self, request: Any, node_id: Any = None) -> Any:
        """Send one request to ``node_id`` (None: any broker / the active controller)."""
        self.ensure_ready()
        if node_id is None and self.conn.controller_mode:
            return self._send_to_active(request)
        return self._send(request, node_id)

    def _send(self, request: Any, node_id: Any, timeout_ms: int | None = None) -> Any:
        what = request_name(request)
        if node_id is None and not self.conn.controller_mode and what in ANY_BROKER_READS:
            return self._send_any(request)
        # a connection being (re)established answers NodeNotReady: retry, within the connect timeout
        # (a node that refuses connections is down: waiting the request timeout tells nothing more)
        deadline = time.monotonic() + self.conn.connect_timeout_s
        reread = False
        while True:
            try:
                response = self._manager.run(self._manager.send, request, node_id, timeout_ms)
            except Exception as exc:  # noqa: BLE001 - translated below
                err = translate(exc)
                if isinstance(exc, UnknownBrokerIdError) and not reread and self._reread_metadata(node_id):
                    reread = True  # the node came back after our Metadata was read: ask it now
                    continue
                if (
                    isinstance(exc, NodeNotReadyError)  # not a connection attempt that failed or timed out
                    and time.monotonic() < deadline
                    and not self._refuses(node_id)
                ):
                    time.sleep(0.1)
                    continue
                if err.name in CONNECTION_TROUBLE and node_id is not None:
                    self._suspects[node_id] = time.monotonic()
                raise self._error(exc, what) from None
            if node_id is not None:
                self._suspects.pop(node_id, None)
            return response

    def _reread_metadata(self, node_id: Any) -> bool:
        """Read the cluster's Metadata again for a node id the cached copy does not know (a broker
        that restarted after it was read, named by a coordinator or a leader); True when it is now known."""
        if node_id is None or self.conn.controller_mode:
            return False
        try:
            self._manager.run(self._manager.cluster.refresh_metadata)
        except Exception:  # noqa: BLE001 - no fresher Metadata: the caller reports the unknown node
            return False
        return self._manager.cluster.broker_metadata(node_id) is not None

    def send_many(self, requests: list[tuple[Any, int]]) -> list[Any]:
        """Send ``[(request, node_id)]`` all at once; ``[response | KafkaOperationError]`` in order.

        kafka-python's I/O thread multiplexes the requests, so one request per broker costs the
        slowest broker, not their sum, and needs no caller thread each (threads blocking on the
        one I/O thread only add GIL switching). A request that fails because its connection is
        still being set up is retried the way ``send`` retries it.
        """
        return self.start_many(requests)()

    def start_many(self, requests: list[tuple[Any, int]]) -> Callable[[], list[Any]]:
        """``send_many`` in two halves: the requests go out now; calling the returned function waits
        for their answers (``send_many``'s list). The caller may do other work meanwhile (e.g. a
        librdkafka request, which releases the GIL while it waits)."""
        self.ensure_ready()
        if not requests:
            return list
        try:
            futures = [
                self._manager.call_soon(self._manager.send, request, node) for request, node in requests
            ]
        except Exception:  # noqa: BLE001 - the I/O thread refused work: one by one, translated there
            return lambda: [self._send_or_error(request, node) for request, node in requests]
        return lambda: self._wait_many(requests, futures)

    def _wait_many(self, requests: list[tuple[Any, int]], futures: list[Any]) -> list[Any]:
        left = [len(futures)]
        lock = threading.Lock()
        all_done = threading.Event()

        def one_done(_: Any) -> None:
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    all_done.set()

        for future in futures:
            future.add_both(one_done)
        all_done.wait(self.conn.request_timeout_s + self.conn.connect_timeout_s + 1)
        out: list[Any] = []
        for (request, node), future in zip(requests, futures, strict=True):
            what = request_name(request)
            if not future.is_done:
                out.append(self._error(KafkaTimeoutError(f"no answer from node {node}"), what))
            elif future.exception is None:
                out.append(future.value)
            elif isinstance(future.exception, NodeNotReadyError | UnknownBrokerIdError):
                # a connection being (re)established, or a node the cached Metadata does not know yet:
                # the one-by-one path retries briefly (a node whose connection could not be set up within
                # the connect timeout is not asked again) or reads Metadata again
                out.append(self._send_or_error(request, node))
            else:
                if translate(future.exception).name in CONNECTION_TROUBLE:
                    self._suspects[node] = time.monotonic()
                out.append(self._error(future.exception, what))
        return out

    def _send_or_error(self, request: Any, node: int) -> Any:
        try:
            return self._send(request, node)
        except KafkaOperationError as err:
            return err

    def send_to_controller(self, request: Any) -> Any:
        """Send a request that the active controller must handle (brokers forward it)."""
        self.ensure_ready()
        if not self.conn.controller_mode:
            return self._send(request, None)
        return self._send_to_active(request)

    def _send_to_active(self, request: Any) -> Any:
        """To the active controller; when leadership moved or it went away, re-learn it and retry once."""
        try:
            response = self._send(request, self.active_controller)
        except KafkaOperationError as err:
            if err.name != "NETWORK_EXCEPTION" and err.name != "REQUEST_TIMED_OUT":
                raise
            self.refresh_controllers()
            return self._send(request, self.active_controller)
        if getattr(response, "error_code", 0) in _LEADER_MOVED:
            self.refresh_controllers()
            response = self._send(request, self.active_controller)
        return response

    def describe_brokers(self) -> tuple[ClusterInfo, tuple[BrokerInfo, ...]]:
        """DescribeCluster to any broker (not to Metadata's "controller", a random broker under KRaft
        that librdkafka waits for even when it stopped answering): the registered brokers, and (v2,
        KIP-1073) the fenced ones, registered but not heartbeating: stopped or frozen."""
        request = DescribeClusterRequest(
            include_cluster_authorized_operations=False,
            endpoint_type=BROKER_ENDPOINT,
            include_fenced_brokers=True,
            min_version=0,
        )
        response = self.send(request)
        check(response)
        live, fenced = [], []
        for b in response.brokers:
            (fenced if getattr(b, "is_fenced", False) else live).append(
                BrokerInfo(b.broker_id, b.host, b.port, b.rack)
            )
        info = ClusterInfo(
            response.cluster_id,
            response.controller_id if response.controller_id >= 0 else None,
            tuple(sorted(live, key=lambda b: b.id)),
            "broker",
        )
        return info, tuple(sorted(fenced, key=lambda b: b.id))

    def broker_ids(self, expect: Iterable[int] = (), *, fresh: bool = False) -> list[int]:
        """Live node ids; re-read them once when a node the caller expects is missing (it restarted).

        ``fresh``: read them now (Metadata for no topics, one small round trip), as Kafka's admin
        client does before a request to every broker (``AllBrokersStrategy``): the client's copy is
        kept for a day, and a cluster-wide list (groups, transactions) asked of the brokers it knew
        when a broker was down would leave out everything that broker coordinates, silently."""
        self.ensure_ready()
        if fresh and not self.conn.controller_mode:
            try:
                self._manager.run(self._manager.cluster.refresh_metadata)
            except Exception as exc:  # noqa: BLE001 - translated: a partial list is never answered
                raise self._error(exc, "Metadata (the live brokers)") from None
            return self._known_ids()
        ids = self._known_ids()
        if any(node not in ids for node in expect):
            try:
                if self.conn.controller_mode:
                    self.refresh_controllers()
                else:
                    self._manager.run(self._manager.cluster.refresh_metadata)
            except Exception:  # noqa: BLE001 - a failed refresh leaves the ids we had
                return ids
            ids = self._known_ids()
        return ids

    def _known_ids(self) -> list[int]:
        if self.conn.controller_mode:
            return [c.id for c in self.controllers]
        return sorted(b.node_id for b in self._manager.cluster.brokers())

    # -- controller mode --------------------------------------------------------------------

    def refresh_controllers(self) -> ClusterInfo:
        """DescribeCluster (endpoint type 2) to a bootstrap controller; learn the quorum."""
        request = DescribeClusterRequest(
            include_cluster_authorized_operations=False,
            endpoint_type=CONTROLLER_ENDPOINT,
            min_version=1,
        )
        cluster = self._manager.cluster
        errors: list[KafkaOperationError] = []
        # Addresses that refuse a connection are tried last, so one stopped controller does not
        # cost a whole request timeout before a live one is asked.
        boots = sorted(
            cluster.bootstrap_brokers(),
            key=lambda b: not _accepts(b.host, b.port, self.conn.connect_timeout_s),
        )
        for boot in boots:
            try:
                response = self._send(request, boot.node_id)
            except KafkaOperationError as err:
                errors.append(err)
                continue
            err = from_code(response.error_code, response.error_message)
            if err is not None:
                if err.name == "MISMATCHED_ENDPOINT_TYPE":
                    err = err.with_message(
                        f"{boot.host}:{boot.port} is a broker, not a controller: "
                        "register these addresses as bootstrap servers"
                    )
                elif err.name == "UNSUPPORTED_VERSION":
                    err = KafkaOperationError(115, "UNSUPPORTED_ENDPOINT_TYPE", err.message, False)
                raise err
            brokers = tuple(BrokerInfo(b.broker_id, b.host, b.port, b.rack) for b in response.brokers)
            for b in brokers:
                cluster._brokers[b.id] = MetadataResponse.MetadataResponseBroker(b.id, b.host, b.port, b.rack)
            self.controllers = brokers
            self.active_controller = response.controller_id
            self.cluster_id = response.cluster_id
            return ClusterInfo(response.cluster_id, response.controller_id, brokers, "controller")
        if errors and any(e.name == "UNSUPPORTED_VERSION" for e in errors):
            raise KafkaOperationError(
                115,
                "UNSUPPORTED_ENDPOINT_TYPE",
                "the controllers do not support DescribeCluster v1 (KIP-919)",
                False,
            )
        raise (
            errors[0]
            if errors
            else KafkaOperationError(13, "NETWORK_EXCEPTION", "no controller answered", True)
        )


def _accepts(host: str, port: int, timeout: float) -> bool:
    try:
        socket.create_connection((host, port), timeout=min(timeout, 1.0)).close()
    except OSError:
        return False
    return True


def check(response: Any) -> None:
    """Raise the top-level error of a response, if any."""
    err = from_code(getattr(response, "error_code", 0), getattr(response, "error_message", None))
    if err is not None:
        raise err
