"""Consumer group changes: reset offsets (a dry run, then execute), delete a group, delete a group's
committed offsets of a topic.

Each: ``access.require`` → validate (the plan, the typed confirmation, Kafka's rule that only an
empty group's offsets are reset or the group deleted, with the members named) → the "requested"
audit event (``outcomes.requested``: nothing reaches Kafka if it cannot be written) → one gateway
call → the outcome event with before and after (``outcomes.settle``). A timed-out call is
re-read rather than assumed failed. Refusals are audited (``@refused_as``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from console import access
from console.audit import outcomes as outcomes_log
from console.audit.refusals import refused_as
from console.batch_result import BatchOutcomes
from console.changes import gate
from console.clusters.actions import gateway_for
from console.groups import audit_names, core
from console.groups.core import ResetPlan, ResetPlanError, ResetSpec
from console.groups.offsets import log_offsets_each
from console.groups.reads import describe_group, target
from console.kafka import GroupDescription, KafkaOperationError, TopicPartition
from console.topics import cache as metadata_cache

TIMEOUT = "REQUEST_TIMED_OUT"
AUDIT_MAX_PARTITIONS = 10_000  # partitions named one by one in an event; the digest covers them all


class GroupNotEmpty(ValueError):
    """Kafka changes offsets of, and deletes, only groups without members: these are still there."""


class ConfirmationError(ValueError):
    """The typed confirmation is not the group id."""


class NoOffsets(ValueError):
    """The group has no committed offsets for what was asked."""


def timestamp_ms(text: str) -> int:
    """``--to-datetime``'s value: ISO 8601 (``2024-05-01T12:00:00``, ``...Z``, ``...+02:00``; no zone
    means UTC) or epoch milliseconds."""
    text = text.strip()
    if text.isascii() and text.isdigit() and len(text) <= 15:
        return int(text)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise ResetPlanError(
            [
                f"'{text[:60]}' is not a time: use 2024-05-01T12:00:00 (UTC), with +02:00 for a zone, or epoch ms."
            ]
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return int(when.timestamp() * 1000)
    except (OverflowError, OSError, ValueError):
        raise ResetPlanError([f"'{text[:60]}' is out of range."]) from None


def members_text(group: GroupDescription, limit: int = 10) -> str:
    names = [f"{m.client_id or m.member_id} ({m.host})" for m in group.members]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _require_empty(group: GroupDescription | None, what: str) -> None:
    if group is not None and group.members:
        raise GroupNotEmpty(
            f"Group '{group.group_id}' has {len(group.members)} active member"
            f"{'s' if len(group.members) != 1 else ''}: {members_text(group)}. Kafka only {what} an "
            "empty group: stop its consumers first."
        )


def check_confirmation(group_id: str, confirmation: str) -> None:
    """The typed confirmation of a reset or delete: the group id."""
    if (confirmation or "").strip() != group_id:
        raise ConfirmationError(f"Type the group id ('{group_id}') to confirm.")


def _may_change(actor, cluster, gate_kind: str, group_id: str, confirmation: str) -> None:
    """What every change of a group needs first: group.manage on the cluster, the change-control
    gate's pass, and the group id typed as the confirmation."""
    access.require(actor, cluster, access.MANAGE_GROUPS)
    gate.check(actor, cluster, gate_kind)
    check_confirmation(group_id, confirmation)


def _committed(cluster, group_id: str, group: GroupDescription | None) -> dict[TopicPartition, int]:
    got = gateway_for(cluster).list_consumer_group_offsets(
        [group_id], listings=[group] if group is not None else None
    )[group_id]
    if isinstance(got, KafkaOperationError):
        if got.name == "GROUP_ID_NOT_FOUND":
            return {}
        raise got
    return got


def _digest(pairs) -> str:
    return hashlib.sha256(json.dumps(sorted(pairs), separators=(",", ":")).encode()).hexdigest()


def _capped(mapping: dict) -> dict:
    return dict(list(mapping.items())[:AUDIT_MAX_PARTITIONS])


# -- reset ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResetPreview:
    """The dry run: the plan, and the group as it is (None: no such group yet; Kafka creates it)."""

    group: GroupDescription | None
    plan: ResetPlan

    @property
    def blocked(self) -> str:
        """Why execute would be refused now ("" when it would not)."""
        if self.group is None or not self.group.members:
            return ""
        return f"The group has active members ({members_text(self.group)}): stop them before executing."


def _prepare(cluster, group_id: str, spec: ResetSpec) -> ResetPreview:
    try:
        group: GroupDescription | None = describe_group(cluster, group_id)
    except KafkaOperationError as exc:
        if exc.name != "GROUP_ID_NOT_FOUND":
            raise
        group = None
    committed = _committed(cluster, group_id, group)
    snap = metadata_cache.get_snapshot(cluster)
    named = {spec.topic} if spec.scope != "all-topics" and spec.mode != "from-file" else set()
    named |= {t for t, _ in spec.file_offsets}
    if named - set(snap.by_name):  # a topic created since the cached read
        snap = metadata_cache.get_snapshot(cluster, refresh=True)
    counts = {name: len(meta.partitions) for name, meta in snap.by_name.items()}
    tps = [TopicPartition(*tp) for tp in core.select_partitions(spec, committed, counts)]
    if spec.mode == "to-datetime":
        starts, ends, by_time = log_offsets_each(cluster, tps, ["earliest", "latest", spec.value])
    else:
        (starts, ends), by_time = log_offsets_each(cluster, tps, ["earliest", "latest"]), None
    if by_time is not None and any(v is None for v in by_time.values()):
        raise ResetPlanError(["Kafka could not say the offsets at that time for every partition; try again."])
    return ResetPreview(group, core.plan_reset(spec, tps, committed, starts, ends, by_time))


def preview_reset(*, actor, cluster, group_id: str, spec: ResetSpec) -> ResetPreview:
    """The dry run: current → new offset and lag before → after per partition; changes nothing."""
    access.require(actor, cluster, access.MANAGE_GROUPS)
    return _prepare(cluster, group_id, spec)


def preview_reset_for_request(*, requester, cluster, group_id: str, spec: ResetSpec) -> ResetPreview:
    """The dry run attached to a self-service reset request: instead of ``group.manage`` the
    requester needs ``request.submit`` on the group and on every topic the plan touches (their
    namespaces); PermissionDenied names the first one outside them. Changes nothing."""
    access.require(requester, cluster, access.REQUEST, group_id)
    preview = _prepare(cluster, group_id, spec)
    for topic in preview.plan.topics:
        access.require(requester, cluster, access.REQUEST, topic)
    return preview


@dataclass(frozen=True)
class PartitionOutcome:
    topic: str
    partition: int
    before: int | None
    after: int | None  # the committed offset now (None: unknown)
    ok: bool
    status: str
    message: str = ""

    def audit(self) -> dict:
        data = {"ok": self.ok, "status": self.status}
        if self.message:
            data["message"] = self.message
        return data


@dataclass(frozen=True)
class ChangeResult(BatchOutcomes[PartitionOutcome]):
    """Per-partition outcomes of a reset or an offset delete, and the outcome event."""

    outcomes: list[PartitionOutcome]
    event_id: int | None = None
    plan: ResetPlan | None = None


def _reread(cluster, group_id: str, group) -> dict[TopicPartition, int] | None:
    try:
        return _committed(cluster, group_id, group)
    except KafkaOperationError:
        return None


@refused_as(
    audit_names.GROUP_OFFSETS_RESET,
    ResetPlanError,
    GroupNotEmpty,
    ConfirmationError,
    targets=lambda k: [target(k.get("group_id") or "")],
)
def reset_offsets(
    *,
    actor,
    cluster,
    group_id: str,
    spec: ResetSpec,
    confirmation: str,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> ChangeResult:
    """Execute a reset: refused while the group has members (named) or without the group id typed."""
    _may_change(actor, cluster, "group.reset", group_id, confirmation)
    preview = _prepare(cluster, group_id, spec)
    _require_empty(preview.group, "resets the offsets of")
    plan = preview.plan
    offsets = {TopicPartition(*tp): new for tp, new in plan.offsets.items()}
    req = outcomes_log.requested(
        actor=actor,
        action=audit_names.GROUP_OFFSETS_RESET,
        cluster=cluster,
        targets=[target(group_id), *(f"topic:{t}" for t in plan.topics)],
        params={
            "group": group_id,
            "reset": spec.describe(),
            "partitions": len(offsets),
            "offsets": [
                [tp.topic, tp.partition, o] for tp, o in list(offsets.items())[:AUDIT_MAX_PARTITIONS]
            ],
            "plan_sha256": _digest([tp.topic, tp.partition, o] for tp, o in offsets.items()),
        },
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    try:
        results = gateway_for(cluster).alter_consumer_group_offsets(group_id, offsets)
    except KafkaOperationError as exc:
        results = dict.fromkeys(offsets, exc)
    now = None
    if any(isinstance(r, KafkaOperationError) and r.name == TIMEOUT for r in results.values()):
        now = _reread(cluster, group_id, preview.group)
    outcomes = []
    for row in plan.rows:
        tp = TopicPartition(row.topic, row.partition)
        result = results.get(
            tp, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "Kafka did not answer for it")
        )
        if not isinstance(result, KafkaOperationError):
            outcomes.append(PartitionOutcome(row.topic, row.partition, row.current, row.new, True, "reset"))
        elif result.name == TIMEOUT and now is not None and now.get(tp) == row.new:
            outcomes.append(
                PartitionOutcome(
                    row.topic,
                    row.partition,
                    row.current,
                    row.new,
                    True,
                    "reset",
                    "Kafka answered late; the offset is set.",
                )
            )
        elif result.name == TIMEOUT:
            seen = None if now is None else now.get(tp)
            outcomes.append(
                PartitionOutcome(
                    row.topic,
                    row.partition,
                    row.current,
                    seen,
                    False,
                    "unknown",
                    "The request timed out; re-read the group before retrying.",
                )
            )
        else:
            outcomes.append(
                PartitionOutcome(
                    row.topic,
                    row.partition,
                    row.current,
                    row.current,
                    False,
                    "failed",
                    f"{result.name}: {result.operator_text}",
                )
            )
    event_id = _settle(
        req,
        group_id,
        outcomes,
        {"reset": spec.describe(), "lag_before": plan.lag_before, "lag_after": plan.lag_after},
    )
    return ChangeResult(outcomes, event_id, plan)


def _settle(req, group_id: str, outcomes: list[PartitionOutcome], params: dict) -> int | None:
    """The outcome event: offsets before and after per partition ("topic-partition"); in
    ``outcomes`` the partitions that went plainly as asked are counted per status (``{"reset":
    {"ok": true, "partitions": 9998}}``) and only the others are named one by one (a failure, an
    unknown result, a late answer) - a 10,000-partition reset is not 10,000 copies of "ok"."""
    keys = [f"{o.topic}-{o.partition}" for o in outcomes]
    plain: dict[str, int] = {}
    named: dict[str, dict] = {}
    for key, o in zip(keys, outcomes, strict=True):
        if o.ok and not o.message:
            plain[o.status] = plain.get(o.status, 0) + 1
        else:
            named[key] = o.audit()
    summary = {status: {"ok": True, "partitions": n} for status, n in plain.items()}
    return outcomes_log.settle(
        req,
        targets=[target(group_id), *sorted({f"topic:{o.topic}" for o in outcomes})],
        params={"group": group_id, "partitions": len(outcomes), **params},
        before=_capped(dict(zip(keys, (o.before for o in outcomes), strict=True))),
        after=_capped(dict(zip(keys, (o.after for o in outcomes), strict=True))),
        outcomes={**summary, **_capped(named)},
    )


def _reread_offsets(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the committed offsets of the partitions a reset or delete named."""
    group_id = params.get("group", "")
    committed = _committed(cluster, group_id, None)
    named = params.get("offsets") or [[t, p, None] for t, p in params.get("partitions_named", [])]
    return {f"{t}-{p}": committed.get(TopicPartition(t, int(p))) for t, p, *_ in named}


outcomes_log.register_reader(audit_names.GROUP_OFFSETS_RESET, _reread_offsets)
