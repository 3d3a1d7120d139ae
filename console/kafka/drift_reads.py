"""Drift detection's own reads: every topic's overridden configs (``topic_overrides``) and every
client quota (``client_quotas``, keyed as drift compares them, read by ``quotas.describe_client_quotas``).

Kafka has no request for only the configs set on a topic: DescribeConfigs answers all of them (~35
a topic) with their source, and ``kafka-configs.sh --describe`` keeps the overrides on the client
side too. Asked here without synonyms or documentation, and reduced as the answer is read to the
entries whose source is the topic itself, with no ``ConfigEntry`` per config (a thousand topics
answer ~35,000 entries every snapshot interval).
"""

from __future__ import annotations

from collections.abc import Iterable

from .configs import CONFIG_SOURCES
from .errors import KafkaOperationError, from_code
from .quotas import QuotaEntityParts
from .types import ConfigResource

#: DescribeConfigs' source code of a config set on the topic itself.
TOPIC_OVERRIDE = next(code for code, name in CONFIG_SOURCES.items() if name == "DYNAMIC_TOPIC_CONFIG")


class DriftReadsMixin:
    """The gateway's read for drift detection (see the module docstring)."""

    def topic_overrides(self, names: Iterable[str]) -> dict[str, dict[str, str | None] | KafkaOperationError]:
        """``{topic: {config: value}}`` of the configs set on each topic (a sensitive one's value is
        None: Kafka never returns it), or the topic's error. One DescribeConfigs for all of them."""
        from kafka.protocol.admin import DescribeConfigsRequest

        R = DescribeConfigsRequest.DescribeConfigsResource
        resources = [ConfigResource("TOPIC", n) for n in dict.fromkeys(names)]
        out: dict = {}
        groups = self._by_node_safe(resources, out)
        requests = {
            node: DescribeConfigsRequest(
                resources=[R(resource_type=2, resource_name=r.name, configuration_keys=None) for r in group],
                include_synonyms=False,
                include_documentation=False,
            )
            for node, group in groups.items()
        }
        for res, r in self._answers(groups, requests, out, lambda response: response.results):
            err = from_code(r.error_code, r.error_message)
            out[res] = (
                err
                if err is not None
                else {
                    c.name: None if c.is_sensitive else c.value
                    for c in r.configs
                    if c.config_source == TOPIC_OVERRIDE
                }
            )
        return {r.name: out[r] for r in resources}

    def client_quotas(self) -> dict[str, dict[str, float]]:
        """Every client quota (``describe_client_quotas`` with no filter): ``{entity: {quota: value}}``,
        the entity as ``type=name`` parts sorted by type name (``client-id=<default>,user=alice``).
        Raises KafkaOperationError, e.g. when the cluster does not answer the request."""
        return {_drift_key(e.entity): dict(e.values) for e in self.describe_client_quotas()}


def _drift_key(entity: QuotaEntityParts) -> str:
    """The entity as drift has always named it: parts sorted by type name, a default as ``<default>``."""
    return ",".join(f"{t}={'<default>' if n is None else n}" for t, n in sorted(entity, key=lambda p: p[0]))
