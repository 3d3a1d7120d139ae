"""The gateway object and its per-process registry (one gateway per cluster connection)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import time
from collections.abc import Callable, Iterator

from . import errlog
from .acls import AclsMixin
from .alert_reads import AlertReadsMixin
from .cluster import ClusterMixin
from .config_values_read import ConfigValuesMixin
from .configs import ConfigsMixin
from .connection import ClusterConnection
from .drift_reads import DriftReadsMixin
from .errors import KafkaOperationError
from .groups import GroupsMixin
from .health import HealthMixin
from .kraft import KraftMixin
from .log_dirs import LogDirsMixin
from .messages import MessagesMixin
from .poll_reads import PollReadsMixin
from .quotas import QuotasMixin
from .records import RecordsMixin
from .replicas import ReplicasMixin
from .scram import ScramMixin
from .topic_partitions import TopicPartitionsMixin
from .topics import TopicsMixin
from .transactions import TransactionsMixin

__all__ = [
    "CALL_OBSERVERS",
    "KafkaGateway",
    "close_all",
    "close_idle",
    "get_gateway",
    "open_count",
    "set_max_open",
]


class KafkaGateway(
    ClusterMixin,
    TopicsMixin,
    TopicPartitionsMixin,
    ConfigsMixin,
    ConfigValuesMixin,
    AclsMixin,
    PollReadsMixin,
    ReplicasMixin,
    GroupsMixin,
    HealthMixin,
    AlertReadsMixin,
    DriftReadsMixin,
    MessagesMixin,
    QuotasMixin,
    ScramMixin,
    KraftMixin,
    RecordsMixin,
    TransactionsMixin,
    LogDirsMixin,
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

    def _close_if_idle(self, idle_s: float, wait: bool = True) -> bool:
        """Close the clients when no call is in progress and none came for ``idle_s`` seconds (the
        next call opens them again); whether they were closed. ``wait=False``: give up at once
        when another thread holds the gateway's lock (a call starting or ending)."""
        if not self._use.acquire(blocking=wait):
            return False
        try:
            if self._calls or time.monotonic() - self._last_call < idle_s or not self.is_open:
                return False
            self.close()  # under the lock: no call starts while the clients close
            return True
        finally:
            self._use.release()

    @contextlib.contextmanager
    def _opening(self) -> Iterator[None]:
        """While a client of this gateway is created: counted as open, after room was made."""
        _make_room(self)
        try:
            yield
        finally:
            with _registry_lock:
                _reserved.discard(self)


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
            limit = _max_open[0]
            if limit is not None and len(_registry) > limit and open_count() > limit:
                _make_room(None)  # a burst of calls exceeded the cap: back under it as they end
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
_reserved: set[KafkaGateway] = set()  # gateways creating a client now (counted as open)
_max_open: list[int | None] = [None]  # at most this many gateways with clients open (None: no cap)


def set_max_open(limit: int | None) -> None:
    """The process's cap on gateways with open clients (None: none; at least 1)."""
    _max_open[0] = None if limit is None else max(1, int(limit))


def get_gateway(conn: ClusterConnection, *, max_open: int | None = None) -> KafkaGateway:
    """The process-wide gateway for ``conn`` (created on first use, then reused). ``max_open``, when
    given, sets the process's cap on gateways with open clients (``set_max_open``)."""
    if max_open is not None and max_open != _max_open[0]:
        set_max_open(max_open)
    gw = _registry.get(conn)
    if gw is None:
        with _registry_lock:
            gw = _registry.get(conn)
            if gw is None:
                gw = KafkaGateway(conn)
                _registry[conn] = gw
    return gw


def open_count() -> int:
    """How many gateways of this process have a client open (or are opening one)."""
    with _registry_lock:
        return sum(1 for gw in _registry.values() if gw.is_open or gw in _reserved)


def _make_room(opening: KafkaGateway | None) -> None:
    """Before ``opening`` creates a client, under the cap: close the clients of the least recently
    used idle gateways until fewer than the cap are open besides it (with None, after a call: until
    no more than the cap are open). A gateway with a call in flight is never closed: a burst of
    concurrent calls exceeds the cap until its calls end, each end closing what is then idle. Each
    open gateway costs a network thread (kafka-python's I/O thread), librdkafka's threads when its
    AdminClient was used (one per broker plus its own) and their buffers."""
    limit = _max_open[0]
    with _room_lock:  # one opening at a time decides: two cannot both take the last place
        with _registry_lock:
            others = [
                gw for gw in _registry.values() if gw is not opening and (gw.is_open or gw in _reserved)
            ]
            if opening is not None:
                _reserved.add(opening)
        if limit is None:
            return
        excess = len(others) - (limit if opening is None else limit - 1)
        for gw in sorted(others, key=lambda g: g._last_call):
            if excess <= 0:
                break
            with contextlib.suppress(Exception):  # another cluster's client failing to close fails no call
                if gw not in _reserved and gw._close_if_idle(0.0, wait=False):
                    excess -= 1


_room_lock = threading.Lock()


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
        _reserved.clear()
    for gw in gateways:
        gw.close()
