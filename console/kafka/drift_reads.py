"""Drift detection's own reads: every topic's overridden configs (``topic_overrides``) and every
client quota (``client_quotas``, keyed as drift compares them, read by ``quotas.describe_client_quotas``).

Kafka has no request for only the configs set on a topic: DescribeConfigs answers all of them (~35
a topic) with their source, and ``kafka-configs.sh --describe`` keeps the overrides on the client
side too. Asked here without synonyms or documentation and read from the answer's bytes
(``config_values_read``), decoding only the entries whose source is the topic itself: at 20,000
topics the answer carries ~700,000 entries every snapshot interval, which kafka-python decoded into
an object each.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import KafkaOperationError
from .quotas import QuotaEntityParts
from .types import ConfigResource


class DriftReadsMixin:
    """The gateway's read for drift detection (see the module docstring)."""

    def topic_overrides(self, names: Iterable[str]) -> dict[str, dict[str, str | None] | KafkaOperationError]:
        """``{topic: {config: value}}`` of the configs set on each topic (a sensitive one's value is
        None: Kafka never returns it), or the topic's error. One DescribeConfigs for all of them,
        read from its bytes (``config_overrides``)."""
        got = self.config_overrides((ConfigResource("TOPIC", n) for n in names), None)
        return {res.name: value for res, value in got.items()}

    def client_quotas(self) -> dict[str, dict[str, float]]:
        """Every client quota (``describe_client_quotas`` with no filter): ``{entity: {quota: value}}``,
        the entity as ``type=name`` parts sorted by type name (``client-id=<default>,user=alice``).
        Raises KafkaOperationError, e.g. when the cluster does not answer the request."""
        return {_drift_key(e.entity): dict(e.values) for e in self.describe_client_quotas()}


def _drift_key(entity: QuotaEntityParts) -> str:
    """The entity as drift has always named it: parts sorted by type name, a default as ``<default>``."""
    return ",".join(f"{t}={'<default>' if n is None else n}" for t, n in sorted(entity, key=lambda p: p[0]))
