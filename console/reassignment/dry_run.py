"""The dry run of a reassignment and what Start may run afterwards, for every door.

The dry run plans (a plan file as sent, or an intent planned over the cluster) and previews; Start then
runs exactly what was reviewed: a plan file as sent, an intent's plan only as the dry run showed it
(sent back with its digest), never a plan made anew. Start itself (``actions.start_reassignment``) and
the held reassignment (``held.prepare_reviewed``) refuse a plan whose digest is not the dry run's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from console.reassignment import planner, throttles
from console.reassignment.actions import (
    PlanRejected,
    Preview,
    build_plan,
    checked_pacing,
    preview_plan,
    read_cluster,
)

DRY_RUN_FIRST = (
    "Dry run first: Start runs exactly the plan you reviewed in the dry run (its plan and digest)."
)


@dataclass(frozen=True)
class DryRun:
    """What the dry run shows: the plan, its preview (checks, diff, digest) and, for a balance, the
    per-broker result."""

    plan: Mapping[planner.TP, Sequence[int]]
    preview: Preview
    balance: object = None

    @property
    def plan_json(self) -> str:
        """The plan as kafka-reassign-partitions' JSON (what Start sends back for an intent)."""
        return planner.export_plan(self.plan)


def dry_run(cluster, asked: Mapping[str, Any], *, throttle: int | None = None, pacing=None) -> DryRun:
    """Plan and preview; nothing changes. ``asked``: what the plan form (console/forms/reassignment.py,
    which both doors validate with) cleaned: ``intent``, and ``plan`` for a plan file or ``topic_list``,
    ``broker_list``, ``replication_factor`` for an intent. A plan file reads only its own partitions; an
    intent plans over the cluster, re-read once when it names a topic the snapshot lacks."""
    intent, plan, topics = asked["intent"], asked.get("plan"), tuple(asked.get("topic_list", ()))
    json_plan = intent == "json"
    view = read_cluster(cluster, with_sizes=True, only=plan if json_plan else None)
    rf_change = False
    if not json_plan:
        if any(t not in {tp[0] for tp in view.assignment} for t in topics):
            view = read_cluster(cluster, with_sizes=True, cached=False)
        plan, rf_change = build_plan(
            view,
            intent=intent,
            topics=topics,
            brokers=asked.get("broker_list", ()),
            replication_factor=asked.get("replication_factor"),
        )
    throttles.validate_rate(throttle)
    preview = preview_plan(cluster, plan, throttle=throttle, rf_change=rf_change, view=view)
    # a paced move's rates and overrides are checked against the plan now, as Start checks them
    checked_pacing(pacing, [c for c in preview.checks if c.moving])
    return DryRun(plan, preview, view.balance)


def plan_to_start(
    *, intent: str, plan: Mapping[planner.TP, Sequence[int]] | None, reviewed: str, expected: str | None
) -> tuple[Mapping[planner.TP, Sequence[int]], bool]:
    """The plan Start runs and whether it changes replication factors: a plan file as sent (``plan``);
    an intent's plan only as the dry run exported it (``reviewed``, with its digest ``expected``)."""
    if intent == "json":
        return plan, False
    if not reviewed or expected is None:
        raise PlanRejected(DRY_RUN_FIRST)
    try:
        return planner.parse_plan(reviewed), intent == "rf"
    except ValueError as exc:
        raise PlanRejected(f"The reviewed plan is not readable: {exc}") from None
