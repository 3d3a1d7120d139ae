"""The gateway object and its per-process registry (one gateway per cluster connection)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import time
from collections.abc import Callable

from . import errlog
from .acls import AclsMixin
from .cluster import ClusterMixin
from .configs import ConfigsMixin
from .connection import ClusterConnection
from .errors import KafkaOperationError
from .groups import GroupsMixin
from .health import HealthMixin
from .poll_reads import PollReadsMixin
from .replicas import ReplicasMixin
from .topics import TopicsMixin

__all__ = ["CALL_OBSERVERS", "KafkaGateway", "get_gateway", "close_all", "close_idle"]


class KafkaGateway(
    ClusterMixin,
    TopicsMixin,
    ConfigsMixin,
    AclsMixin,
    PollReadsMixin,
    ReplicasMixin,
    GroupsMixin,
    HealthMixin,
):
    """Everything the console does to one Kafka cluster.

    Thread-safe; methods return frozen dataclasses, batch methods return
    ``{resource: result | KafkaOperationError}``, and every failure raises
    :class:`~console.kafka.errors.KafkaOperationError` (never a client exception).
    """

    def __init__(self, conn: ClusterConnection) -> None:
        super().__init__(conn)
        self._use = threading.Lock()
        self._calls = 0  # public calls in progress (the outermost of each thread)
        self._last_call = time.monotonic()

    def __repr__(self) -> str:
        mode = "controllers" if self.conn.controller_mode else "brokers"
        return f"<KafkaGateway {mode}={self.conn.address_text}>"

    def _close_if_idle(self, idle_s: float) -> bool:
        """Close the clients when no call is in progress and none came for ``idle_s`` seconds (the
        next call opens them again); whether they were closed."""
        with self._use:
            if self._calls or time.monotonic() - self._last_call < idle_s:
                return False
            if self._kp_client is None and self._admin_client is None:
                return False
            self.close()  # under the lock: no call starts while the clients close
            return True


# Told of every call to a gateway method (console/health counts them for /metrics): the connection, the
# method's name, the seconds it took and the error's name ("" on success). Only the outermost call of a
# thread is told, so a method built on another counts once.
CALL_OBSERVERS: list[Callable[[ClusterConnection, str, float, str], None]] = [errlog.observe]
_calling = threading.local()


def _observed(name: str, method: Callable) -> Callable:
    @functools.wraps(method)
    def call(self: KafkaGateway, *args, **kwargs):
        if getattr(_calling, "busy", False):
            return method(self, *args, **kwargs)
        with self._use:
            self._calls += 1
        _calling.busy, error, start = True, "", time.monotonic()
        try:
            return method(self, *args, **kwargs)
        except BaseException as exc:
            error = exc.name if isinstance(exc, KafkaOperationError) else type(exc).__name__
            raise
        finally:
            _calling.busy = False
            with self._use:
                self._calls -= 1
                self._last_call = time.monotonic()
            for observe in CALL_OBSERVERS:
                with contextlib.suppress(Exception):  # counting never breaks a call
                    observe(self.conn, name, time.monotonic() - start, error)

    return call


for _name in dir(KafkaGateway):
    _method = inspect.getattr_static(KafkaGateway, _name)  # a staticmethod is not a function here
    if not _name.startswith("_") and _name != "close" and inspect.isfunction(_method):
        setattr(KafkaGateway, _name, _observed(_name, _method))


_registry: dict[ClusterConnection, KafkaGateway] = {}
_registry_lock = threading.Lock()


def get_gateway(conn: ClusterConnection) -> KafkaGateway:
    """The process-wide gateway for ``conn`` (created on first use, then reused)."""
    gw = _registry.get(conn)
    if gw is None:
        with _registry_lock:
            gw = _registry.get(conn)
            if gw is None:
                gw = KafkaGateway(conn)
                _registry[conn] = gw
    return gw


def close_idle(idle_s: float) -> int:
    """Close the clients of every gateway no call used for ``idle_s`` seconds (each costs a network
    thread, librdkafka's threads and their buffers; the next call opens them again). How many."""
    with _registry_lock:
        gateways = list(_registry.values())
    return sum(gw._close_if_idle(idle_s) for gw in gateways)


def close_all() -> None:
    """Close and forget every gateway (tests, worker shutdown)."""
    with _registry_lock:
        gateways = list(_registry.values())
        _registry.clear()
    for gw in gateways:
        gw.close()
