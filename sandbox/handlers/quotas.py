"""DescribeClientQuotas and AlterClientQuotas (KIP-546): client quotas of users, client ids and IPs.

As Kafka 4.1's controller (``ClientQuotaControlManager``) checks an alteration and its brokers'
metadata image (``ClientQuotasImage.describe``) answers a filter, with the same error codes and words:

* an entity is a map of type (``user``, ``client-id``, ``ip``) to a name, ``None`` being the default
  entity; a type named twice in one entity counts once (the last name), as Kafka's map keeps it;
* ``ip`` stands alone and takes only ``connection_creation_rate`` (an INT); user and client-id
  entities take ``producer_byte_rate``, ``consumer_byte_rate`` (LONGs), ``request_percentage`` and
  ``controller_mutation_rate`` (DOUBLEs); a value must be > 0, a LONG/INT whole and in range;
* removing a key that is not set, or an unknown one, is a no-op; an entity left with no key is gone;
* an entity named twice in one request, or a key twice for one entity, is refused ("Ignoring
  duplicate entity ..."), the other entries are applied; ``validate_only`` applies nothing.

A describe filter matches an entity that has every EXACT/DEFAULT component's name and every
SPECIFIED component's type (any name, the default too); ``strict`` also wants no other types.
Kafka answers entities in hash order; here in the order they were first set, an entity's
types sorted (client-id, ip, user: Java's hash order for the combinations Kafka allows).
No authorizer: as everywhere in the sandbox, every principal may do this.
"""

from __future__ import annotations

import math
import socket
from typing import Any

from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)

from sandbox.apis import RequestContext, api

INVALID_REQUEST, UNSUPPORTED_VERSION = 42, 35
USER, CLIENT_ID, IP = "user", "client-id", "ip"
EXACT, DEFAULT, SPECIFIED = 0, 1, 2
LONG, INT, DOUBLE = "LONG", "INT", "DOUBLE"
USER_AND_CLIENT_KEYS = {
    "producer_byte_rate": LONG,
    "consumer_byte_rate": LONG,
    "request_percentage": DOUBLE,
    "controller_mutation_rate": DOUBLE,
}
IP_KEYS = {"connection_creation_rate": INT}
LIMITS = {LONG: (float(2**63 - 1), "a LONG"), INT: (float(2**31 - 1), "an INT")}

Entity = tuple[tuple[str, "str | None"], ...]


class Refused(Exception):
    """A request Kafka refuses whole (or one entry of an alteration), with its code and message."""

    def __init__(self, message: str, code: int = INVALID_REQUEST) -> None:
        super().__init__(message)
        self.code = code


def entity_key(parts: dict[str, str | None]) -> Entity:
    """The state's key of an entity: its (type, name) pairs sorted by type."""
    return tuple(sorted(parts.items()))


def _show(entity: Entity) -> str:
    """Kafka's ``ClientQuotaEntity.toString()``."""
    inner = ", ".join(f"{t}={'null' if n is None else n}" for t, n in entity)
    return f"ClientQuotaEntity(entries={{{inner}}})"


def _resolvable(host: str | None) -> bool:
    """Kafka's ``InetAddress.getByName``: an IP literal or a name that resolves (the default: None)."""
    if host is None:
        return True
    try:
        socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return True


def allowed_keys(entity: Entity) -> dict[str, str]:
    """The quota keys (and their types) an entity takes, or Refused for an entity Kafka refuses."""
    if not entity:
        raise Refused("Invalid empty client quota entity")
    for entity_type, name in entity:
        if entity_type not in (USER, CLIENT_ID, IP):
            raise Refused(f"Unhandled client quota entity type: {entity_type}")
        if name == "":
            raise Refused(f"Empty {entity_type} not supported")
    types = dict(entity)
    if IP in types:
        if len(types) > 1:
            raise Refused(
                "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"
            )
        if not _resolvable(types[IP]):
            raise Refused(f"{types[IP]} is not a valid IP or resolvable host.")
        return IP_KEYS
    return USER_AND_CLIENT_KEYS


def check_value(keys: dict[str, str], key: str, value: float) -> None:
    """Kafka's ``validateQuotaKeyValue``: a known key, a positive value, whole and in range for integers."""
    kind = keys.get(key)
    if kind is None:
        raise Refused(f"Invalid configuration key {key}")
    if value <= 0.0:
        raise Refused(f"Quota {key} must be greater than 0")
    if kind == DOUBLE:
        return
    limit, name = LIMITS[kind]
    if value > limit:
        raise Refused(f"Proposed value for {key} is too large for {name}.")
    if abs(math.fmod(value, 1.0)) > 1e-6:
        raise Refused(f"{key} cannot be a fractional value.")


def altered(current: dict[str, float], entity: Entity, ops: dict[str, float | None]) -> dict[str, float]:
    """An entity's quotas after ``ops`` (key -> value, None removes), or Refused."""
    keys = allowed_keys(entity)
    new = dict(current)
    for key, value in ops.items():
        if value is None:
            new.pop(key, None)
        else:
            check_value(keys, key, value)
            new[key] = value
    return new


def alter(
    quotas: dict[Entity, dict[str, float]], entries: list[tuple[Entity, list[tuple[str, float | None]]]]
) -> dict[Entity, tuple[int, str | None]]:
    """Apply alterations to ``quotas`` in place as Kafka's controller does; the outcome per entity."""
    results: dict[Entity, tuple[int, str | None]] = {}
    for entity, ops in entries:
        wanted: dict[str, float | None] = {}
        for key, value in ops:
            if key in wanted:
                results[entity] = (INVALID_REQUEST, "duplicate key")
            wanted[key] = value
        if entity in results:  # a second entry for it, or a key twice (Kafka words both alike)
            results[entity] = (INVALID_REQUEST, f"Ignoring duplicate entity {_show(entity)}")
            continue
        try:
            new = altered(quotas.get(entity, {}), entity, wanted)
        except Refused as exc:
            results[entity] = (exc.code, str(exc))
            continue
        if new:
            quotas[entity] = new
        else:
            quotas.pop(entity, None)
        results[entity] = (0, None)
    return results


def _filter(components: list[Any]) -> tuple[dict[str, str | None], set[str]]:
    """A describe filter as (type -> name wanted, types wanted with any name), or Refused."""
    exact: dict[str, str | None] = {}
    typed: set[str] = set()
    for c in components:
        if c.entity_type == "":
            raise Refused("Invalid empty entity type.")
        if c.entity_type in exact or c.entity_type in typed:
            raise Refused(f"Entity type {c.entity_type} cannot appear more than once in the filter.")
        if c.entity_type not in (USER, CLIENT_ID, IP):
            raise Refused(f"Unsupported entity type {c.entity_type}", UNSUPPORTED_VERSION)
        if c.match_type == EXACT:
            if c.match is None:
                raise Refused("Request specified MATCH_TYPE_EXACT, but set match string to null.")
            exact[c.entity_type] = c.match
        elif c.match_type in (DEFAULT, SPECIFIED):
            if c.match is not None:
                which = "DEFAULT" if c.match_type == DEFAULT else "SPECIFIED"
                raise Refused(f"Request specified MATCH_TYPE_{which}, but also specified a match string.")
            if c.match_type == DEFAULT:
                exact[c.entity_type] = None
            else:
                typed.add(c.entity_type)
        else:
            raise Refused(f"Unknown match type {c.match_type}")
    named = set(exact) | typed
    if IP in named and named & {USER, CLIENT_ID}:
        raise Refused(
            "Invalid entity filter component combination. IP filter component should not be used with "
            "user or clientId filter component."
        )
    return exact, typed


def matches(entity: Entity, exact: dict[str, str | None], typed: set[str], strict: bool) -> bool:
    """Kafka's ``ClientQuotasImage.matches``."""
    parts = dict(entity)
    if strict and len(parts) != len(exact) + len(typed):
        return False
    return all(t in parts and parts[t] == n for t, n in exact.items()) and typed <= parts.keys()


DR = DescribeClientQuotasResponse


@api(DescribeClientQuotasRequest, 0, 1)
def describe_client_quotas(ctx: RequestContext, req: Any) -> Any:
    """The quotas of every entity the filter matches (all of them for an empty filter)."""
    try:
        exact, typed = _filter(req.components)
    except Refused as exc:
        return DR(
            version=ctx.version, throttle_time_ms=0, error_code=exc.code, error_message=str(exc), entries=None
        )
    entries = [
        DR.EntryData(
            entity=[DR.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in entity],
            values=[DR.EntryData.ValueData(key=k, value=v) for k, v in values.items()],
        )
        for entity, values in ctx.state.client_quotas.items()
        if matches(entity, exact, typed, bool(req.strict))
    ]
    return DR(version=ctx.version, throttle_time_ms=0, error_code=0, error_message="", entries=entries)


AR = AlterClientQuotasResponse


@api(AlterClientQuotasRequest, 0, 1, controller=True)
def alter_client_quotas(ctx: RequestContext, req: Any) -> Any:
    """Set or remove quota keys per entity; with ``validate_only`` only the answers."""
    entries = [
        (
            entity_key({e.entity_type: e.entity_name for e in entry.entity}),
            [(op.key, None if op.remove else op.value) for op in entry.ops],
        )
        for entry in req.entries
    ]
    st = ctx.state
    quotas = {entity: dict(values) for entity, values in st.client_quotas.items()}
    results = alter(quotas, entries)
    if not req.validate_only and quotas != st.client_quotas:
        st.client_quotas = quotas
        st.record()
    return AR(
        version=ctx.version,
        throttle_time_ms=0,
        entries=[
            AR.EntryData(
                error_code=code,
                error_message=message,
                entity=[AR.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in entity],
            )
            for entity, (code, message) in results.items()
        ],
    )
