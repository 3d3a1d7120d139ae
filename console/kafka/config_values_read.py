"""Dynamic config overrides of many resources read in one pass from DescribeConfigs' bytes.

The Brokers page asks every topic's two throttled-replicas configs and every broker's two throttle
rates, once per metadata snapshot: at 20,000 topics that is one DescribeConfigs answer of 40,000
entries, which kafka-python decoded into a data-container object per entry, field and synonym (on
its I/O thread, ~0.5-1 s of CPU at that size, while the page's other answers waited behind it),
and the gateway then made a ``ConfigEntry`` of each, to keep a value only where it is the resource's
own override. ``ConfigsBytesRequest`` has kafka-python hand the answer over as bytes (as
``metadata_read.MetadataBytesRequest`` does for Metadata) and ``read_overrides`` reads from them
just that: each resource's error, and per asked config its value when its source is an override.
No synonyms and no documentation are asked. Every length is checked against the bytes: a
truncated or malformed answer is a KafkaOperationError for the resources it carried.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from kafka.protocol.admin import DescribeConfigsRequest

from console import collector

from .base import GatewayBase
from .configs import RESOURCE_TYPES, _resource_code
from .errors import KafkaOperationError, from_code
from .metadata_read import _Answer, _Header, read_answer
from .types import ConfigResource

__all__ = ["ConfigValuesMixin", "ConfigsBytesRequest", "read_overrides"]

# config sources (DescribeConfigsResponse.json): the source of a value set on the resource itself,
# by resource type; on the cluster-wide default broker resource (BROKER "") the dynamic default.
# A topic's value inherited from a broker's dynamic config has that broker source: not the topic's own.
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT_BROKER = 1, 2, 3
OWN_SOURCE = {
    "TOPIC": DYNAMIC_TOPIC,
    "BROKER": DYNAMIC_BROKER,
    "BROKER_LOGGER": 6,
    "CLIENT_METRICS": 7,
    "GROUP": 8,
}
#: every source some resource's own override has (what the reader keeps when asked for overrides)
OVERRIDE_SOURCES = frozenset((*OWN_SOURCE.values(), DYNAMIC_DEFAULT_BROKER))

_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")

# one resource's answer: (type code, name, error code, error message, {config: (value, source, sensitive)})
Result = tuple[int, str, int, str | None, dict[str, tuple[str | None, int, bool]]]


class ConfigsBytesRequest(DescribeConfigsRequest, init=False):
    """DescribeConfigs whose answer kafka-python hands over as bytes (``read_overrides`` reads it)."""

    API_NAME = "DescribeConfigs"  # in errors and failover, the API it is (kp_failover.request_name)

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        super().with_header(correlation_id=correlation_id, client_id=client_id)
        self._header = _Header(self._header)


class _Reader:
    """A position in the answer's bytes; every read checked against their end."""

    __slots__ = ("data", "pos", "flexible", "end")

    def __init__(self, data: memoryview | bytes, flexible: bool) -> None:
        self.data, self.pos, self.flexible, self.end = data, 0, flexible, len(data)

    def take(self, n: int) -> int:
        """The position of the next ``n`` bytes, which are skipped."""
        at = self.pos
        if n < 0 or at + n > self.end:
            raise ValueError(f"{n} bytes wanted at byte {at} of {self.end}")
        self.pos = at + n
        return at

    def byte(self) -> int:
        at = self.pos
        if at >= self.end:
            raise ValueError(f"1 byte wanted at byte {at} of {self.end}")
        self.pos = at + 1
        return self.data[at]

    def fixed(self, s: struct.Struct) -> int:
        return s.unpack_from(self.data, self.take(s.size))[0]

    def uvarint(self) -> int:
        byte = self.byte()
        if byte < 0x80:
            return byte
        value, shift = byte & 0x7F, 7
        while True:
            byte = self.byte()
            if shift == 28 and byte > 0x0F:
                raise ValueError(f"varint over 32 bits before byte {self.pos}")
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7

    def count(self) -> int:
        """An array's length; a null array (none is nullable here) is refused."""
        n = self.uvarint() - 1 if self.flexible else self.fixed(_I32)
        if n < 0:
            raise ValueError(f"null array before byte {self.pos}")
        return n

    def string(self, nullable: bool = False) -> str | None:
        n = self.uvarint() - 1 if self.flexible else self.fixed(_I16)
        if n < 0:
            if nullable:
                return None
            raise ValueError(f"null string before byte {self.pos}")
        at = self.take(n)
        return str(self.data[at : at + n], "utf-8")

    def skip_string(self, nullable: bool = True) -> None:
        n = self.uvarint() - 1 if self.flexible else self.fixed(_I16)
        if n > 0:
            self.take(n)
        elif n < 0 and not nullable:
            raise ValueError(f"null string before byte {self.pos}")

    def skip_tags(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.take(self.uvarint())


def _read(body: memoryview | bytes, version: int, sources: frozenset[int] | None = None) -> list[Result]:
    """DescribeConfigs versions 1 to 4: each resource's type, name, error and entries (only those
    whose source is one of ``sources``, when given: the others' names and values are skipped, not
    decoded; every config of 20,000 topics is ~700,000 entries)."""
    if not 1 <= version <= 4:
        raise ValueError(f"version {version} is not read")
    r = _Reader(body, version >= 4)
    string, skip_string, skip_tags, byte, count, take = (
        r.string,
        r.skip_string,
        r.skip_tags,
        r.byte,
        r.count,
        r.take,
    )
    documented = version >= 3
    take(4)  # throttle time
    results: list[Result] = []
    for _ in range(count()):
        error_code = r.fixed(_I16)
        message = string(True)
        rtype = byte()
        name = string()
        entries: dict[str, tuple[str | None, int, bool]] = {}
        for _ in range(count()):
            key_at = r.pos
            skip_string(False)
            value_at = r.pos
            skip_string()
            take(1)  # read only
            source = byte()
            source = source if source < 128 else source - 256
            sensitive = byte() != 0
            for _ in range(count()):  # synonyms (none asked)
                skip_string()
                skip_string()
                take(1)
                skip_tags()
            if documented:
                take(1)  # config type
                skip_string()  # documentation
            skip_tags()
            if sources is None or source in sources:
                after, r.pos = r.pos, key_at
                key = string()
                r.pos = value_at
                entries[key] = (string(True), source, sensitive)
                r.pos = after
        skip_tags()
        results.append((rtype, name, error_code, message, entries))
    skip_tags()
    if r.pos != r.end:
        raise ValueError(f"{r.end - r.pos} bytes after the last field")
    return results


def read_results(answer: _Answer, sources: frozenset[int] | None = None) -> list[Result]:
    """An answer ``ConfigsBytesRequest`` brought -> its resources' results, with the entries of
    ``sources`` only when given (its buffer released); unreadable bytes raise KafkaOperationError."""
    return read_answer(answer, lambda body, version: _read(body, version, sources), "DescribeConfigs")


Entries = dict[str, tuple[str | None, int, bool]]  # {config: (value, source, sensitive)}


def read_entries(
    results: list[Result], group: list[ConfigResource]
) -> dict[ConfigResource, Entries | KafkaOperationError]:
    """Per resource of ``group``: its entries in the answer, or its error (a resource the answer
    does not carry gets its own)."""
    got = {(rtype, name): (code, message, entries) for rtype, name, code, message, entries in results}
    codes = {t: RESOURCE_TYPES[t] for t in {res.type for res in group}}
    out: dict[ConfigResource, Entries | KafkaOperationError] = {}
    for res in group:
        hit = got.get((codes[res.type], res.name))
        if hit is None:
            out[res] = KafkaOperationError(
                -1, "UNKNOWN_SERVER_ERROR", f"no answer for {res.type} {res.name!r}"
            )
            continue
        code, message, entries = hit
        err = from_code(code, message) if code else None
        out[res] = err if err is not None else entries
    return out


def read_overrides(
    results: list[Result], group: list[ConfigResource], names: list[str] | None
) -> dict[ConfigResource, dict[str, str | None] | KafkaOperationError]:
    """Per resource of ``group``: ``{config: its override}`` of those of ``names`` (None: every
    config) it overrides (none: an empty dict), or its error.

    An override is a value set on the resource itself (a topic's own dynamic config, a broker's
    own, ...: ``OWN_SOURCE``); on the cluster-wide default broker resource (``BROKER ""``) the
    dynamic default itself. A sensitive override's value is None (Kafka sends none). A resource the
    answer does not carry gets its own error."""
    wanted = None if names is None else set(names)
    out: dict[ConfigResource, dict[str, str | None] | KafkaOperationError] = {}
    for res, entries in read_entries(results, group).items():
        if isinstance(entries, KafkaOperationError):
            out[res] = entries
            continue
        own = DYNAMIC_DEFAULT_BROKER if res.type == "BROKER" and res.name == "" else OWN_SOURCE[res.type]
        out[res] = {
            key: None if sensitive else value
            for key, (value, source, sensitive) in entries.items()
            if source == own and (wanted is None or key in wanted)
        }
    return out


class ConfigValuesMixin(GatewayBase):
    """Config overrides of many resources, read lean."""

    def config_overrides(
        self, resources: Iterable[ConfigResource], names: Iterable[str] | None
    ) -> dict[ConfigResource, dict[str, str | None] | KafkaOperationError]:
        """Per resource: ``{config: its override}`` of those of ``names`` (None: every config) it
        overrides, or its error (the overrides ``describe_configs`` reads; what
        ``throttles.current_values`` and drift's look read with). Only the overrides' entries are
        decoded from the answer."""
        wanted = None if names is None else sorted(set(names))
        return self._lean_describe(resources, wanted, OVERRIDE_SOURCES, read_overrides)

    def config_values(
        self, resources: Iterable[ConfigResource], names: Iterable[str]
    ) -> dict[ConfigResource, dict[str, str | None] | KafkaOperationError]:
        """Per resource: ``{config: its value}`` of ``names`` whatever set it (a sensitive one's
        value is None), or its error: what ``describe_configs(keys=names)`` answers, without a
        ``ConfigEntry`` per config (the telemetry snapshot's retention and min ISR of every topic)."""

        def values(results: list[Result], group: list[ConfigResource], _names) -> dict:
            return {
                res: entries
                if isinstance(entries, KafkaOperationError)
                else {key: None if sensitive else value for key, (value, _, sensitive) in entries.items()}
                for res, entries in read_entries(results, group).items()
            }

        return self._lean_describe(resources, sorted(set(names)), None, values)

    def _lean_describe(
        self, resources: Iterable[ConfigResource], names: list[str] | None, sources, reduce
    ) -> dict:
        """DescribeConfigs of ``names`` (None: all) of each resource, one request per node (brokers'
        own resources to that broker, the rest to any), in flight together, each answer read from
        its bytes (entries of ``sources`` only, when given) and ``reduce(results, group, names)``d."""
        asked = list(dict.fromkeys(resources))  # once: ``resources`` may be an iterator
        out: dict[ConfigResource, Any] = {}
        groups = self._by_node_safe(asked, out)
        R = DescribeConfigsRequest.DescribeConfigsResource
        requests = {
            node: ConfigsBytesRequest(
                resources=[
                    R(
                        resource_type=_resource_code(r),
                        resource_name=r.name,
                        configuration_keys=None if names is None else list(names),
                    )
                    for r in group
                ],
                include_synonyms=False,
                include_documentation=False,
            )
            for node, group in groups.items()
        }
        for node, answer in self._send_each(requests).items():
            group = groups[node]
            if isinstance(answer, KafkaOperationError):
                out.update(dict.fromkeys(group, answer))
                continue
            try:
                with collector.paused():  # ~100,000 short-lived acyclic objects at 20,000 topics
                    out.update(reduce(read_results(answer, sources), group, names))
            except KafkaOperationError as err:
                out.update(dict.fromkeys(group, err))
        return {r: out[r] for r in asked}
