"""The console-side create-topic / alter-config policy (like Kafka's KIP-108 / KIP-133 policies).

A functional core: ``check_create``, ``check_alter``, ``check_delete`` take the rules and plain
values and return violations, each naming the rule it broke. ``rules_for(cluster)`` reads the
cluster's :class:`~console.models.TopicPolicy` (or the defaults). Services call ``enforce`` before
anything is sent to Kafka; the request workflow reuses the same checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ValidationError

from console import access, patterns
from console.audit import recorded
from console.audit.refusals import refused_as
from console.topics import audit_names, namespaces

# Kafka's own topic-name rules (org.apache.kafka.common.internals.Topic).
TOPIC_NAME_MAX_LENGTH = 249
_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")

# Defaults when a cluster has no TopicPolicy row; overridable from settings.
DEFAULT_MAX_PARTITIONS = settings.TOPIC_POLICY_MAX_PARTITIONS
DEFAULT_MAX_BATCH_SIZE = settings.TOPIC_POLICY_MAX_BATCH_SIZE


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``rule`` is a stable name (shown and audited), ``message`` says what to do."""

    rule: str
    message: str
    resource: str = ""

    def __str__(self) -> str:
        where = f"{self.resource}: " if self.resource else ""
        return f"{where}{self.message} [policy rule: {self.rule}]"


class PolicyViolation(Exception):
    """Raised by ``enforce`` when at least one rule is broken."""

    def __init__(self, violations: Iterable[Violation]) -> None:
        self.violations = tuple(violations)
        super().__init__("; ".join(str(v) for v in self.violations))


@dataclass(frozen=True)
class PolicyRules:
    """The limits of one cluster, as plain values (empty = unrestricted)."""

    max_partitions: int | None = DEFAULT_MAX_PARTITIONS
    allowed_replication_factors: tuple[int, ...] = ()
    allowed_config_keys: tuple[str, ...] = ()
    config_ranges: Mapping[str, Mapping] = field(default_factory=dict)
    name_pattern: str = ""
    protected_topics: tuple[str, ...] = ()
    max_batch_size: int | None = DEFAULT_MAX_BATCH_SIZE
    namespace_rules: Mapping[str, Mapping] = field(default_factory=dict)


def rules_for(cluster) -> PolicyRules:
    """The cluster's policy (its TopicPolicy row, or the defaults)."""
    from console.models import TopicPolicy

    row = TopicPolicy.objects.filter(cluster=cluster).first() if cluster is not None else None
    if row is None:
        return PolicyRules()
    return PolicyRules(
        max_partitions=row.max_partitions if row.max_partitions is not None else DEFAULT_MAX_PARTITIONS,
        allowed_replication_factors=tuple(int(x) for x in row.allowed_replication_factors or ()),
        allowed_config_keys=tuple(row.allowed_config_keys or ()),
        config_ranges=dict(row.config_ranges or {}),
        name_pattern=row.name_pattern or "",
        protected_topics=tuple(row.protected_topics or ()),
        max_batch_size=row.max_batch_size if row.max_batch_size is not None else DEFAULT_MAX_BATCH_SIZE,
        namespace_rules=dict(row.namespace_rules or {}),
    )


# -- namespaces: an admin's rules (what they ask of a new topic: ``topics/namespaces.py``) ----------


def namespace_rule_errors(rules_value: object) -> list[str]:
    """What is wrong with a namespace-rules document as an admin wrote it ([] when it is fine)."""
    if not isinstance(rules_value, Mapping):
        return ['Write {"<prefix>": {"required": ["key", ...], "defaults": {"key": "value"}}}.']
    errors = []
    for prefix, entry in rules_value.items():
        if not isinstance(prefix, str) or not prefix or topic_name_errors(prefix):
            errors.append(f"'{prefix}': a namespace is a topic-name prefix (a-z A-Z 0-9 . _ -).")
            continue
        if not isinstance(entry, Mapping) or set(entry) - {"required", "defaults"}:
            errors.append(f'\'{prefix}\': give only "required" (a list of keys) and "defaults" (key: value).')
            continue
        required, defaults = entry.get("required") or [], entry.get("defaults") or {}
        if not isinstance(required, list) or not all(isinstance(k, str) and k for k in required):
            errors.append(f"'{prefix}': \"required\" is a list of config keys.")
        if not isinstance(defaults, Mapping) or not all(
            isinstance(k, str) and k and isinstance(v, str | int | float) and not isinstance(v, bool)
            for k, v in defaults.items()
        ):
            errors.append(f"'{prefix}': \"defaults\" maps config keys to values (text or numbers).")
    return errors


# -- topic names ---------------------------------------------------------------------------------


def topic_name_errors(name: str) -> list[str]:
    """Kafka's rules for a topic name; an empty list when the name is legal."""
    if not name:
        return ["The topic name is empty."]
    if name in (".", ".."):
        return ["A topic cannot be named '.' or '..'."]
    errors = []
    if len(name) > TOPIC_NAME_MAX_LENGTH:
        errors.append(
            f"The topic name is {len(name)} characters long; at most {TOPIC_NAME_MAX_LENGTH} are allowed."
        )
    if not _LEGAL_NAME.fullmatch(name):
        bad = sorted({c for c in name if not _LEGAL_NAME.fullmatch(c)})
        shown = " ".join(repr(c) for c in bad[:10])
        errors.append(
            f"The topic name contains characters Kafka does not allow ({shown}); use a-z A-Z 0-9 . _ -"
        )
    return errors


def collision_key(name: str) -> str:
    """Kafka's metric names map '.' to '_', so two names equal after that mapping collide."""
    return name.replace(".", "_")


def collision_index(names: Iterable[str]) -> dict[str, list[str]]:
    """{collision key: names} of the existing topics, built once for a whole batch."""
    index: dict[str, list[str]] = {}
    for other in names:
        if "." in other or "_" in other:
            index.setdefault(collision_key(other), []).append(other)
    return index


def collision_warning(name: str, existing: Iterable[str] | Mapping[str, list[str]]) -> str:
    """A warning when ``name`` differs from an existing topic only by '.' versus '_'.

    ``existing`` is the existing names or, for a batch, their ``collision_index``.
    """
    if "." not in name and "_" not in name:
        return ""
    index = existing if isinstance(existing, Mapping) else collision_index(existing)
    for other in index.get(collision_key(name), ()):
        if other != name:
            return collision_text(name, other)
    return ""


def collision_text(name: str, other: str) -> str:
    """What the operator reads when ``name`` collides with the existing topic ``other``."""
    return (
        f"'{name}' collides with the existing topic '{other}': Kafka refuses a name that equals an existing "
        "one once '.' and '_' are treated alike (they map to the same metric name). Pick another name."
    )


# Kafka's (KRaft ReplicationControlManager) refusal: "Topic 'a_b' collides with existing topic: a.b"
_KAFKA_COLLISION = re.compile(r"Topic '(?P<name>[^']*)' collides with existing topics?: (?P<other>[^\s,]+)")


def kafka_collision(message: str) -> tuple[str, str] | None:
    """(name, existing topic) when Kafka refused a create because of a '.'/'_' collision, else None."""
    found = _KAFKA_COLLISION.search(message or "")
    return (found["name"], found["other"]) if found else None


# -- checks --------------------------------------------------------------------------------------


def _number(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def check_config(rules: PolicyRules, key: str, value: str | None, resource: str = "") -> list[Violation]:
    """Allowed keys and value ranges for one config being set (None = being deleted)."""
    out = []
    if rules.allowed_config_keys and key not in rules.allowed_config_keys:
        out.append(
            Violation(
                "allowed_config_keys",
                f"The config '{key}' may not be set on this cluster (allowed: {', '.join(rules.allowed_config_keys)}).",
                resource,
            )
        )
    bounds = rules.config_ranges.get(key)
    if bounds and value is not None:
        choices = bounds.get("choices")
        if choices and value not in [str(c) for c in choices]:
            out.append(
                Violation(
                    "config_ranges",
                    f"'{key}={value}' is not one of the allowed values ({', '.join(str(c) for c in choices)}).",
                    resource,
                )
            )
        low, high = bounds.get("min"), bounds.get("max")
        if low is not None or high is not None:
            number = _number(value)
            if number is None:
                out.append(Violation("config_ranges", f"'{key}' must be a number, not '{value}'.", resource))
            elif (low is not None and number < float(low)) or (high is not None and number > float(high)):
                span = f"{low if low is not None else '-∞'} … {high if high is not None else '∞'}"
                out.append(
                    Violation(
                        "config_ranges", f"'{key}={value}' is outside the allowed range {span}.", resource
                    )
                )
    return out


def check_create(
    rules: PolicyRules,
    *,
    name: str,
    partitions: int,
    replication_factor: int,
    configs: Mapping[str, str | None] | None = None,
    broker_count: int | None = None,
) -> list[Violation]:
    """Every rule a new topic must pass: Kafka's name rules, naming pattern, counts, configs, and the
    keys its namespaces require (``configs``: what it is created with, namespace defaults included)."""
    out = [Violation("topic_name", msg, name) for msg in topic_name_errors(name)]
    if rules.name_pattern:
        try:
            if not patterns.fullmatch(rules.name_pattern, name):
                out.append(
                    Violation(
                        "name_pattern", f"The name must match the pattern '{rules.name_pattern}'.", name
                    )
                )
        except patterns.PatternError as exc:
            out.append(
                Violation(
                    "name_pattern",
                    f"This cluster's naming pattern '{rules.name_pattern}' is not valid ({exc}); an admin must fix it.",
                    name,
                )
            )
    if partitions != -1 and partitions < 1:
        out.append(
            Violation("partitions", f"The partition count must be at least 1, not {partitions}.", name)
        )
    elif rules.max_partitions is not None and partitions > rules.max_partitions:
        out.append(
            Violation(
                "max_partitions",
                f"{partitions} partitions exceed this cluster's limit of {rules.max_partitions}.",
                name,
            )
        )
    if replication_factor != -1 and replication_factor < 1:
        out.append(
            Violation(
                "replication_factor",
                f"The replication factor must be at least 1, not {replication_factor}.",
                name,
            )
        )
    else:
        if broker_count is not None and replication_factor > broker_count:
            out.append(
                Violation(
                    "replication_factor",
                    f"The replication factor {replication_factor} is larger than the {broker_count} live brokers.",
                    name,
                )
            )
        if rules.allowed_replication_factors and replication_factor not in rules.allowed_replication_factors:
            allowed = ", ".join(str(r) for r in rules.allowed_replication_factors)
            shown = "the broker default" if replication_factor == -1 else str(replication_factor)
            out.append(
                Violation(
                    "allowed_replication_factors",
                    f"Replication factor {shown} is not allowed here (allowed: {allowed}).",
                    name,
                )
            )
    for key, value in (configs or {}).items():
        out.extend(check_config(rules, key, value, name))
    for key, prefix in namespaces.settings(rules.namespace_rules, name).required.items():
        if (configs or {}).get(key) in (None, ""):
            out.append(
                Violation("namespace_required", f"Topics in namespace '{prefix}' must set {key}.", name)
            )
    return out


def count_problem(text: str) -> str:
    """What is wrong with a partition count or replication factor a person typed ("" when it is fine):
    the page's form and the command line take a whole number of at least 1; leaving it out means the
    broker default (-1 is how Kafka's protocol says that, never how a person does)."""
    try:
        if int(text) >= 1:
            return ""
    except ValueError:
        pass
    return f"must be a whole number of at least 1 (leave it out for the broker default), not {text!r}"


def check_assignment(
    assignment: list[list[int]],
    broker_ids: Iterable[int] | None,
    name: str = "",
    down: Iterable[int] = (),
) -> list[Violation]:
    """An explicit replica assignment: same replica count everywhere, distinct, known brokers.
    ``down``: brokers the cluster is known to have (replica lists) that Metadata does not list now:
    named as not reachable rather than unknown."""
    out = []
    if not assignment:
        return [Violation("replica_assignment", "The assignment lists no partitions.", name)]
    sizes = {len(r) for r in assignment}
    if len(sizes) != 1:
        out.append(
            Violation("replica_assignment", "Every partition needs the same number of replicas.", name)
        )
    for i, replicas in enumerate(assignment):
        if not replicas:
            out.append(Violation("replica_assignment", f"Partition {i} has no replicas.", name))
        if len(set(replicas)) != len(replicas):
            out.append(Violation("replica_assignment", f"Partition {i} lists a broker twice.", name))
    if broker_ids is not None:
        known = set(broker_ids)
        missing = {b for r in assignment for b in r} - known
        stopped = sorted(missing & set(down))
        unknown = sorted(missing - set(stopped))
        if stopped:
            said = "; ".join(f"broker {b} is not reachable (down or fenced)" for b in stopped)
            out.append(
                Violation("replica_assignment", f"Replicas on a broker that is not running: {said}.", name)
            )
        if unknown:
            out.append(
                Violation("replica_assignment", f"Unknown broker ids: {', '.join(map(str, unknown))}.", name)
            )
    return out


def check_alter(
    rules: PolicyRules, *, resource: str, changes: Iterable[tuple[str, str, str | None]]
) -> list[Violation]:
    """Changes as ``(op, key, value)``; SET/APPEND/SUBTRACT values are range-checked, DELETE keys allowed-checked."""
    out = []
    for op, key, value in changes:
        out.extend(check_config(rules, key, value if op == "SET" else None, resource))
    return out


def is_internal(name: str, internal: bool = False) -> bool:
    """Kafka's own topics (``__consumer_offsets``, ``__transaction_state``, …): never changed here."""
    return internal or name.startswith("__")


def check_internal(name: str, internal: bool = False) -> list[Violation]:
    if not is_internal(name, internal):
        return []
    return [
        Violation("internal_topic", "It is an internal Kafka topic; the console does not change it.", name)
    ]


def protected_reason(rules: PolicyRules, name: str, internal: bool) -> str:
    """Why a topic may not be deleted from the console ("" when it may)."""
    if internal:
        return "it is an internal Kafka topic"
    for pattern in rules.protected_topics:
        try:
            if patterns.fullmatch(pattern, name):
                return (
                    f"it is protected on this cluster (matches '{pattern}') [policy rule: protected_topics]"
                )
        except patterns.PatternError:
            if pattern == name:
                return "it is protected on this cluster [policy rule: protected_topics]"
    return ""


def check_batch_size(rules: PolicyRules, count: int) -> list[Violation]:
    if rules.max_batch_size is not None and count > rules.max_batch_size:
        return [
            Violation(
                "max_batch_size", f"{count} topics in one batch exceed the limit of {rules.max_batch_size}."
            )
        ]
    return []


def enforce(violations: list[Violation]) -> None:
    """Raise PolicyViolation when there is anything to report."""
    if violations:
        raise PolicyViolation(violations)


# -- editing the policy --------------------------------------------------------------------------

POLICY_FIELDS = (
    "max_partitions",
    "allowed_replication_factors",
    "allowed_config_keys",
    "config_ranges",
    "name_pattern",
    "protected_topics",
    "max_batch_size",
    "namespace_rules",
)


@refused_as(audit_names.TOPIC_POLICY_UPDATE, ValidationError)
def update_topic_policy(*, actor, cluster, values: Mapping, source_ip: str | None = None):
    """Change the cluster's topic policy (cluster admins); audited with before and after."""
    from console.models import TopicPolicy

    access.require(actor, cluster, access.ADMINISTER)
    row = TopicPolicy.objects.filter(cluster=cluster).first() or TopicPolicy(cluster=cluster)
    return recorded.set_fields(
        row,
        values,
        POLICY_FIELDS,
        actor=actor,
        action=audit_names.TOPIC_POLICY_UPDATE,
        cluster=cluster,
        targets=[f"cluster:{cluster.name}"],
        clean=True,
        source_ip=source_ip,
    )
