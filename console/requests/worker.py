"""Approved self-service requests on a worker: the ``request.execute`` kind.

The change runs through the owning area's action (topics, configs, ACLs, consumer groups) on
behalf of the requester, as the approver (or the system actor for auto-approved requests), so
permissions, policy and audit are those of the area. Re-running converges: "already exists" after
an earlier attempt is success. A consumer group reset runs exactly the reviewed offsets, and only
while the group is as the dry run saw it.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from console import access, operations
from console.acls import actions as acls
from console.acls import core as acl_core
from console.changes import actions as changes
from console.changes import gate
from console.clusters.actions import gateway_for
from console.configs import actions as configs
from console.configs import plan as config_plan
from console.groups import actions as groups
from console.groups import reset_payload as group_reset
from console.groups.core import ResetPlanError
from console.kafka import ConfigChange, KafkaOperationError
from console.models import OperationState
from console.models.requests import ChangeRequest, RequestKind, RequestState
from console.operations import Done, Kind, Step
from console.requests import kinds as request_kinds
from console.requests.actions import EXECUTE_KIND, get_request, record_step
from console.requests.checks import RequestInvalid, _current_topic, _kafka_text
from console.requests.notify import notify_requester
from console.topics import actions as topics
from console.topics import delete as topic_delete
from console.topics import policy


class Indeterminate(Exception):
    """Kafka did not answer in time: the change may or may not have happened. The runner retries;
    the re-run converges ("already exists" or "already has the partitions" is success)."""


def _settled(ok: bool, status: str, message: str) -> tuple[bool, str]:
    if not ok and status == "unknown":
        raise Indeterminate(message)
    return ok, message or status


def _execute(req: ChangeRequest, actor, *, retry: bool) -> tuple[bool, str]:
    """Run the approved change through the owning service; (ok, message)."""
    p, cluster = req.payload, req.cluster
    common = {"actor": actor, "cluster": cluster}
    on_behalf = {"on_behalf_of": req.requested_by_name, "request_id": f"request-{req.pk}"}
    if req.kind == RequestKind.TOPIC_CREATE:
        spec = topics.TopicSpec(
            p["name"], p["partitions"], p["replication_factor"], None, dict(p.get("configs") or {})
        )
        outcome = topics.create_topics(**common, specs=[spec], **on_behalf).outcomes[0]
        if not outcome.ok and retry and outcome.status == "already exists":
            return True, "the topic exists (created by an earlier attempt)"
        return _settled(outcome.ok, outcome.status, outcome.message)
    if req.kind == RequestKind.TOPIC_CONFIG:
        changes = [ConfigChange(c["name"], c["op"], c["value"]) for c in p["changes"]]
        result = configs.alter_configs(
            **common, resource=configs.topic_resource(p["topic"]), changes=changes, **on_behalf
        )
        if not result.ok and result.error is not None and result.error.retriable:
            raise Indeterminate(_kafka_text(result.error))  # setting the same values again converges
        return result.ok, result.message or ("applied" if result.ok else _kafka_text(result.error))
    if req.kind == RequestKind.TOPIC_PARTITIONS:
        if retry and len(_current_topic(gateway_for(cluster), p["topic"]).partitions) >= p["total_count"]:
            return True, "the topic already has the requested partitions"
        outcome = topics.add_partitions(**common, topic=p["topic"], total_count=p["total_count"], **on_behalf)
        return _settled(outcome.ok, outcome.status, outcome.message)
    if req.kind == RequestKind.TOPIC_DELETE:
        outcome = topic_delete.delete_topics(
            **common, names=[p["topic"]], confirmation=p["topic"], **on_behalf
        ).outcomes[0]
        if not outcome.ok and outcome.status == "does not exist" and retry:
            return True, "the topic is gone (deleted by an earlier attempt)"
        return _settled(outcome.ok, outcome.status, outcome.message)
    if req.kind == request_kinds.GROUP_RESET:
        return _reset_group(req, actor, retry=retry)
    binding, _ = acl_core.validate_binding(p["binding"])
    change = acls.change_acls(**common, creates=[binding], on_behalf_of=req.requested_by_name)
    return change.ok, change.results[0].message


def _partitions(n: int) -> str:
    return f"{n} partition{'s' if n != 1 else ''}"


def _reset_group(req: ChangeRequest, actor, *, retry: bool) -> tuple[bool, str]:
    """The reviewed offsets exactly (a from-file reset of the attached dry run), refused while the
    group has members and when it moved since the review (nothing is changed then)."""
    p, cluster, group_id = req.payload, req.cluster, req.payload["group"]
    try:
        rows = group_reset.reviewed_rows(p)
        spec = group_reset.reviewed_spec(rows)
        reviewed = spec.file_offsets
        now = groups.preview_reset(actor=actor, cluster=cluster, group_id=group_id, spec=spec)
        if retry and all(r.current == reviewed.get((r.topic, r.partition)) for r in now.plan.rows):
            return True, f"the reviewed offsets of {_partitions(len(rows))} are set (by an earlier attempt)"
        if now.group is not None and now.group.members:
            count = len(now.group.members)
            return False, (
                f"Not reset: group '{group_id}' has {count} active member{'s' if count != 1 else ''}: "
                f"{groups.members_text(now.group)}. Kafka only resets the offsets of an empty group: "
                "stop its consumers, then submit the request again."
            )
        issues = group_reset.drift(rows, now.plan, earlier_attempt=retry)
        if issues:
            return False, "Not reset: " + "; ".join(issues) + ". Submit the request again for a new dry run."
        result = groups.reset_offsets(
            actor=actor,
            cluster=cluster,
            group_id=group_id,
            spec=spec,
            confirmation=group_id,
            on_behalf_of=req.requested_by_name,
            request_id=f"request-{req.pk}",
        )
    except (groups.GroupNotEmpty, groups.ConfirmationError, ResetPlanError) as exc:
        return False, f"Not reset: {exc}"
    if any(o.status == "unknown" for o in result.outcomes):
        raise Indeterminate("Kafka did not say whether every offset was committed")
    if result.failed:
        failed = "; ".join(f"{o.topic}-{o.partition}: {o.message}" for o in result.failed[:10])
        return False, f"{result.ok_count} of {_partitions(len(result.outcomes))} reset; not reset: {failed}"
    if result.plan is not None and result.plan.offsets != dict(reviewed):
        moved = [f"{t}-{n}: {o}" for (t, n), o in result.plan.offsets.items() if reviewed.get((t, n)) != o]
        return False, "The log moved while the reset ran; committed instead of the reviewed offsets: " + (
            ", ".join(moved[:10])
        )
    plan = result.plan
    lag = f"; lag {plan.lag_before} → {plan.lag_after}" if plan is not None else ""
    return True, (
        f"reset {_partitions(len(result.outcomes))} of {group_id} to the reviewed offsets "
        f"(plan SHA-256 {p['plan_sha256'][:12]}…){lag}"
    )


def _run(ctx) -> Done:
    """Execute once (converging when re-entered), record the outcome on the request and notify."""
    op = ctx.op
    req = ChangeRequest.objects.select_related("cluster", "requested_by", "decided_by").get(
        pk=op.params["request_id"]
    )
    if req.state in (RequestState.SUCCEEDED, RequestState.FAILED):  # recorded by an earlier attempt
        ok = req.state == RequestState.SUCCEEDED
        message = (req.result or {}).get("message", "")
        return _done(req, ok, message)
    actor = access.system_actor() if req.auto_approved else req.decided_by
    retry = req.state == RequestState.RUNNING
    with transaction.atomic():
        ChangeRequest.objects.filter(pk=req.pk).update(state=RequestState.RUNNING)
        record_step(req, "system", "running", f"operation #{op.pk} on {ctx.worker}")
    ctx.set_item(req.resource, state=OperationState.RUNNING)
    try:
        if actor is None:
            raise PermissionDenied("the approver's account no longer exists")
        if req.gated:  # an operator's action held by change control: exactly what was reviewed
            ok, message = changes.execute(req)
        else:
            with gate.passed():  # four eyes already: the request's own approval
                ok, message = _execute(req, actor, retry=retry)
    except changes.Drifted as exc:  # sent back for a fresh review; nothing ran
        ctx.set_item(req.resource, state=OperationState.FAILED, progress=1.0, message=str(exc))
        return Done(
            OperationState.FAILED,
            result={"request_id": req.pk, "message": f"not run: {exc}"},
            error=f"not run: {exc} (back to review)",
            outcomes={req.resource: {"ok": False, "message": f"not run: {exc}"}},
        )
    except (
        PermissionDenied,
        RequestInvalid,
        policy.PolicyViolation,
        config_plan.ConfigPlanError,
        acl_core.AclValidationError,
    ) as exc:
        ok, message = False, str(exc)
    except KafkaOperationError as exc:
        if exc.retriable:
            raise  # the cluster did not answer: the runner retries with backoff, then gives up
        ok, message = False, _kafka_text(exc)
    state = RequestState.SUCCEEDED if ok else RequestState.FAILED
    ctx.set_item(
        req.resource,
        state=OperationState.SUCCEEDED if ok else OperationState.FAILED,
        progress=1.0,
        message=message,
    )
    with transaction.atomic():
        ChangeRequest.objects.filter(pk=req.pk).update(
            state=state, result={"ok": ok, "message": message}, finished_at=timezone.now()
        )
        record_step(req, "system", "succeeded" if ok else "failed", message)
        notify_requester(
            req,
            f"Your request #{req.pk} ({request_kinds.label(req)} {req.resource}) {'is done' if ok else 'failed'}: {message}",
        )
    return _done(req, ok, message)


def _done(req: ChangeRequest, ok: bool, message: str) -> Done:
    return Done(
        OperationState.SUCCEEDED if ok else OperationState.FAILED,
        result={"request_id": req.pk, "message": message},
        error="" if ok else message,
        outcomes={req.resource: {"ok": ok, "message": message}},
    )


def _give_up(ctx, error: str) -> None:
    """The execution itself kept crashing: the request must not stay "running" either."""
    req = ChangeRequest.objects.filter(pk=ctx.op.params.get("request_id")).first()
    if req is None or req.state in (RequestState.SUCCEEDED, RequestState.FAILED):
        return
    with transaction.atomic():
        ChangeRequest.objects.filter(pk=req.pk).update(
            state=RequestState.FAILED, result={"ok": False, "message": error}, finished_at=timezone.now()
        )
        record_step(req, "system", "failed", f"the console gave up: {error}")
        notify_requester(
            req, f"Your request #{req.pk} ({request_kinds.label(req)} {req.resource}) failed: {error}"
        )


def _may_view(user, op) -> bool:
    """A request's execution shows its payload: only to those who may see the request itself."""
    req = ChangeRequest.objects.filter(pk=op.params.get("request_id"), operation=op).first()
    if req is None or op.cluster is None:
        return bool(getattr(user, "is_superuser", False))
    return get_request(actor=user, cluster=op.cluster, request_id=req.pk) is not None


operations.register(Kind(EXECUTE_KIND, (Step("execute", _run),), give_up=_give_up, may_view=_may_view))
