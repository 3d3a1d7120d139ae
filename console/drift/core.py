"""Drift detection's pure part: a cluster's state as plain data, and the differences between two looks
that the console's own changes do not explain. No Django, no I/O.

A state is ``{"topics": {name: [partitions, replication_factor, {config: value}]}, "acls": {label:
binding}}``: each topic's partition count, replication factor (None while a reassignment moves one of
its partitions: Kafka lists the adding replicas then) and overridden configs, and every ACL binding
by its audit label, and every client quota by its entity (``user=alice``: ``{quota: value}``). ``acls``
or ``quotas`` is None when they could not be read (the previous look's are carried).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from console.quotas.core import QuotaInvalid, parse_entity

TOPIC = "topic"
TOPIC_CONFIG = "topic_config"
ACL = "acl"
QUOTA = "quota"
CREATED, DELETED, ALTERED = "created", "deleted", "altered"
NOTE = "not made through the console"

# What a console change may have changed of a resource (matched against the aspect that differs).
EXISTS, PARTITIONS, RF, CONFIGS = "exists", "partitions", "rf", "configs"
ALL_ASPECTS = frozenset({EXISTS, PARTITIONS, RF, CONFIGS})


@dataclass(frozen=True)
class Change:
    """One difference the console did not make."""

    resource_type: str
    resource: str
    change: str
    before: Any
    after: Any

    @property
    def target(self) -> str:
        """The resource as the console's own audit events name it (``topic:x``, ``acl:<label>``)."""
        return f"{TOPIC if self.resource_type == TOPIC_CONFIG else self.resource_type}:{self.resource}"

    def details(self) -> dict[str, Any]:
        return {
            "resource_type": self.resource_type,
            "resource": self.resource,
            "change": self.change,
            "before": self.before,
            "after": self.after,
            "note": NOTE,
        }


def topic_entry(partitions: int, rf: int | None, configs: Mapping[str, Any]) -> list:
    return [partitions, rf, dict(sorted(configs.items()))]


def carry_unknown(prev: Mapping[str, Any], cur: dict[str, Any]) -> dict[str, Any]:
    """``cur`` with what this look could not read taken from ``prev``: a moving topic's replication
    factor, a topic's configs that could not be described (None), the ACLs when unreadable."""
    prev_topics = prev.get("topics") or {}
    for name, entry in cur["topics"].items():
        old = prev_topics.get(name)
        if old is None:
            continue
        if entry[1] is None:
            entry[1] = old[1]
        if entry[2] is None:
            entry[2] = old[2]
    for kind in ("acls", "quotas"):
        if cur.get(kind) is None:
            cur[kind] = prev.get(kind)
    return cur


def _topic_shape(entry: list) -> dict[str, Any]:
    return {"partitions": entry[0], "replication_factor": entry[1]}


def _topic_whole(entry: list) -> dict[str, Any]:
    return {**_topic_shape(entry), "configs": entry[2] or {}}


def diff(
    prev: Mapping[str, Any], cur: Mapping[str, Any], touched: Mapping[str, frozenset[str]]
) -> list[Change]:
    """The changes from ``prev`` to ``cur`` that no console change explains. ``touched`` maps a target
    (``topic:x``, ``acl:<label>``) to the aspects the console's own changes touched since ``prev``."""
    out: list[Change] = []
    before_t, after_t = prev.get("topics") or {}, cur.get("topics") or {}
    for name in sorted(before_t.keys() | after_t.keys()):
        aspects = touched.get(f"{TOPIC}:{name}", frozenset())
        old, new = before_t.get(name), after_t.get(name)
        if old is None or new is None:
            if EXISTS not in aspects:
                change = CREATED if old is None else DELETED
                out.append(Change(TOPIC, name, change, old and _topic_whole(old), new and _topic_whole(new)))
            continue
        moved = {PARTITIONS} if old[0] != new[0] else set()
        if old[1] is not None and new[1] is not None and old[1] != new[1]:
            moved.add(RF)
        if moved - aspects:
            out.append(Change(TOPIC, name, ALTERED, _topic_shape(old), _topic_shape(new)))
        if (old[2] or {}) != (new[2] or {}) and CONFIGS not in aspects:
            out.append(Change(TOPIC_CONFIG, name, ALTERED, old[2] or {}, new[2] or {}))
    before_a, after_a = prev.get("acls"), cur.get("acls")
    if before_a is not None and after_a is not None:
        for label in sorted(before_a.keys() ^ after_a.keys()):
            if touched.get(f"{ACL}:{label}"):
                continue
            old, new = before_a.get(label), after_a.get(label)
            out.append(Change(ACL, label, CREATED if old is None else DELETED, old, new))
    before_q, after_q = prev.get("quotas"), cur.get("quotas")
    if before_q is not None and after_q is not None:
        for entity in sorted(before_q.keys() | after_q.keys()):
            old, new = before_q.get(entity), after_q.get(entity)
            if old != new and not touched.get(f"{QUOTA}:{entity}"):
                change = CREATED if old is None else DELETED if new is None else ALTERED
                out.append(Change(QUOTA, entity, change, old, new))
    return out


def quota_key(name: str) -> str:
    """A quota entity as the audit names it (``user=alice,client-id=<default>``) keyed as a look reads
    it (parts sorted by type name: ``client-id=<default>,user=alice``); a name that does not parse as
    it is (it then explains nothing)."""
    try:
        parts = parse_entity(name).parts
    except QuotaInvalid:
        return name
    return ",".join(f"{t}={'<default>' if n is None else n}" for t, n in sorted(parts, key=lambda p: p[0]))


def touched_by(events: Iterable[tuple[str, Iterable[str]]], aspects_of: Mapping[str, frozenset[str]]) -> dict:
    """``{target: aspects}`` from the console's own events, as ``(action, targets)`` pairs;
    ``aspects_of`` says what each action may change (an action it does not name changes nothing here).
    A target naming one config of a topic (``topic:<name>/<config>``, a reassignment's throttles) is
    the topic's: topic names never hold a ``/``."""
    out: dict[str, frozenset[str]] = {}
    for action, targets in events:
        aspects = aspects_of.get(action)
        if not aspects:
            continue
        for target in targets:
            if target.startswith(f"{TOPIC}:"):
                target = target.partition("/")[0]
            elif target.startswith(f"{QUOTA}:"):
                target = f"{QUOTA}:{quota_key(target[len(QUOTA) + 1 :])}"
            out[target] = out.get(target, frozenset()) | aspects
    return out


def _shape_text(value: Mapping[str, Any]) -> str:
    return f"{value.get('partitions')} partitions, RF {value.get('replication_factor')}"


def summary(details: Mapping[str, Any]) -> str:
    """One line for a page: what changed, from an external-change event's details."""
    kind, change = details.get("resource_type"), details.get("change")
    before, after = details.get("before") or {}, details.get("after") or {}
    if kind == TOPIC_CONFIG:
        keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        return "; ".join(f"{k}: {before.get(k, '(default)')} → {after.get(k, '(default)')}" for k in keys)
    if kind == TOPIC and change == ALTERED:
        return f"{_shape_text(before)} → {_shape_text(after)}"
    if kind == TOPIC:
        return f"{change} ({_shape_text(after if change == CREATED else before)})"
    if kind == QUOTA:
        keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        return "; ".join(f"{k}: {before.get(k, '(none)')} → {after.get(k, '(none)')}" for k in keys)
    return str(change)
