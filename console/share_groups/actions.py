"""Changing share groups as ``kafka-share-groups.sh --reset-offsets --execute``, ``--delete-offsets``
and ``--delete`` do: ``group.manage`` (as consumer groups), change control, the group id typed as the
confirmation, refused while the group has members (naming them: Kafka's rule, checked before Kafka is
asked), audit "requested" before Kafka is called and the outcome after, with the start offsets (or
whether the group exists) read again.

Kafka 4.1 answers AlterShareGroupOffsets with success but applies nothing (its broker hands the
coordinator an empty topic set; its ``kafka-share-groups.sh`` says "--reset-offsets option is not yet
implemented"): the reset's outcome is judged by the start offsets read back, so on 4.1 each partition
reads "not applied", never a success that did not happen.
"""

from __future__ import annotations

from dataclasses import dataclass

from console import access
from console.audit import outcomes
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, TopicPartition
from console.kafka import share_groups as kafka_share
from console.models import Cluster
from console.share_groups import audit_names, core, reads
from console.share_groups.reads import ShareInvalid

GATE_RESET = "share_group.reset"  # the policy kinds (declared in held.py)
GATE_DELETE = "share_group.delete"
NOT_APPLIED = (
    "Kafka accepted the request but the start offset did not move (Kafka 4.1 does not apply "
    "AlterShareGroupOffsets; its kafka-share-groups.sh says --reset-offsets is not yet implemented)."
)


def _targets(kwargs) -> list[str]:
    gid = kwargs.get("group_id")
    return [reads.target(gid)] if isinstance(gid, str) and gid else []


def _empty_group(cluster: Cluster, group_id: str, typed: str | None, what: str) -> reads.GroupDetail:
    """The group, checked: confirmation typed, the cluster supports share groups, the group exists and
    has no members. ShareInvalid before anything reaches Kafka's write APIs."""
    problem = core.confirmation_problem(group_id, typed, what)
    if problem:
        raise ShareInvalid([problem])
    reads.require_support(cluster)
    found = reads.raw_detail(cluster, group_id)
    if found is None:
        raise ShareInvalid([f"Share group '{group_id}' does not exist."])
    problem = core.members_problem(group_id, found.member_names, what)
    if problem:
        raise ShareInvalid([problem])
    return found


def preview_reset(*, actor, cluster: Cluster, group_id, spec: core.ResetSpec) -> tuple[core.ResetRow, ...]:
    """The reset's dry run: the rows it would set (current -> new, clamped), nothing sent."""
    access.require(actor, cluster, access.MANAGE_GROUPS)
    group_id = reads.checked(core.check_group_id, group_id)
    reads.require_support(cluster)
    found = reads.raw_detail(cluster, group_id)
    if found is None:
        raise ShareInvalid([f"Share group '{group_id}' does not exist."])
    return reads.plan(cluster, found, spec)


@dataclass(frozen=True)
class ResetResult:
    group_id: str
    rows: tuple[core.ResetRow, ...]
    errors: dict[TopicPartition, KafkaOperationError]  # Kafka's refusals per partition
    after: dict[TopicPartition, int | None]  # the start offsets read back
    event_id: int | None = None

    def status(self, row: core.ResetRow) -> str:
        tp = TopicPartition(row.topic, row.partition)
        if tp in self.errors:
            return f"{self.errors[tp].name}: {self.errors[tp].operator_text}"
        return "applied" if self.after.get(tp) == row.new else "not applied"

    @property
    def applied(self) -> int:
        return sum(1 for r in self.rows if self.status(r) == "applied")

    @property
    def ok(self) -> bool:
        return self.applied == len(self.rows)

    @property
    def message(self) -> str:
        if self.ok:
            return f"Reset {len(self.rows)} partition(s) of share group '{self.group_id}'."
        if not self.errors:
            return f"Share group '{self.group_id}': {len(self.rows) - self.applied} partition(s) not applied. {NOT_APPLIED}"
        return f"Share group '{self.group_id}': {self.applied} of {len(self.rows)} partition(s) applied."

    def as_json(self) -> dict:
        return {
            "group_id": self.group_id, "ok": self.ok, "message": self.message,
            "partitions": [
                {**r.as_json(), "start_offset_after": self.after.get(TopicPartition(r.topic, r.partition)),
                 "status": self.status(r)}
                for r in self.rows
            ],
        }  # fmt: skip


@refused_as(audit_names.SHARE_OFFSETS_RESET, ShareInvalid, targets=_targets)
def reset_offsets(
    *, actor, cluster: Cluster, group_id, spec: core.ResetSpec, confirmation: str | None,
    source_ip: str | None = None, on_behalf_of: str = "", request_id: str = "",
) -> ResetResult:  # fmt: skip
    """Set an empty share group's start offsets as planned now (AlterShareGroupOffsets)."""
    access.require(actor, cluster, access.MANAGE_GROUPS)
    gate.check(actor, cluster, GATE_RESET)
    group_id = reads.checked(core.check_group_id, group_id)
    found = _empty_group(cluster, group_id, confirmation, "offset reset")
    rows = reads.plan(cluster, found, spec)
    new = {TopicPartition(r.topic, r.partition): r.new for r in rows}
    params = {"group_id": group_id, "spec": spec.as_json(), "partitions": len(rows)}
    targets = [reads.target(group_id), *sorted({f"topic:{r.topic}" for r in rows})]
    req = outcomes.requested(
        actor=actor, action=audit_names.SHARE_OFFSETS_RESET, cluster=cluster, targets=targets, params=params,
        source_ip=source_ip, on_behalf_of=on_behalf_of, request_id=request_id,
    )  # fmt: skip
    errors: dict[TopicPartition, KafkaOperationError] = {}
    try:
        answered = kafka_share.alter_offsets(gateway_for(cluster), group_id, new)
        errors = {tp: r for tp, r in answered.items() if isinstance(r, KafkaOperationError)}
    except KafkaOperationError as exc:
        errors = dict.fromkeys(new, exc)
    after = _starts(cluster, group_id, new)
    entries = {}
    for r in rows:
        tp = TopicPartition(r.topic, r.partition)
        entry = outcomes.change_outcome(errors.get(tp), dry_run=False)
        if tp not in errors and after.get(tp) != r.new:
            entry.update(ok=False, status="not applied", message=NOT_APPLIED)
        entries[core.tp_text(tp)] = entry
    event_id = outcomes.settle(
        req, targets=targets, params=params,
        before={core.tp_text((r.topic, r.partition)): r.current for r in rows},
        after={core.tp_text(tp): v for tp, v in after.items()},
        outcomes=entries,
    )  # fmt: skip
    return ResetResult(group_id, rows, errors, after, event_id)


def _starts(cluster: Cluster, group_id: str, tps) -> dict[TopicPartition, int | None]:
    try:
        got = kafka_share.offsets(gateway_for(cluster), [group_id])[group_id]
    except KafkaOperationError:
        return {}
    if isinstance(got, KafkaOperationError):
        return {}
    return {tp: (got[tp] if got.get(tp, -1) >= 0 else None) for tp in tps}


@dataclass(frozen=True)
class DeleteResult:
    group_id: str
    results: dict[str, KafkaOperationError | None]  # topic (or the group id) -> Kafka's refusal
    event_id: int | None = None

    @property
    def ok(self) -> bool:
        return all(e is None for e in self.results.values())

    @property
    def message(self) -> str:
        done = [k for k, e in self.results.items() if e is None]
        failed = [f"{k}: {e.name}: {e.operator_text}" for k, e in self.results.items() if e is not None]
        return "; ".join(([f"Deleted {', '.join(done)}."] if done else []) + failed)

    def as_json(self) -> dict:
        return {
            "group_id": self.group_id, "ok": self.ok, "message": self.message,
            "results": {k: ({"ok": True} if e is None else {"ok": False, "error": e.as_json()}) for k, e in self.results.items()},
        }  # fmt: skip


@refused_as(audit_names.SHARE_OFFSETS_DELETE, ShareInvalid, targets=_targets)
def delete_offsets(
    *, actor, cluster: Cluster, group_id, topics, confirmation: str | None,
    source_ip: str | None = None, on_behalf_of: str = "", request_id: str = "",
) -> DeleteResult:  # fmt: skip
    """Forget an empty share group's state of whole topics (DeleteShareGroupOffsets)."""
    access.require(actor, cluster, access.MANAGE_GROUPS)
    gate.check(actor, cluster, GATE_DELETE)
    group_id = reads.checked(core.check_group_id, group_id)
    names = [reads.checked(core.check_topic, t) for t in (topics or [])]
    if not names:
        raise ShareInvalid(["Name the topic(s) whose share-group offsets go."])
    found = _empty_group(cluster, group_id, confirmation, "offsets deletion")
    gone = [TopicPartition(p.topic, p.partition) for p in found.partitions if p.topic in names]
    before = {
        core.tp_text(tp): p.start_offset
        for tp, p in zip(gone, [p for p in found.partitions if p.topic in names], strict=True)
    }
    targets = [reads.target(group_id), *(f"topic:{t}" for t in sorted(set(names)))]
    params = {"group_id": group_id, "topics": sorted(set(names))}
    req = outcomes.requested(
        actor=actor, action=audit_names.SHARE_OFFSETS_DELETE, cluster=cluster, targets=targets, params=params,
        source_ip=source_ip, on_behalf_of=on_behalf_of, request_id=request_id,
    )  # fmt: skip
    try:
        answered = kafka_share.delete_offsets(gateway_for(cluster), group_id, names)
        results = {t: (r if isinstance(r, KafkaOperationError) else None) for t, r in answered.items()}
    except KafkaOperationError as exc:
        results = dict.fromkeys(names, exc)
    after_rows = _starts(cluster, group_id, gone)
    event_id = outcomes.settle(
        req, targets=targets, params=params, before=before,
        after={core.tp_text(tp): v for tp, v in after_rows.items()},
        outcomes={t: outcomes.change_outcome(e, dry_run=False) for t, e in results.items()},
    )  # fmt: skip
    return DeleteResult(group_id, results, event_id)


@refused_as(audit_names.SHARE_GROUP_DELETE, ShareInvalid, targets=_targets)
def delete_group(
    *, actor, cluster: Cluster, group_id, confirmation: str | None,
    source_ip: str | None = None, on_behalf_of: str = "", request_id: str = "",
) -> DeleteResult:  # fmt: skip
    """Delete an empty share group and its state (DeleteGroups)."""
    access.require(actor, cluster, access.MANAGE_GROUPS)
    gate.check(actor, cluster, GATE_DELETE)
    group_id = reads.checked(core.check_group_id, group_id)
    found = _empty_group(cluster, group_id, confirmation, "deletion")
    targets = [reads.target(group_id), *sorted({f"topic:{p.topic}" for p in found.partitions})]
    params = {"group_id": group_id}
    req = outcomes.requested(
        actor=actor, action=audit_names.SHARE_GROUP_DELETE, cluster=cluster, targets=targets, params=params,
        source_ip=source_ip, on_behalf_of=on_behalf_of, request_id=request_id,
    )  # fmt: skip
    try:
        got = kafka_share.delete_groups(gateway_for(cluster), [group_id]).get(group_id)
        error = got if isinstance(got, KafkaOperationError) else None
    except KafkaOperationError as exc:
        error = exc
    try:
        exists = reads.raw_detail(cluster, group_id) is not None
    except KafkaOperationError:
        exists = None
    event_id = outcomes.settle(
        req, targets=targets, params=params,
        before={"exists": True, "state": found.state, "partitions": len(found.partitions)},
        after={"exists": exists},
        outcomes={group_id: outcomes.change_outcome(error, dry_run=False)},
    )  # fmt: skip
    return DeleteResult(group_id, {group_id: error}, event_id)


def _reread_starts(cluster: Cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the group's start offsets now (a reset or an offsets deletion)."""
    group_id = params["group_id"]
    try:
        got = kafka_share.offsets(gateway_for(cluster), [group_id])[group_id]
    except KeyError:
        got = {}
    if isinstance(got, KafkaOperationError):
        raise got
    return {core.tp_text(tp): (v if v >= 0 else None) for tp, v in sorted(got.items())}


def _reread_group(cluster: Cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: whether the group exists now (a deletion)."""
    return {"exists": reads.raw_detail(cluster, params["group_id"]) is not None}


outcomes.register_reader(audit_names.SHARE_OFFSETS_RESET, _reread_starts)
outcomes.register_reader(audit_names.SHARE_OFFSETS_DELETE, _reread_starts)
outcomes.register_reader(audit_names.SHARE_GROUP_DELETE, _reread_group)
