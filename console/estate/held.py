"""The held estate change: a plan applied as ONE change through change control, always held for
approval by someone other than its author (``always_held``: whatever the cluster's policy says).

Its payload is the exact plan (console/estate/plan.py), its review the plan's rows with Kafka's
validate-only answers, its drift pin the live state of every resource the plan changes: when that
moved between the review and the approval (or the run), the change goes back for a fresh review.
Holding it needs cluster view and the permissions of what the plan does (topics, configs, ACLs); the
run (console/estate/apply.py) goes through each area's own action as the author."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console import access
from console.changes import door, gate
from console.changes.kinds import ChangeInvalid, HeldKind, Prepared, register, review
from console.estate import reads
from console.estate.apply import run_plan
from console.estate.plan import CHECKED_COLUMNS, Plan, pin, planned_topics, rows
from console.models.requests import ChangeRequest, RequestKind

ESTATE_APPLY = gate.declare("estate.apply", "Estate plans (always held)", access.VIEW, always_held=True)


def permissions(payload: Mapping[str, Any]) -> list[str]:
    """What the plan does, as permissions: each is required to hold it (and again at the run)."""
    needed = []
    if payload["create_topics"] or payload["partitions"] or payload["delete_topics"]:
        needed.append(access.MANAGE_TOPICS)
    if payload["configs"]:
        needed.append(access.MANAGE_CONFIGS)
    if payload["create_acls"] or payload["delete_acls"]:
        needed.append(access.MANAGE_ACLS)
    return needed


def _review_of(plan: Plan, pinned) -> dict[str, Any]:
    bad = plan.refused + [f"{k}: {v}" for k, v in sorted(plan.answers.items())]
    return review(
        CHECKED_COLUMNS, plan.checked_rows(), ok=not bad, pinned=pinned,
        kafka="; ".join(bad) or f"{plan.changes} change(s), valid (Kafka's validate-only answer)",
        facts={"namespace": plan.payload["namespace"] or "(the whole cluster)", "deletions": plan.payload["delete"]},
    )  # fmt: skip


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's rows again, Kafka's validate-only again, and the live state of what it changes."""
    live = reads.live_state(cluster, payload["namespace"], names=planned_topics(payload))
    plan = Plan(dict(payload), rows(payload))
    plan.answers = {**reads.validate(cluster, plan), **reads.policy_refusals(cluster, plan)}
    return _review_of(plan, pin(payload, live))


def prepare_apply(actor, cluster, text: str, delete: bool = False) -> Prepared:
    """The file's plan, ready to hold: refused when Kafka cannot do part of it, or when there is
    nothing to change."""
    plan = reads.plan_estate(actor=actor, cluster=cluster, text=text, delete=delete)
    if plan.refused or plan.answers:
        raise ChangeInvalid(plan.refused + [f"{k}: {v}" for k, v in sorted(plan.answers.items())])
    if not plan.drift:
        raise ChangeInvalid(["no drift: the cluster already matches the file, nothing to apply"])
    if not plan.changes:
        raise ChangeInvalid(
            ["nothing to apply: what is not in the file is kept (ask for deletions to delete it)"]
        )
    for permission in permissions(plan.payload):
        access.require(actor, cluster, permission)
    scope = plan.payload["namespace"] or cluster.name
    return Prepared(
        RequestKind.ESTATE_APPLY, ESTATE_APPLY, f"estate:{scope}", plan.payload,
        _review_of(plan, plan.pinned), f"apply the estate of {scope}: {plan.changes} change(s)",
    )  # fmt: skip


def submit_plan(
    *, actor, cluster, text: str, delete: bool = False, reason: str = "", source_ip: str | None = None
) -> ChangeRequest:
    """Hold the file's plan for approval (four eyes, always): the change request carrying it."""
    prepared = prepare_apply(actor, cluster, text, delete)
    return door.hold(
        actor=actor, cluster=cluster, prepared=prepared, mode=door.HOLD, text=reason, source_ip=source_ip
    )


def _run(actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False):
    for permission in permissions(payload):
        access.require(actor, cluster, permission)
    return run_plan(
        actor, cluster, payload, request_id, on_behalf_of=on_behalf_of, retry=retry, pinned=pinned
    )


register(
    HeldKind(
        name=RequestKind.ESTATE_APPLY, gate=ESTATE_APPLY, prepare=prepare_apply, review=_review, run=_run
    )
)
