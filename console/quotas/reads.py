"""What the pages, API and CLI list and show of client quotas, authorised (``cluster.view``).

Every read is one or a few DescribeClientQuotas (KIP-546) with Kafka's own filter, so a list of one
user's quotas does not fetch every entity. A cluster registered with bootstrap controllers only
cannot describe quotas (Kafka's controllers do not serve DescribeClientQuotas): the reads raise the
gateway's UNSUPPORTED_ENDPOINT_TYPE, which every door shows as Kafka's refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

from console import access
from console.clusters.actions import gateway_for
from console.kafka.quotas import DEFAULT as MATCH_DEFAULT
from console.kafka.quotas import EXACT, SPECIFIED, QuotaFilter
from console.models import Cluster
from console.quotas import core
from console.quotas.core import Effective, Entity, QuotaInvalid

FILTER_TYPES = ("", core.USER, core.CLIENT_ID, core.IP)


@dataclass(frozen=True)
class QuotaRow:
    """One entity and its quotas, as the list shows it."""

    entity: Entity
    values: dict[str, float]

    @property
    def shown(self) -> list[tuple[str, str, str]]:
        """``(key, raw value, value as people read it)`` of each key set, by key."""
        return [
            (k, core.show_value(k, self.values[k]), core.human_value(k, self.values[k]))
            for k in sorted(self.values)
        ]

    def as_json(self) -> dict:
        return {
            "entity": self.entity.name,
            "kind": self.entity.kind,
            "parts": dict(self.entity.parts),
            "quotas": dict(sorted(self.values.items())),
        }


PAGE_SIZE = 200  # entities per page of the list


@dataclass(frozen=True)
class QuotaList:
    """One page of the entities a filter matched, grouped by kind (``[(kind, label, [QuotaRow])]``);
    ``total`` counts every match, ``page`` of ``pages``."""

    entity_type: str
    name: str
    groups: list[tuple[str, str, list[QuotaRow]]]
    total: int
    page: int = 1
    pages: int = 1
    per_page: int = PAGE_SIZE

    @property
    def count(self) -> int:
        return self.total

    @property
    def rows(self) -> list[QuotaRow]:
        return [r for _, _, rows in self.groups for r in rows]


def filter_for(entity_type: str, name: str) -> list[QuotaFilter]:
    """Kafka's filter for the list: every entity (no type), any name of a type (the default too),
    exactly ``name``, or the type's default (``<default>``)."""
    entity_type, name = (entity_type or "").strip(), (name or "").strip()
    if entity_type not in FILTER_TYPES:
        raise QuotaInvalid([f"filter by user, client-id or ip, not '{entity_type[:40]}'"])
    if not entity_type:
        if name:
            raise QuotaInvalid(["choose the entity type the name is of"])
        return []
    if not name:
        return [QuotaFilter(entity_type, SPECIFIED)]
    if name == core.DEFAULT:
        return [QuotaFilter(entity_type, MATCH_DEFAULT)]
    core.make_entity([(entity_type, name)])  # the name's own checks (length, control characters)
    return [QuotaFilter(entity_type, EXACT, name)]


def _entries(cluster: Cluster, filters: list[QuotaFilter], strict: bool = False) -> dict[Entity, dict]:
    return {
        Entity(e.entity): dict(e.values)
        for e in gateway_for(cluster).describe_client_quotas(filters, strict=strict)
    }


def list_quotas(
    *,
    actor,
    cluster: Cluster,
    entity_type: str = "",
    name: str = "",
    page: int = 1,
    per_page: int = PAGE_SIZE,
) -> QuotaList:
    """One page of the entities the filter matches (``entity_type`` user, client-id or ip; ``name`` a
    name, ``<default>`` or empty for any), in kind order (users, users and client ids, client ids,
    IPs; defaults first, then by name), grouped by kind."""
    access.require(actor, cluster, access.VIEW)
    filters = filter_for(entity_type, name)
    found = gateway_for(cluster).describe_client_quotas(filters)
    found.sort(key=lambda e: core.sort_key(e.entity))  # Entity objects only for the page's rows
    per_page = max(1, per_page)
    pages = max(1, -(-len(found) // per_page))
    page = min(max(1, page), pages)
    groups: list[tuple[str, str, list[QuotaRow]]] = []
    for e in found[(page - 1) * per_page : page * per_page]:
        kind = core.kind_of(e.entity)
        if not groups or groups[-1][0] != kind:
            groups.append((kind, core.KIND_LABELS[kind], []))
        groups[-1][2].append(QuotaRow(Entity(e.entity), dict(e.values)))
    return QuotaList(entity_type or "", name or "", groups, len(found), page, pages, per_page)


def current(cluster: Cluster, entity: Entity) -> dict[str, float]:
    """One entity's quotas as Kafka has them now (no permission check: the areas' own reads)."""
    filters = [
        QuotaFilter(t, MATCH_DEFAULT) if n is None else QuotaFilter(t, EXACT, n) for t, n in entity.parts
    ]
    return _entries(cluster, filters, strict=True).get(entity, {})


def describe_entity(*, actor, cluster: Cluster, entity: Entity) -> dict[str, float]:
    access.require(actor, cluster, access.VIEW)
    return current(cluster, entity)


@dataclass(frozen=True)
class EffectiveView:
    """The quota per key that applies to a user + client id (or an IP's connection rate), with the
    8 levels Kafka looks at and what each sets."""

    user: str
    client_id: str
    ip: str
    keys: list[Effective]
    levels: list[tuple[int, Entity, dict[str, float]]]

    def as_json(self) -> dict:
        return {
            "user": self.user or None,
            "client_id": self.client_id or None,
            "ip": self.ip or None,
            "quotas": [
                {
                    "key": e.key,
                    "value": e.value,
                    "unlimited": e.value is None,
                    "source": e.source.name if e.source else None,
                    "level": e.level,
                }
                for e in self.keys
            ],
            "levels": [{"level": i, "entity": e.name, "quotas": v} for i, e, v in self.levels],
        }


def effective_quota(*, actor, cluster: Cluster, user: str, client_id: str) -> EffectiveView:
    """The quotas Kafka applies to ``user`` connecting with ``client_id``: four filtered reads (the
    user's entities, the default user's, the client id's, the default client id's)."""
    access.require(actor, cluster, access.VIEW)
    user, client_id = (user or "").strip(), (client_id or "").strip()
    core.check_user_client(user, client_id)
    if not client_id:
        raise QuotaInvalid(["name the client id (Kafka's clients always send one, e.g. producer-1)"])
    found: dict[Entity, dict] = {}
    for filters, strict in (
        ([QuotaFilter(core.USER, EXACT, user)], False),
        ([QuotaFilter(core.USER, MATCH_DEFAULT)], False),
        ([QuotaFilter(core.CLIENT_ID, EXACT, client_id)], True),
        ([QuotaFilter(core.CLIENT_ID, MATCH_DEFAULT)], True),
    ):
        found.update(_entries(cluster, filters, strict))
    order = core.levels(user, client_id)
    return EffectiveView(
        user,
        client_id,
        "",
        core.effective(found, user, client_id),
        [(i, e, dict(found.get(e, {}))) for i, e in enumerate(order, 1)],
    )


def effective_ip_quota(*, actor, cluster: Cluster, ip: str) -> EffectiveView:
    """The connection creation rate Kafka applies to connections from ``ip``."""
    access.require(actor, cluster, access.VIEW)
    ip = (ip or "").strip()
    core.check_ip(ip)
    found = _entries(cluster, [QuotaFilter(core.IP, SPECIFIED)])
    order = [Entity(((core.IP, ip),)), Entity(((core.IP, None),))]
    return EffectiveView(
        "",
        "",
        ip,
        [core.effective_ip(found, ip)],
        [(i, e, dict(found.get(e, {}))) for i, e in enumerate(order, 1)],
    )
