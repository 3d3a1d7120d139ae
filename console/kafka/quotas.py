"""Client quotas (KIP-546): DescribeClientQuotas with a filter, AlterClientQuotas with ``validate_only``.

An entity is a tuple of ``(type, name)`` pairs in Kafka's path order (``user``, ``client-id``;
``ip`` alone), a name of None being that type's default entity (``<default>``).

Brokers answer both requests. A cluster registered with bootstrap controllers only (KIP-919):
Kafka 4.1's controllers serve AlterClientQuotas but not DescribeClientQuotas (UNSUPPORTED_VERSION
from the controller listener), so ``describe_client_quotas`` raises UNSUPPORTED_ENDPOINT_TYPE there
without asking, and ``alter_client_quotas`` goes to the active controller. In broker mode an
alteration goes to any broker, which forwards it to the active controller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import KafkaOperationError, from_code

USER, CLIENT_ID, IP = "user", "client-id", "ip"
#: the order of an entity's parts (Kafka's ``/config/users/<user>/clients/<client-id>``)
PART_ORDER = {USER: 0, CLIENT_ID: 1, IP: 2}
EXACT, DEFAULT, SPECIFIED = "exact", "default", "specified"
_MATCH_CODES = {EXACT: 0, DEFAULT: 1, SPECIFIED: 2}

QuotaEntityParts = tuple[tuple[str, "str | None"], ...]


def entity_parts(pairs: Iterable[tuple[str, str | None]]) -> QuotaEntityParts:
    """``(type, name)`` pairs in path order (user, client-id, ip; unknown types last, by name)."""
    return tuple(sorted(pairs, key=lambda p: (PART_ORDER.get(p[0], 9), p[0])))


def _parts(entity: Sequence[Any]) -> QuotaEntityParts:
    """An answer's entity in path order; one part (most entities) or two without a general sort."""
    if len(entity) == 1:
        return ((entity[0].entity_type, entity[0].entity_name),)
    if len(entity) == 2:
        a, b = (entity[0].entity_type, entity[0].entity_name), (entity[1].entity_type, entity[1].entity_name)
        return (a, b) if PART_ORDER.get(a[0], 9) <= PART_ORDER.get(b[0], 9) else (b, a)
    return entity_parts((e.entity_type, e.entity_name) for e in entity)


@dataclass(frozen=True)
class QuotaFilter:
    """One DescribeClientQuotas filter component: ``match`` is ``exact`` (``name`` given),
    ``default`` (the type's default entity) or ``specified`` (any name of the type, the default too)."""

    entity_type: str
    match: str = SPECIFIED
    name: str | None = None


@dataclass(frozen=True)
class ClientQuotaEntry:
    """One entity and its quota values (``{key: value}``, as Kafka stores them: doubles)."""

    entity: QuotaEntityParts
    values: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class QuotaAlteration:
    """What to change on one entity: ``ops`` is ``{key: value}``, a value of None removes the key."""

    entity: QuotaEntityParts
    ops: Mapping[str, float | None]


class QuotasMixin:
    """DescribeClientQuotas and AlterClientQuotas (see the module docstring)."""

    def describe_client_quotas(
        self, filters: Sequence[QuotaFilter] = (), *, strict: bool = False
    ) -> list[ClientQuotaEntry]:
        """The entities the filter matches (every entity for no filter) with their quotas; ``strict``:
        only entities with no type beyond the filter's. Raises KafkaOperationError (Kafka's refusal of
        the filter, or UNSUPPORTED_ENDPOINT_TYPE for a cluster registered with controllers only)."""
        from kafka.protocol.admin import DescribeClientQuotasRequest as D

        if self.conn.controller_mode:
            raise KafkaOperationError(
                115,
                "UNSUPPORTED_ENDPOINT_TYPE",
                "DescribeClientQuotas is not served by the controllers; register the brokers "
                "(bootstrap servers) to read client quotas",
                False,
            )
        components = []
        for f in filters:
            if f.match not in _MATCH_CODES:
                raise KafkaOperationError(42, "INVALID_REQUEST", f"unknown match type {f.match!r}", False)
            components.append(
                D.ComponentData(
                    entity_type=f.entity_type,
                    match_type=_MATCH_CODES[f.match],
                    match=f.name if f.match == EXACT else None,
                )
            )
        response = self._kp.send(D(components=components, strict=strict))
        err = from_code(response.error_code, response.error_message)
        if err is not None:
            raise err
        return [
            ClientQuotaEntry(_parts(entry.entity), {v.key: v.value for v in entry.values})
            for entry in response.entries or ()
        ]

    def alter_client_quotas(
        self, alterations: Sequence[QuotaAlteration], *, validate_only: bool = False
    ) -> dict[QuotaEntityParts, KafkaOperationError | None]:
        """Set and remove quota keys per entity (one AlterClientQuotas); ``{entity: None | its error}``.
        ``validate_only``: Kafka's answer, nothing changed. Raises KafkaOperationError when the
        request as a whole fails (no answer in time: the change may or may not have been made)."""
        from kafka.protocol.admin import AlterClientQuotasRequest as A

        if not alterations:
            return {}
        entries = [
            A.EntryData(
                entity=[A.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in a.entity],
                ops=[
                    A.EntryData.OpData(key=k, value=0.0 if v is None else float(v), remove=v is None)
                    for k, v in a.ops.items()
                ],
            )
            for a in alterations
        ]
        response: Any = self._kp.send_to_controller(A(entries=entries, validate_only=validate_only))
        out: dict[QuotaEntityParts, KafkaOperationError | None] = {}
        for entry in response.entries or ():
            entity = entity_parts((e.entity_type, e.entity_name) for e in entry.entity)
            out[entity] = from_code(entry.error_code, entry.error_message)
        for a in alterations:  # an entity Kafka did not answer for: say so rather than guess
            out.setdefault(
                entity_parts(a.entity),
                KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "Kafka did not answer for this entity", True),
            )
        return out
