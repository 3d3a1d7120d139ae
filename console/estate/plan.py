"""The plan, pure: a file's estate against the live one, per resource (create / alter / delete / kept
/ refused), as the exact payload an approved change runs, the rows people review, and the drift pin
(the live state of every resource the plan changes, compared again before the run).

What Kafka cannot do is refused here, before anything is asked: fewer partitions (Kafka only adds
them) and a replication-factor change (a reassignment moves replicas; the plan does not)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from console.acls import core as acl_core
from console.estate.core import Estate, TopicState, acl_in_scope, acl_key, topic_in_scope
from console.kafka import AclBinding

COLUMNS = ["resource", "change", "before", "after"]
CREATE, ALTER, DELETE, KEPT, REFUSED = "create", "alter", "delete", "not in file, kept", "refused"
NOT_SET = "not set (default)"


@dataclass
class Plan:
    """The diff of a file against the cluster: the payload to run, its rows, what cannot be done."""

    payload: dict[str, Any]
    rows: list[list[str]]
    refused: list[str] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)  # resource -> Kafka's validate-only refusal
    pinned: list[list[Any]] = field(default_factory=list)  # the drift pin (``pin``) when it was planned

    @property
    def changes(self) -> int:
        return sum(len(self.payload[k]) for k in CHANGE_KEYS)

    @property
    def drift(self) -> bool:
        """Whether the cluster differs from the file at all (kept and refused resources included)."""
        return bool(self.rows)

    @property
    def ok(self) -> bool:
        return not self.refused and not self.answers

    def checked_rows(self) -> list[list[str]]:
        """The rows with Kafka's validate-only answer for each topic change."""
        return [row + [self.answers.get(row[0], _answer(row))] for row in self.rows]


CHECKED_COLUMNS = [*COLUMNS, "Kafka's validate-only answer"]


def _answer(row: list[str]) -> str:
    return "valid" if row[1] in (CREATE, ALTER) and row[0].startswith("topic:") else ""


CHANGE_KEYS = ("create_topics", "partitions", "configs", "create_acls", "delete_acls", "delete_topics")


def _shape(t: Mapping[str, Any]) -> str:
    configs = ", ".join(f"{k}={v}" for k, v in sorted((t.get("configs") or {}).items())) or "no overrides"
    return f"{t['partitions']} partitions, RF {t['replication_factor']}; {configs}"


def topic_target(name: str) -> str:
    return f"topic:{name}"


def acl_target(b: Mapping[str, Any]) -> str:
    return f"acl:{acl_core.label(binding(b))}"


def binding(d: Mapping[str, Any]) -> AclBinding:
    return AclBinding(**{k: d[k] for k in ("resource_type", "resource_name", "pattern_type", "principal",
                                           "host", "operation", "permission")})  # fmt: skip


def _config_change(want: TopicState, have: TopicState) -> dict[str, Any] | None:
    set_ = {k: v for k, v in sorted(want.configs.items()) if have.configs.get(k) != v}
    delete = sorted(k for k in have.configs if k not in want.configs)
    if not set_ and not delete:
        return None
    before = {k: have.configs[k] for k in sorted(set(set_) | set(delete)) if k in have.configs}
    return {"topic": want.name, "set": set_, "delete": delete, "before": before}


def diff(want: Estate, live: Estate, *, cluster: str, delete: bool) -> Plan:
    """The plan of ``want`` (the file) against ``live`` (the cluster, the same namespace)."""
    have = {t.name: t for t in live.topics if topic_in_scope(t.name, want.namespace)}
    payload: dict[str, Any] = {"cluster": cluster, "namespace": want.namespace, "delete": delete}
    payload.update({k: [] for k in CHANGE_KEYS}, kept=[])
    refused: list[str] = []
    refusal_rows: list[list[str]] = []
    for t in sorted(want.topics, key=lambda t: t.name):
        now = have.get(t.name)
        if now is None:
            payload["create_topics"].append(t.as_dict())
            continue
        target = topic_target(t.name)
        if t.partitions < now.partitions:
            why = f"{t.name}: Kafka cannot remove partitions ({now.partitions} -> {t.partitions})"
            refused.append(why)
            refusal_rows.append([target, REFUSED, f"{now.partitions} partitions", why])
        elif t.partitions > now.partitions:
            payload["partitions"].append({"topic": t.name, "from": now.partitions, "to": t.partitions})
        if t.replication_factor != now.replication_factor:
            why = (
                f"{t.name}: the replication factor changes from {now.replication_factor} to "
                f"{t.replication_factor}; change it with a reassignment, not the estate"
            )
            refused.append(why)
            refusal_rows.append([target, REFUSED, f"RF {now.replication_factor}", why])
        change = _config_change(t, now)
        if change is not None:
            payload["configs"].append(change)
    listed = {t.name for t in want.topics}
    for name in sorted(set(have) - listed):
        payload["delete_topics" if delete else "kept"].append(
            {"topic": name, "partitions": have[name].partitions}
        )
    want_acls = set(want.acls)
    live_acls = {b for b in live.acls if acl_in_scope(b, want.namespace)}
    payload["create_acls"] = [acl_core.to_dict(b) for b in sorted(want_acls - live_acls, key=acl_key)]
    gone = [acl_core.to_dict(b) for b in sorted(live_acls - want_acls, key=acl_key)]
    if delete:
        payload["delete_acls"] = gone
    else:
        payload["kept"] += [{"acl": b} for b in gone]
    return Plan(payload, refusal_rows + rows(payload), refused)


def rows(payload: Mapping[str, Any]) -> list[list[str]]:
    """The review's rows, from the payload alone (the approver's table; the same again at approval)."""
    out = [[topic_target(t["name"]), CREATE, "does not exist", _shape(t)] for t in payload["create_topics"]]
    out += [
        [topic_target(p["topic"]), ALTER, f"{p['from']} partitions", f"{p['to']} partitions"]
        for p in payload["partitions"]
    ]
    for c in payload["configs"]:
        for key in sorted(set(c["set"]) | set(c["delete"])):
            before = f"{key}={c['before'][key]}" if key in c["before"] else f"{key} {NOT_SET}"
            after = f"{key}={c['set'][key]}" if key in c["set"] else f"{key} {NOT_SET}"
            out.append([topic_target(c["topic"]), ALTER, before, after])
    out += [[acl_target(b), CREATE, "absent", "present"] for b in payload["create_acls"]]
    out += [[acl_target(b), DELETE, "present", "absent"] for b in payload["delete_acls"]]
    out += [
        [topic_target(d["topic"]), DELETE, f"{d['partitions']} partitions", "deleted"]
        for d in payload["delete_topics"]
    ]
    for k in payload["kept"]:
        label = topic_target(k["topic"]) if "topic" in k else acl_target(k["acl"])
        out.append([label, KEPT, "present", "present (deletions were not asked for)"])
    return out


def planned_topics(payload: Mapping[str, Any]) -> list[str]:
    """The topics the plan changes (their live state is the drift pin)."""
    names = [t["name"] for t in payload["create_topics"]]
    names += [p["topic"] for p in payload["partitions"]] + [c["topic"] for c in payload["configs"]]
    names += [d["topic"] for d in payload["delete_topics"]]
    return sorted(set(names))


def pin(payload: Mapping[str, Any], live: Estate) -> list[list[Any]]:
    """The live state of every resource the plan changes: a topic's existence, counts and overrides,
    a binding's presence. When it differs at approval or run time the change goes back for review."""
    have = {t.name: t for t in live.topics}
    out: list[list[Any]] = []
    for name in planned_topics(payload):
        t = have.get(name)
        state = (
            [t.partitions, t.replication_factor, sorted([k, v] for k, v in t.configs.items())] if t else None
        )
        out.append([topic_target(name), state])
    present = set(live.acls)
    for b in payload["create_acls"] + payload["delete_acls"]:
        out.append([acl_target(b), binding(b) in present])
    return out
