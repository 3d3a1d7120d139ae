"""DescribeConfigs and IncrementalAlterConfigs (topics, brokers, broker defaults, broker loggers).

Sent over kafka-python's protocol classes: librdkafka has no BROKER_LOGGER resource and no
direct-to-controller mode, and one code path serves both modes. Broker-scoped resources are
sent to that node (broker, or controller in KIP-919 mode); the others to any node.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from .base import GatewayBase
from .errors import KafkaOperationError, from_code
from .types import OK, ConfigChange, ConfigEntry, ConfigResource, ConfigSynonym, Ok

RESOURCE_TYPES = {"TOPIC": 2, "BROKER": 4, "BROKER_LOGGER": 8, "CLIENT_METRICS": 16, "GROUP": 32}
CONFIG_SOURCES = {
    0: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "CLIENT_METRICS_CONFIG",
    8: "GROUP_CONFIG",
}
CONFIG_TYPES = {
    0: None,
    1: "BOOLEAN",
    2: "STRING",
    3: "INT",
    4: "SHORT",
    5: "LONG",
    6: "DOUBLE",
    7: "LIST",
    8: "CLASS",
    9: "PASSWORD",
}
ALTER_OPS = {"SET": 0, "DELETE": 1, "APPEND": 2, "SUBTRACT": 3}


def _resource_code(res: ConfigResource) -> int:
    try:
        return RESOURCE_TYPES[res.type]
    except KeyError:
        raise KafkaOperationError(
            42, "INVALID_REQUEST", f"unknown config resource type {res.type!r}"
        ) from None


class ConfigsMixin(GatewayBase):
    """Config reads and incremental changes."""

    def _node_for(self, res: ConfigResource) -> int | None:
        if res.type in ("BROKER", "BROKER_LOGGER") and res.name != "":
            try:
                return int(res.name)
            except ValueError:
                raise KafkaOperationError(
                    42, "INVALID_REQUEST", f"broker id must be a number, not {res.name!r}"
                ) from None
        return None

    def _by_node(self, resources: list[ConfigResource]) -> dict[int | None, list[ConfigResource]]:
        groups: dict[int | None, list[ConfigResource]] = defaultdict(list)
        for res in dict.fromkeys(resources):
            groups[self._node_for(res)].append(res)
        return groups

    def _send_to(self, node: int | None, request: Any) -> Any:
        if node is None:
            return (
                self._kp.send_to_controller(request) if self.conn.controller_mode else self._kp.send(request)
            )
        if node not in self._kp.broker_ids(expect=[node]):
            raise KafkaOperationError(
                8 if not self.conn.controller_mode else 116,
                "BROKER_NOT_AVAILABLE" if not self.conn.controller_mode else "UNKNOWN_CONTROLLER_ID",
                f"node {node} is not a live {'controller' if self.conn.controller_mode else 'broker'}",
            )
        return self._kp.send(request, node)

    def _send_each(self, requests: dict[int | None, Any]) -> dict[int | None, Any]:
        """One request per node, in flight together: ``{node: response | KafkaOperationError}``.

        A throttle touches a config resource on every involved broker: 30 brokers cost one
        round trip, not 30.
        """
        out: dict[int | None, Any] = {}
        direct = []
        for node, request in requests.items():
            if node is not None and node in self._kp.broker_ids(expect=[node]):
                direct.append((request, node))
                continue
            try:
                out[node] = self._send_to(node, request)
            except KafkaOperationError as err:
                out[node] = err
        if len(direct) == 1:
            request, node = direct[0]
            try:
                out[node] = self._kp.send(request, node)
            except KafkaOperationError as err:
                out[node] = err
        elif direct:
            out.update(zip((node for _, node in direct), self._kp.send_many(direct), strict=True))
        return out

    def describe_configs(
        self,
        resources: list[ConfigResource],
        include_documentation: bool = True,
        keys: list[str] | None = None,
    ) -> dict[ConfigResource, dict[str, ConfigEntry] | KafkaOperationError]:
        """Every config entry of each resource (or only ``keys``) with value, source, flags, synonyms and docs.

        Sensitive values are never returned by Kafka (``value`` is None).
        """
        from kafka.protocol.admin import DescribeConfigsRequest

        R = DescribeConfigsRequest.DescribeConfigsResource
        out: dict[ConfigResource, dict[str, ConfigEntry] | KafkaOperationError] = {}
        groups = self._by_node_safe(resources, out)
        requests = {
            node: DescribeConfigsRequest(
                resources=[
                    R(
                        resource_type=_resource_code(r),
                        resource_name=r.name,
                        configuration_keys=None if keys is None else list(keys),
                    )
                    for r in group
                ],
                include_synonyms=True,
                include_documentation=include_documentation,
            )
            for node, group in groups.items()
        }
        for res, r in self._answers(groups, requests, out, lambda response: response.results):
            err = from_code(r.error_code, r.error_message)
            out[res] = err if err is not None else {c.name: self._entry(c) for c in r.configs}
        return {r: out[r] for r in dict.fromkeys(resources)}

    def _answers(self, groups: dict, requests: dict, out: dict, results_of: Any) -> Iterator[tuple[Any, Any]]:
        """Send one request per node together; yield (resource, its result) and record failures in ``out``.

        A node that failed fails all of its resources; a resource missing from an answer gets its
        own error, so every resource ends with exactly one outcome.
        """
        for node, response in self._send_each(requests).items():
            group = groups[node]
            if isinstance(response, KafkaOperationError):
                out.update(dict.fromkeys(group, response))
                continue
            got = {(r.resource_type, r.resource_name): r for r in results_of(response)}
            for res in group:
                r = got.get((_resource_code(res), res.name))
                if r is None:
                    out[res] = KafkaOperationError(
                        -1, "UNKNOWN_SERVER_ERROR", f"no answer for {res.type} {res.name!r}"
                    )
                else:
                    yield res, r

    def _by_node_safe(
        self, resources: list[ConfigResource], out: dict
    ) -> dict[int | None, list[ConfigResource]]:
        ok = []
        for res in dict.fromkeys(resources):
            try:
                _resource_code(res)
                self._node_for(res)
                ok.append(res)
            except KafkaOperationError as err:
                out[res] = err
        return self._by_node(ok)

    @staticmethod
    def _entry(c: Any) -> ConfigEntry:
        source = CONFIG_SOURCES.get(c.config_source, "UNKNOWN")
        synonyms = tuple(
            ConfigSynonym(s.name, s.value, CONFIG_SOURCES.get(s.source, "UNKNOWN"))
            for s in (c.synonyms or ())
        )
        return ConfigEntry(
            name=c.name,
            value=None if c.is_sensitive else c.value,
            source=source,
            read_only=bool(c.read_only),
            sensitive=bool(c.is_sensitive),
            default=source == "DEFAULT_CONFIG",
            synonyms=synonyms,
            documentation=getattr(c, "documentation", None),
            type=CONFIG_TYPES.get(getattr(c, "config_type", 0)),
        )

    def incremental_alter_configs(
        self, changes: dict[ConfigResource, list[ConfigChange]], validate_only: bool = False
    ) -> dict[ConfigResource, Ok | KafkaOperationError]:
        """Apply SET/DELETE/APPEND/SUBTRACT changes; per-resource result (``validate_only`` = dry run)."""
        from kafka.protocol.admin import IncrementalAlterConfigsRequest

        R = IncrementalAlterConfigsRequest.AlterConfigsResource
        C = R.AlterableConfig
        out: dict[ConfigResource, Ok | KafkaOperationError] = {}
        valid: dict[ConfigResource, list[Any]] = {}
        for res, ops in changes.items():
            try:
                items = []
                for ch in ops:
                    if ch.op not in ALTER_OPS:
                        raise KafkaOperationError(
                            42, "INVALID_REQUEST", f"unknown config operation {ch.op!r}"
                        )
                    if ch.op != "DELETE" and ch.value is None:
                        raise KafkaOperationError(42, "INVALID_REQUEST", f"{ch.op} {ch.name} needs a value")
                    items.append(
                        C(
                            name=ch.name,
                            config_operation=ALTER_OPS[ch.op],
                            value=None if ch.op == "DELETE" else str(ch.value),
                        )
                    )
                _resource_code(res)
                valid[res] = items
            except KafkaOperationError as err:
                out[res] = err
        groups = self._by_node_safe(list(valid), out)
        requests = {
            node: IncrementalAlterConfigsRequest(
                resources=[
                    R(resource_type=_resource_code(r), resource_name=r.name, configs=valid[r]) for r in group
                ],
                validate_only=validate_only,
            )
            for node, group in groups.items()
        }
        for res, r in self._answers(groups, requests, out, lambda response: response.responses):
            out[res] = from_code(r.error_code, r.error_message) or OK
        return {r: out[r] for r in changes if r in out}
