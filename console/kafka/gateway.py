"""The gateway object and its per-process registry (one gateway per cluster connection)."""

from __future__ import annotations

import threading

from .acls import AclsMixin
from .cluster import ClusterMixin
from .configs import ConfigsMixin
from .connection import ClusterConnection
from .groups import GroupsMixin
from .health import HealthMixin
from .poll_reads import PollReadsMixin
from .replicas import ReplicasMixin
from .topics import TopicsMixin

__all__ = ["KafkaGateway", "get_gateway", "close_all"]


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

    def __repr__(self) -> str:
        mode = "controllers" if self.conn.controller_mode else "brokers"
        return f"<KafkaGateway {mode}={self.conn.address_text}>"


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


def close_all() -> None:
    """Close and forget every gateway (tests, worker shutdown)."""
    with _registry_lock:
        gateways = list(_registry.values())
        _registry.clear()
    for gw in gateways:
        gw.close()
