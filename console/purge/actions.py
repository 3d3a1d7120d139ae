"""Purging a topic's records (DeleteRecords, KIP-107), as ``kafka-delete-records.sh`` does.

Kafka authorises DeleteRecords as DELETE on the topic; the console asks ``topic.manage`` of the actor,
then change control (``records.purge``), then the typed confirmation (the topic's name), refuses
Kafka's internal topics, and plans the purge from what Kafka says now (``reads.plan_for``): an offset
past a partition's end or a partition the topic does not have is refused before Kafka is called, and
nothing is purged. Then "requested" is audited (with each partition's start before), DeleteRecords
goes to the leaders, the bounds are read again to confirm, and the outcome is audited with each
partition's start before and after and Kafka's answer per partition. A purge is never undone: the
records are gone for every reader.
"""

from __future__ import annotations

from dataclasses import dataclass

from console import access
from console.audit import outcomes
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.models import Cluster
from console.purge import audit_names, reads
from console.purge.core import Plan, Target
from console.purge.reads import PurgeInvalid

GATE = "records.purge"  # the policy kind (declared in held.py)


def confirmation_problem(topic: str, confirmation: str | None) -> str:
    if (confirmation or "").strip() != topic:
        return f"Type the topic name ('{topic}') to confirm the purge; nothing was purged."
    return ""


@dataclass(frozen=True)
class PurgeResult:
    """What a purge did: the plan it ran, each partition's start after (``after``) and Kafka's answer
    (``errors``: {partition: error}), ``confirmed``: re-reading shows every new start."""

    plan: Plan
    after: dict[int, int]
    errors: dict[int, KafkaOperationError]
    confirmed: bool
    event_id: int | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def message(self) -> str:
        if self.errors:
            return "; ".join(
                f"partition {p}: {e.name}: {e.operator_text}" for p, e in sorted(self.errors.items())
            )
        if not self.plan.offsets:
            return f"Nothing to purge on {self.plan.target.topic}: no partition's start moves."
        return f"Purged {self.plan.messages} record(s) of {self.plan.target.topic}."

    @property
    def after_rows(self) -> list[tuple[int, int, int | None]]:
        """(partition, start before, start now) of each planned partition."""
        return [(p.partition, p.start, self.after.get(p.partition)) for p in self.plan.partitions]

    def as_json(self) -> dict:
        return {
            **self.plan.as_json(),
            "dry_run": False,
            "ok": self.ok,
            "confirmed": self.confirmed,
            "message": self.message,
            "after": {str(p): s for p, s in sorted(self.after.items())},
            "errors": {str(p): e.as_json() for p, e in sorted(self.errors.items())},
        }


def _targets(kwargs) -> list[str]:
    target = kwargs.get("target")
    return [f"topic:{target.topic}"] if isinstance(target, Target) else []


def _key(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


@refused_as(audit_names.RECORDS_PURGE, PurgeInvalid, targets=_targets)
def purge_records(
    *,
    actor,
    cluster: Cluster,
    target: Target,
    confirmation: str | None,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> PurgeResult:
    """Purge ``target`` after the typed confirmation. Raises PurgeInvalid before anything reaches
    Kafka, KafkaOperationError when the topic's offsets cannot be read."""
    access.require(actor, cluster, access.MANAGE_TOPICS)
    gate.check(actor, cluster, GATE)
    topic = target.topic
    problem = confirmation_problem(topic, confirmation)
    if problem:
        raise PurgeInvalid([problem])
    reads.refuse_internal(cluster, topic)
    plan = reads.plan_for(cluster, target)
    if plan.problems:
        raise PurgeInvalid(list(plan.problems))
    asked = plan.offsets
    before = {_key(topic, p.partition): p.start for p in plan.partitions}
    params = {
        "topic": topic,
        "target": target.as_json(),
        "offsets": {str(p): o for p, o in asked.items()},
        "messages": plan.messages,
        "bytes_estimate": plan.bytes_estimate,
        "groups_below": plan.groups_below,
    }
    req = outcomes.requested(
        actor=actor,
        action=audit_names.RECORDS_PURGE,
        cluster=cluster,
        targets=[f"topic:{topic}"],
        params=params,
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    errors: dict[int, KafkaOperationError] = {}
    if asked:
        try:
            answers = gateway_for(cluster).delete_records(topic, asked)
        except KafkaOperationError as exc:
            answers = dict.fromkeys(asked, exc)
        errors = {p: a for p, a in answers.items() if isinstance(a, KafkaOperationError)}
    try:
        now = reads.bounds_of(cluster, topic)
        after = {p: now[p][0] for p in (x.partition for x in plan.partitions) if p in now}
    except KafkaOperationError:
        after = {}
    confirmed = all(after.get(p, -1) >= o for p, o in asked.items())
    for p in list(errors):  # Kafka answered late (or not at all) but the log start did move
        if errors[p].retriable and after.get(p, -1) >= asked[p]:
            del errors[p]
    result_outcomes = {}
    for p in plan.partitions:
        err = errors.get(p.partition)
        entry = outcomes.change_outcome(err, dry_run=False)
        entry.update(start_before=p.start, start_after=after.get(p.partition), new_start=p.new_start)
        result_outcomes[_key(topic, p.partition)] = entry
    event_id = outcomes.settle(
        req,
        targets=[f"topic:{topic}"],
        params=params,
        before=before,
        after={_key(topic, p): s for p, s in after.items()},
        outcomes=result_outcomes,
    )
    return PurgeResult(plan, after, errors, confirmed, event_id)


def _reread(cluster: Cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: each partition's log start now."""
    topic = params["topic"]
    return {_key(topic, p): b[0] for p, b in reads.bounds_of(cluster, topic).items()}


outcomes.register_reader(audit_names.RECORDS_PURGE, _reread)
