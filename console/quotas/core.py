"""Client quotas as plain data (pure): entities and their names, the keys and values Kafka takes, the
diff of an alteration, and the quota that applies to a client.

* An entity names a user, a client id, both, or an IP, each possibly the type's default:
  ``user=alice``, ``user=<default>``, ``user=alice,client-id=app``, ``client-id=<default>``,
  ``ip=10.0.0.1``. Its parts are kept in Kafka's path order (user, then client id).
* ``check_changes`` refuses, before Kafka is asked and naming each problem, what Kafka 4.1's
  controller refuses (``ClientQuotaControlManager``): an unknown key or one the entity does not take
  (an IP takes only ``connection_creation_rate``), a value that is not a number, not greater than 0,
  fractional for a byte rate or connection rate, or out of the type's range.
* ``effective`` resolves a user + client id as Kafka's ``DefaultQuotaCallback`` does, each key on its
  own (one quota manager per key): the first of the 8 levels from ``/config/users/<user>/clients/<client-id>``
  down to ``/config/clients/<default>`` that sets the key applies; none: unlimited. An IP's connection
  rate: ``ip=<ip>``, else ``ip=<default>``, else unlimited.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from console.formatting import human_bytes, human_count

USER, CLIENT_ID, IP = "user", "client-id", "ip"
TYPES = (USER, CLIENT_ID, IP)
DEFAULT = "<default>"
NAME_MAX = 255  # the console's bound on a user, client id or IP name (Kafka sets none)
KEYS_MAX = 8

LONG, INT, DOUBLE = "LONG", "INT", "DOUBLE"
#: the keys a user, client id or user + client id entity takes, and their types (Kafka's QuotaConfigs)
CLIENT_KEYS: dict[str, str] = {
    "producer_byte_rate": LONG,
    "consumer_byte_rate": LONG,
    "request_percentage": DOUBLE,
    "controller_mutation_rate": DOUBLE,
}
#: the keys an IP entity takes
IP_KEYS: dict[str, str] = {"connection_creation_rate": INT}
ALL_KEYS = {**CLIENT_KEYS, **IP_KEYS}
_LIMITS = {LONG: 2**63 - 1, INT: 2**31 - 1}
UNITS = {
    "producer_byte_rate": "bytes/s",
    "consumer_byte_rate": "bytes/s",
    "request_percentage": "% of a thread",
    "controller_mutation_rate": "partition mutations/s",
    "connection_creation_rate": "connections/s",
}

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SPLIT = re.compile(r",\s*(?=(?:user|client-id|ip)\s*=)")
_HOST = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)

Parts = tuple[tuple[str, "str | None"], ...]


class QuotaInvalid(ValueError):
    """Input that must not be sent to Kafka; ``errors`` lists one sentence per problem."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True, order=True)
class Entity:
    """A quota entity: ``parts`` are ``(type, name)`` in path order, None naming the default."""

    parts: Parts

    @property
    def types(self) -> dict[str, str | None]:
        return dict(self.parts)

    @property
    def name(self) -> str:
        """``user=alice,client-id=<default>``."""
        return ",".join(f"{t}={DEFAULT if n is None else n}" for t, n in self.parts)

    @property
    def kind(self) -> str:
        """Which kind of entity: ``user``, ``user+client-id``, ``client-id`` or ``ip``."""
        return "+".join(t for t, _ in self.parts)

    @property
    def path(self) -> str:
        """Kafka's path of the entity: ``/config/users/alice/clients/<default>``."""
        folders = {USER: "users", CLIENT_ID: "clients", IP: "ips"}
        return "".join(f"/{folders[t]}/{DEFAULT if n is None else n}" for t, n in self.parts)

    @property
    def keys(self) -> dict[str, str]:
        """The quota keys this entity takes, with their types."""
        return IP_KEYS if IP in self.types else CLIENT_KEYS

    @property
    def target(self) -> str:
        """How the audit trail names it."""
        return f"quota:{self.name}"

    def as_json(self) -> list[list[str | None]]:
        return [[t, n] for t, n in self.parts]


KIND_LABELS = {
    "user": "Users",
    "user+client-id": "Users and client ids",
    "client-id": "Client ids",
    "ip": "IP addresses",
}
KIND_ORDER = tuple(KIND_LABELS)


def _check_name(entity_type: str, name: str) -> str | None:
    if name == "":
        return f"the {entity_type} name is empty (write {DEFAULT} for the default {entity_type})"
    if len(name) > NAME_MAX:
        return f"the {entity_type} name is longer than {NAME_MAX} characters ({len(name)})"
    if _CONTROL.search(name):
        return f"the {entity_type} name has a control character"
    if entity_type == IP and not _is_host(name):
        return f"'{name[:80]}' is not an IP address or host name"
    return None


def _is_host(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return bool(_HOST.match(name))
    return True


def entity_of(*, user: str | None = None, client_id: str | None = None, ip: str | None = None) -> Entity:
    """The entity of the given names (each a name, ``<default>``, or None when not part of it)."""
    given = [(t, n) for t, n in ((USER, user), (CLIENT_ID, client_id), (IP, ip)) if n is not None]
    return make_entity(given)


def make_entity(pairs: Iterable[tuple[str, str | None]]) -> Entity:
    """An entity from ``(type, name)`` pairs (``<default>`` or None: the default), or QuotaInvalid."""
    errors: list[str] = []
    seen: dict[str, str | None] = {}
    for entity_type, raw in pairs:
        entity_type = str(entity_type).strip()
        if entity_type not in TYPES:
            errors.append(f"unknown entity type '{entity_type[:40]}': use user, client-id or ip")
            continue
        if entity_type in seen:
            errors.append(f"{entity_type} is named twice")
            continue
        name = None if raw is None or raw == DEFAULT else str(raw)
        problem = None if name is None else _check_name(entity_type, name)
        if problem:
            errors.append(problem)
        seen[entity_type] = name
    if not seen and not errors:
        errors.append("name a user, a client id, both, or an IP")
    if IP in seen and len(seen) > 1:
        errors.append("an IP entity stands alone: it cannot be combined with a user or client id")
    if errors:
        raise QuotaInvalid(errors)
    return Entity(tuple(sorted(seen.items(), key=lambda p: TYPES.index(p[0]))))


def parse_entity(text: str) -> Entity:
    """``user=alice,client-id=app`` (a name may hold ``,`` and ``=``: a part starts only at
    ``user=``, ``client-id=`` or ``ip=`` after a comma) -> Entity, or QuotaInvalid."""
    text = (text or "").strip()
    if not text:
        raise QuotaInvalid(["name a user, a client id, both, or an IP (user=alice,client-id=app)"])
    if len(text) > 3 * NAME_MAX + 40:
        raise QuotaInvalid([f"the entity is longer than {3 * NAME_MAX + 40} characters"])
    pairs: list[tuple[str, str | None]] = []
    errors: list[str] = []
    for part in _SPLIT.split(text):
        entity_type, sep, name = part.partition("=")
        if not sep:
            errors.append(f"write type=name, not '{part[:80]}'")
            continue
        pairs.append((entity_type.strip(), name.strip()))
    if errors:
        raise QuotaInvalid(errors)
    return make_entity(pairs)


def entity_from_json(value) -> Entity:
    """An entity stored as ``[[type, name], ...]`` or given as ``{type: name}`` or as its name."""
    if isinstance(value, str):
        return parse_entity(value)
    if isinstance(value, Mapping):
        return make_entity(value.items())
    if isinstance(value, list | tuple) and all(isinstance(p, list | tuple) and len(p) == 2 for p in value):
        return make_entity((p[0], p[1]) for p in value)
    raise QuotaInvalid(["an entity is a name like user=alice,client-id=app or {type: name}"])


# -- values ------------------------------------------------------------------------------------


def _number(key: str, raw) -> tuple[float | None, str | None]:
    if isinstance(raw, bool):
        return None, f"{key}: '{raw}' is not a number"
    try:
        value = float(raw) if isinstance(raw, int | float) else float(str(raw).strip().replace("_", ""))
    except OverflowError:
        return None, f"{key} is too large"
    except ValueError:
        return None, f"{key}: '{str(raw)[:40]}' is not a number"
    if not math.isfinite(value):
        return None, f"{key}: '{str(raw)[:40]}' is not a finite number"
    return value, None


def check_changes(entity: Entity, changes: Mapping[str, object]) -> dict[str, float | None]:
    """``{key: value}`` (None removes the key) checked as Kafka checks it; the clean values, or
    QuotaInvalid naming every problem."""
    errors: list[str] = []
    out: dict[str, float | None] = {}
    if not changes:
        raise QuotaInvalid(["nothing to change: set or remove at least one quota key"])
    if len(changes) > KEYS_MAX:
        raise QuotaInvalid([f"at most {KEYS_MAX} keys per change"])
    allowed = entity.keys
    for raw_key, raw in changes.items():
        key = str(raw_key).strip()
        if key not in ALL_KEYS:
            errors.append(f"unknown quota key '{key[:60]}': use one of {', '.join(ALL_KEYS)}")
            continue
        if key not in allowed:
            what = "an IP" if IP in entity.types else "a user or client id"
            errors.append(f"{key} does not apply to {what}: {entity.name} takes {', '.join(allowed)}")
            continue
        if raw is None:
            out[key] = None
            continue
        value, problem = _number(key, raw)
        if problem:
            errors.append(problem)
            continue
        assert value is not None
        kind = allowed[key]
        if value <= 0:
            errors.append(f"{key} must be greater than 0 (remove the key for no limit), not {raw}")
        elif kind != DOUBLE and abs(math.fmod(value, 1.0)) > 1e-6:
            errors.append(f"{key} must be a whole number ({UNITS[key]}), not {raw}")
        elif kind != DOUBLE and value > _LIMITS[kind]:
            errors.append(f"{key} is too large: at most {_LIMITS[kind]}")
        else:
            out[key] = value
    if errors:
        raise QuotaInvalid(errors)
    return out


def show_value(key: str, value: float | None) -> str:
    """A quota value as the pages show it: whole numbers without ``.0``; None: not set."""
    if value is None:
        return "—"
    if ALL_KEYS.get(key) != DOUBLE or float(value).is_integer():
        return str(int(value)) if float(value).is_integer() else repr(value)
    return repr(value)


def human_value(key: str, value: float | None) -> str:
    """A quota value as people read it: byte rates in binary units per second, others with their unit."""
    if value is None:
        return "not set"
    if key in ("producer_byte_rate", "consumer_byte_rate"):
        return f"{human_bytes(value)}/s"
    number = human_count(int(value)) if float(value).is_integer() else human_count(value)
    return f"{number} {UNITS.get(key, '')}".strip()


@dataclass(frozen=True)
class QuotaDiff:
    """One key of an alteration: now -> after (None: not set)."""

    key: str
    before: float | None
    after: float | None

    @property
    def op(self) -> str:
        if self.after is None:
            return "remove"
        return "set" if self.before is None else "change"

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def before_text(self) -> str:
        return show_value(self.key, self.before)

    @property
    def after_text(self) -> str:
        return show_value(self.key, self.after)

    @property
    def unit(self) -> str:
        return UNITS.get(self.key, "")

    @property
    def before_human(self) -> str:
        return human_value(self.key, self.before)

    @property
    def after_human(self) -> str:
        return human_value(self.key, self.after)


def diff(current: Mapping[str, float] | None, changes: Mapping[str, float | None]) -> list[QuotaDiff]:
    """Each key asked about, before -> after (``current`` None: unknown, shown as not set)."""
    now = dict(current or {})
    return [QuotaDiff(key, now.get(key), value) for key, value in changes.items()]


def applied(current: Mapping[str, float], changes: Mapping[str, float | None]) -> dict[str, float]:
    """The entity's quotas after the change (as Kafka applies it)."""
    out = dict(current)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


# -- the quota that applies --------------------------------------------------------------------


def levels(user: str, client_id: str) -> list[Entity]:
    """The 8 entities Kafka looks at for a user + client id, most specific first."""
    u, c = user, client_id
    return [
        Entity(((USER, u), (CLIENT_ID, c))),  # /config/users/<user>/clients/<client-id>
        Entity(((USER, u), (CLIENT_ID, None))),  # /config/users/<user>/clients/<default>
        Entity(((USER, u),)),  # /config/users/<user>
        Entity(((USER, None), (CLIENT_ID, c))),  # /config/users/<default>/clients/<client-id>
        Entity(((USER, None), (CLIENT_ID, None))),  # /config/users/<default>/clients/<default>
        Entity(((USER, None),)),  # /config/users/<default>
        Entity(((CLIENT_ID, c),)),  # /config/clients/<client-id>
        Entity(((CLIENT_ID, None),)),  # /config/clients/<default>
    ]


@dataclass(frozen=True)
class Effective:
    """The quota of one key that applies: its value and the entity (level 1-8) that sets it;
    ``value`` None: no level sets it, the client is not limited by it."""

    key: str
    value: float | None
    source: Entity | None
    level: int | None

    @property
    def value_text(self) -> str:
        return "unlimited" if self.value is None else show_value(self.key, self.value)

    @property
    def human(self) -> str:
        return "unlimited" if self.value is None else human_value(self.key, self.value)

    @property
    def unit(self) -> str:
        return UNITS.get(self.key, "")


def effective(quotas: Mapping[Entity, Mapping[str, float]], user: str, client_id: str) -> list[Effective]:
    """Per key, the quota Kafka applies to ``user`` connecting with ``client_id``: each key is resolved
    on its own (one quota manager per key), from the first of the 8 levels that sets it."""
    order = levels(user, client_id)
    out = []
    for key in CLIENT_KEYS:
        found = next(((i, e) for i, e in enumerate(order, 1) if key in quotas.get(e, {})), None)
        if found is None:
            out.append(Effective(key, None, None, None))
        else:
            i, e = found
            out.append(Effective(key, quotas[e][key], e, i))
    return out


def effective_ip(quotas: Mapping[Entity, Mapping[str, float]], ip: str) -> Effective:
    """The connection creation rate Kafka applies to ``ip``: its own, else the IP default's."""
    key = "connection_creation_rate"
    for level, e in enumerate((Entity(((IP, ip),)), Entity(((IP, None),))), 1):
        if key in quotas.get(e, {}):
            return Effective(key, quotas[e][key], e, level)
    return Effective(key, None, None, None)


def check_user_client(user: str, client_id: str) -> None:
    """The names an effective-quota lookup takes (a client id may be empty: a client that sends none)."""
    errors = [p for p in (_check_name(USER, user) if user else "name the user",) if p]
    if client_id:
        problem = _check_name(CLIENT_ID, client_id)
        if problem:
            errors.append(problem)
    if user == DEFAULT or client_id == DEFAULT:
        errors.append(f"ask for a real user and client id, not {DEFAULT}")
    if errors:
        raise QuotaInvalid(errors)


def check_ip(ip: str) -> None:
    if not ip:
        raise QuotaInvalid(["name the IP address"])
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        raise QuotaInvalid([f"'{ip[:80]}' is not an IP address"]) from None


_KIND_INDEX = {USER: 0, CLIENT_ID: 2, IP: 3}


def kind_of(parts: Parts) -> str:
    """An entity's kind from its parts in path order (the only pair Kafka allows is user + client id)."""
    return "user+client-id" if len(parts) == 2 else parts[0][0]


def sort_key(parts: Parts) -> tuple:
    """The list's order: by kind (users, users and client ids, client ids, IPs), defaults first, then
    by name. Cheap on purpose: it runs once per entity of a 100,000-entity list."""
    if len(parts) == 1:
        t, n = parts[0]
        return (_KIND_INDEX.get(t, 9), n is not None, n or "", False, "")
    (_, n1), (_, n2) = parts[0], parts[1]
    return (1, n1 is not None, n1 or "", n2 is not None, n2 or "")


def group(entries: Iterable[tuple[Entity, Mapping[str, float]]]) -> list[tuple[str, str, list]]:
    """Entities grouped by kind (users, users and client ids, client ids, IPs), each sorted by name
    with the defaults first: ``[(kind, label, [(entity, values)])]`` of the kinds present."""
    out: list[tuple[str, str, list]] = []
    for entity, values in sorted(entries, key=lambda r: sort_key(r[0].parts)):
        kind = kind_of(entity.parts)
        if not out or out[-1][0] != kind:
            out.append((kind, KIND_LABELS[kind], []))
        out[-1][2].append((entity, values))
    return out
