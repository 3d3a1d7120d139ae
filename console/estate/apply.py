"""Running an approved estate plan: each resource change through its own area's action (topics,
configs, ACLs), so each is authorised as the author and audited as usual under the change's request
id. The steps run in a fixed order (create topics, add partitions, set configs, change ACLs, delete
topics); the first step with a failure stops the run, and the message says exactly what was applied
and what was not. Re-entered after an earlier attempt (``retry``), it converges: a topic that exists
already, partitions already there, a binding already absent or a topic already gone count as done."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import PermissionDenied

from console.acls import actions as acls
from console.acls import core as acl_core
from console.changes import gate
from console.changes.kinds import Indeterminate
from console.configs import actions as configs
from console.estate.plan import acl_target, binding, topic_target
from console.kafka import ConfigChange, KafkaOperationError
from console.topics import actions as topics
from console.topics import cache as metadata_cache
from console.topics import delete as topic_delete
from console.topics import policy as topic_policy
from console.topics.batch import TopicSpec

# The area kinds an approved plan runs (the estate's own review stands for theirs).
AREA_KINDS = ("topic.create", "topic.partitions", "config", "acl", "topic.delete")
SHOWN = 20  # names listed per part of the report; the rest are counted

Step = tuple[list[str], list[str]]  # (resources done, "resource: why" failures)


def _settle(outcomes, retry: bool, converged: str) -> Step:
    """Area outcomes as done / failed; Kafka that did not say (timeout) leaves it to the retry."""
    unknown = [o for o in outcomes if not o.ok and o.status == "unknown"]
    if unknown:
        raise Indeterminate("; ".join(f"{o.name}: {o.message or o.status}" for o in unknown[:SHOWN]))
    done = [topic_target(o.name) for o in outcomes if o.ok or (retry and o.status == converged)]
    bad = [
        f"{topic_target(o.name)}: {o.message or o.status}"
        for o in outcomes
        if topic_target(o.name) not in done
    ]
    return done, bad


def _create(actor, cluster, payload, kw, retry) -> Step:
    """In batches of the console policy's largest (the topics action refuses a larger one whole)."""
    specs = [
        TopicSpec(t["name"], t["partitions"], t["replication_factor"], None, dict(t.get("configs") or {}))
        for t in payload["create_topics"]
    ]
    size = topic_policy.rules_for(cluster).max_batch_size or len(specs)
    done, bad = [], []
    for i in range(0, len(specs), size):
        result = topics.create_topics(actor=actor, cluster=cluster, specs=specs[i : i + size], **kw)
        step = _settle(result.outcomes, retry, "already exists")
        done, bad = done + step[0], bad + step[1]
        if bad:
            break
    return done, bad


def _partitions(actor, cluster, payload, kw, retry) -> Step:
    done, bad = [], []
    for g in payload["partitions"]:
        if retry:
            meta = metadata_cache.get_snapshot(cluster, refresh=True).by_name.get(g["topic"])
            if meta is not None and len(meta.partitions) >= g["to"]:
                done.append(topic_target(g["topic"]))
                continue
        outcome = topics.add_partitions(
            actor=actor, cluster=cluster, topic=g["topic"], total_count=g["to"], **kw
        )
        step = _settle([outcome], False, "")
        done, bad = done + step[0], bad + step[1]
        if bad:
            break
    return done, bad


def _configs(actor, cluster, payload, kw, retry) -> Step:
    done, bad = [], []
    for c in payload["configs"]:
        changes = [ConfigChange(k, "SET", v) for k, v in c["set"].items()]
        changes += [ConfigChange(k, "DELETE") for k in c["delete"]]
        result = configs.alter_configs(
            actor=actor, cluster=cluster, resource=configs.topic_resource(c["topic"]), changes=changes, **kw
        )
        if result.ok:
            done.append(topic_target(c["topic"]))
            continue
        bad.append(
            f"{topic_target(c['topic'])}: {result.error.name}: {result.message or result.error.operator_text}"
        )
        break
    return done, bad


def _acls(actor, cluster, payload, kw, retry) -> Step:
    deletes = [binding(b) for b in payload["delete_acls"]]
    creates = [binding(b) for b in payload["create_acls"]]
    done, bad = [], []
    size = acl_core.BATCH_MAX
    for i in range(0, max(len(deletes), len(creates)), size):
        change = acls.change_acls(
            actor=actor, cluster=cluster, deletes=deletes[i : i + size], creates=creates[i : i + size], **kw
        )
        done += [acl_target(acl_core.to_dict(r.binding)) for r in change.results if r.ok]
        bad += [f"{acl_target(acl_core.to_dict(r.binding))}: {r.message}" for r in change.results if not r.ok]
        if bad:
            break
    return done, bad


def _delete(actor, cluster, payload, kw, retry) -> Step:
    names = [d["topic"] for d in payload["delete_topics"]]
    result = topic_delete.delete_topics(
        actor=actor, cluster=cluster, names=names, confirmation=topic_delete.delete_confirmation(names), **kw
    )
    return _settle(result.outcomes, retry, "does not exist")


STEPS: tuple[tuple[str, str, Callable[..., Step]], ...] = (
    ("create_topics", "create topics", _create),
    ("partitions", "add partitions", _partitions),
    ("configs", "set configs", _configs),
    ("acls", "change ACLs", _acls),
    ("delete_topics", "delete topics", _delete),
)


def _items(payload: Mapping[str, Any], key: str) -> list[str]:
    if key == "acls":
        return [acl_target(b) for b in payload["delete_acls"] + payload["create_acls"]]
    if key == "configs":
        return [topic_target(c["topic"]) for c in payload["configs"]]
    return [topic_target(t.get("name") or t.get("topic")) for t in payload[key]]


def _listed(what: str, items: list[str]) -> str:
    more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    return f"{what} ({len(items)}): {', '.join(items[:SHOWN])}{more}"


def run_plan(
    actor,
    cluster,
    payload,
    request_id: str,
    *,
    on_behalf_of: str = "",
    retry: bool = False,
    pinned: bool = False,
) -> tuple[bool, str]:
    """Run the plan's steps in order as ``actor``; stop at the first failure and say what was done."""
    kw = {"on_behalf_of": on_behalf_of, "request_id": request_id}
    applied: list[str] = []
    with gate.passed(*AREA_KINDS):
        for n, (key, label, step) in enumerate(STEPS):
            items = _items(payload, key)
            if not items:
                continue
            try:
                done, bad = step(actor, cluster, payload, kw, retry)
            except (KafkaOperationError, PermissionDenied, topic_policy.PolicyViolation, ValueError) as exc:
                text = (
                    f"Kafka: {exc.name}: {exc.operator_text}"
                    if isinstance(exc, KafkaOperationError)
                    else str(exc)
                )
                done, bad = [], [f"{label}: {text}"]
            applied += done
            if bad:
                owed = [i for i in items if i not in done]
                owed += [i for later, _, _ in STEPS[n + 1 :] for i in _items(payload, later)]
                parts = [f"stopped at '{label}'; failed: {'; '.join(bad[:SHOWN])}"]
                parts.append(_listed("applied", applied) if applied else "nothing was applied")
                parts.append(_listed("not applied", owed))
                return False, ". ".join(parts)
    return True, _listed("applied", applied) if applied else "nothing to apply"
