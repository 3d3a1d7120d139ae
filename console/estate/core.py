"""The estate as code, pure: the YAML document (write and read it, with every problem named by its
line) and which topics and ACL bindings belong to a namespace. No I/O: plan.py diffs a file against
the live state reads.py brings, apply.py runs a plan; the text is
read by the console's one bounded YAML reader (console/uploads.py: size, depth, no anchors).

The document (``kind: KafkaEstate``, ``version: 1``)::

    kind: KafkaEstate
    version: 1
    cluster: prod
    namespace: team-a.        # a topic-name prefix; "" = the whole cluster
    topics:
    - name: team-a.orders
      partitions: 6
      replication_factor: 3
      configs:                # the topic's overrides only (Kafka's DYNAMIC_TOPIC_CONFIG source)
        retention.ms: '86400000'
    acls:
    - {resource_type: TOPIC, resource_name: team-a., pattern_type: PREFIXED, principal: User:app,
       host: '*', operation: READ, permission: ALLOW}

A namespace's ACLs are the bindings on a TOPIC or GROUP resource whose LITERAL name starts with the
namespace, or whose PREFIXED pattern starts with it (a pattern inside the namespace); a wildcard
``*`` or a shorter prefix that also covers other teams' names is not the namespace's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from console import uploads
from console.acls import core as acl_core
from console.kafka import AclBinding

KIND, VERSION = "KafkaEstate", 1
TOP_KEYS = ("kind", "version", "cluster", "namespace", "topics", "acls")
TOPIC_KEYS = ("name", "partitions", "replication_factor", "configs")
ACL_KEYS = ("resource_type", "resource_name", "pattern_type", "principal", "host", "operation", "permission")
NAMESPACED_TYPES = ("TOPIC", "GROUP")
MAX_ERRORS = 50
_DUMPER = getattr(
    yaml, "CSafeDumper", yaml.SafeDumper
)  # libyaml's emitter when installed  # a badly broken file lists its first problems, not thousands


class EstateParseError(ValueError):
    """The file is not a valid estate document; ``errors`` says where and why (line numbers)."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors[:MAX_ERRORS]


@dataclass(frozen=True)
class TopicState:
    """A topic as the estate describes it: counts and its overridden configs only."""

    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict, hash=False)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "partitions": self.partitions,
            "replication_factor": self.replication_factor,
        }
        if self.configs:
            out["configs"] = dict(sorted(self.configs.items()))
        return out


@dataclass(frozen=True)
class Estate:
    """A cluster's or a namespace's desired (or live) state."""

    cluster: str
    namespace: str
    topics: tuple[TopicState, ...]
    acls: tuple[AclBinding, ...]


# -- scope ------------------------------------------------------------------------------------------


def is_internal(name: str) -> bool:
    """Kafka's own topics are never part of an estate."""
    return name.startswith("__")


def topic_in_scope(name: str, namespace: str) -> bool:
    return name.startswith(namespace) and not is_internal(name)


def acl_in_scope(b: AclBinding, namespace: str) -> bool:
    """Whether a binding is the namespace's own (see the module's docstring); all are, for the cluster."""
    if not namespace:
        return True
    return b.resource_type in NAMESPACED_TYPES and b.resource_name.startswith(namespace)


def acl_key(b: AclBinding) -> tuple[str, ...]:
    return (b.resource_type, b.pattern_type, b.resource_name, b.principal, b.host, b.operation, b.permission)


# -- writing ----------------------------------------------------------------------------------------


def document(estate: Estate) -> dict[str, Any]:
    """The document as plain data, in its stable order (topics by name, configs by key, ACLs by
    resource then principal): the JSON export, and what ``dump`` writes."""
    return {
        "kind": KIND,
        "version": VERSION,
        "cluster": estate.cluster,
        "namespace": estate.namespace,
        "topics": [t.as_dict() for t in sorted(estate.topics, key=lambda t: t.name)],
        "acls": [acl_core.to_dict(b) for b in sorted(estate.acls, key=acl_key)],
    }


def _yaml(data: Any, **style: Any) -> str:
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, **style)


def dump(estate: Estate) -> str:
    """The YAML document: block style for topics and one line per ACL binding, so a Git diff shows
    one line per change."""
    doc = document(estate)
    head = _yaml({k: doc[k] for k in ("kind", "version", "cluster", "namespace")})
    body = _yaml({"topics": doc["topics"]}, default_flow_style=False) if doc["topics"] else "topics: []\n"
    lines = ["- " + _yaml(a, default_flow_style=True, width=10_000).strip() + "\n" for a in doc["acls"]]
    return head + body + ("acls:\n" + "".join(lines) if lines else "acls: []\n")


# -- reading ----------------------------------------------------------------------------------------


class _Mapping(dict):
    """A YAML mapping that remembers its line and the line of each of its keys."""

    line = 0
    key_lines: dict[Any, int]


class _Invalid(Exception):
    """A value the document cannot hold, at a line (raised while the nodes are read)."""

    def __init__(self, node: yaml.Node, text: str):
        super().__init__(f"line {node.start_mark.line + 1}, column {node.start_mark.column + 1}: {text}")


def _value(node: yaml.Node) -> Any:
    """A node as plain data; a mapping remembers its keys' lines and refuses a key given twice."""
    if isinstance(node, yaml.SequenceNode):
        return [_value(n) for n in node.value]
    if isinstance(node, yaml.MappingNode):
        out = _Mapping()
        out.line, out.key_lines = node.start_mark.line + 1, {}
        for key_node, value_node in node.value:
            key = _value(key_node)
            if not isinstance(key, (str, int, float, bool)):
                raise _Invalid(key_node, "a key must be a plain name")
            if key in out:
                raise _Invalid(
                    key_node, f"'{str(key)[:80]}' is given twice (first on line {out.key_lines[key]})"
                )
            out[key], out.key_lines[key] = _value(value_node), key_node.start_mark.line + 1
        return out
    try:
        return SafeConstructor().construct_object(node)
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        raise _Invalid(node, f"a value cannot be read: {str(exc)[:120]}") from None


def _load(text: str) -> Any:
    """The text through the console's bounded YAML reader (console/uploads.py: size, depth, no
    anchors or aliases), then read node by node with each key's line."""
    try:
        node = uploads.compose_yaml(text)
        return None if node is None else _value(node)
    except uploads.UploadError as exc:
        raise EstateParseError(
            [f"line {exc.line}, column {exc.column}: not valid YAML: {exc.message}"]
        ) from None
    except _Invalid as exc:
        raise EstateParseError([f"{exc}"]) from None


def _at(m: _Mapping, key: Any = None) -> str:
    return f"line {m.key_lines.get(key, m.line) if key is not None else m.line}"


def _unknown(m: _Mapping, allowed: Iterable[str], what: str, errors: list[str]) -> None:
    for key in m:
        if key not in allowed:
            errors.append(
                f"{_at(m, key)}: unknown key '{str(key)[:80]}' in {what} (allowed: {', '.join(allowed)})"
            )


def _whole(m: _Mapping, key: str, what: str, errors: list[str]) -> int:
    value = m.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        errors.append(f"{_at(m, key)}: {what} {key} must be a whole number of at least 1, not {value!r:.80}")
        return 0
    return value


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _topic(m: Any, index: int, namespace: str, errors: list[str]) -> TopicState | None:
    if not isinstance(m, _Mapping):
        errors.append(
            f"topics[{index}]: each topic must be a mapping with name, partitions, replication_factor"
        )
        return None
    _unknown(m, TOPIC_KEYS, "a topic", errors)
    name = m.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.append(f"{_at(m)}: topics[{index}] needs a name")
        return None
    what = f"topic '{name[:120]}'"
    if is_internal(name):
        errors.append(
            f"{_at(m, 'name')}: {what} is one of Kafka's internal topics; an estate never holds them"
        )
    elif not name.startswith(namespace):
        errors.append(f"{_at(m, 'name')}: {what} is outside the namespace '{namespace}'")
    partitions = _whole(m, "partitions", what, errors)
    rf = _whole(m, "replication_factor", what, errors)
    raw = m.get("configs") or {}
    configs: dict[str, str] = {}
    if not isinstance(raw, Mapping):
        errors.append(f"{_at(m, 'configs')}: {what} configs must be a mapping of names to values")
    else:
        for key, value in raw.items():
            text = _scalar(value)
            if not isinstance(key, str) or text is None:
                errors.append(f"{_at(raw, key)}: {what} config '{str(key)[:80]}' needs a plain value")
            else:
                configs[key] = text
    return TopicState(name, partitions, rf, configs)


def _acl(m: Any, index: int, namespace: str, errors: list[str]) -> AclBinding | None:
    if not isinstance(m, _Mapping):
        errors.append(f"acls[{index}]: each ACL binding must be a mapping of {', '.join(ACL_KEYS)}")
        return None
    _unknown(m, ACL_KEYS, "an ACL binding", errors)
    missing = [k for k in ("resource_type", "resource_name", "principal", "operation") if k not in m]
    if missing:
        errors.append(f"{_at(m)}: acls[{index}] needs {', '.join(missing)}")
        return None
    binding, problems = acl_core.validate_binding({k: v for k, v in m.items() if k in ACL_KEYS})
    errors += [f"{_at(m)}: acls[{index}]: {p}" for p in problems]
    if binding is not None and not acl_in_scope(binding, namespace):
        errors.append(
            f"{_at(m)}: acls[{index}] ({acl_core.label(binding)}) is outside the namespace '{namespace}': a "
            "namespace holds TOPIC and GROUP bindings whose literal name or prefix starts with it"
        )
    return binding


def _items(doc: _Mapping, key: str, errors: list[str]) -> list:
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        errors.append(f"{_at(doc, key)}: {key} must be a list")
        return []
    return value


def parse(text: str) -> Estate:
    """The document as an Estate; EstateParseError names every problem found, with its line."""
    doc = _load(text)
    if not isinstance(doc, _Mapping):
        raise EstateParseError(
            [f"the file must be a mapping starting with kind: {KIND} and version: {VERSION}"]
        )
    errors: list[str] = []
    _unknown(doc, TOP_KEYS, "the document", errors)
    if doc.get("kind") != KIND:
        errors.append(f"{_at(doc, 'kind')}: kind must be {KIND}")
    if doc.get("version") != VERSION:
        errors.append(
            f"{_at(doc, 'version')}: version must be {VERSION} (the only version this console reads)"
        )
    namespace = doc.get("namespace") or ""
    if not isinstance(namespace, str):
        errors.append(f"{_at(doc, 'namespace')}: namespace must be a topic-name prefix (or empty)")
        namespace = ""
    cluster = doc.get("cluster") or ""
    if not isinstance(cluster, str):
        errors.append(f"{_at(doc, 'cluster')}: cluster must be a name")
        cluster = ""
    topics: dict[str, TopicState] = {}
    for i, item in enumerate(_items(doc, "topics", errors)):
        t = _topic(item, i, namespace, errors)
        if t is not None and t.name in topics:
            errors.append(f"{_at(item, 'name')}: topic '{t.name[:120]}' is listed twice")
        elif t is not None:
            topics[t.name] = t
    acls: dict[AclBinding, None] = {}
    for i, item in enumerate(_items(doc, "acls", errors)):
        b = _acl(item, i, namespace, errors)
        if b is not None and b in acls:
            errors.append(f"{_at(item)}: acls[{i}] ({acl_core.label(b)}) is listed twice")
        elif b is not None:
            acls[b] = None
    if errors:
        raise EstateParseError(errors)
    return Estate(cluster, namespace, tuple(topics.values()), tuple(acls))
