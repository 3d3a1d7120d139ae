"""The cluster overview's data (``actions.overview`` reads it from Kafka)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from console.kafka import KafkaOperationError
from console.models import Cluster

__all__ = ["Overview"]


@dataclass(frozen=True)
class Overview:
    """The cluster overview page's data; error is set when Kafka could not be reached."""

    cluster: Cluster
    info: Any = None
    summary: Any = None
    error: KafkaOperationError | None = None
    active_controller: int | None = None  # the KRaft quorum leader; None when it could not be read
    controller_unknown: str = ""  # why it is unknown
    brokers: tuple = ()  # BrokerStatus of every registered (or earlier seen) node, by id

    @property
    def down(self) -> tuple:
        """The nodes that are fenced, unreachable or missing (``KafkaGateway.broker_status``)."""
        return tuple(s for s in self.brokers if s.state != "up")
