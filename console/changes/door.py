"""The one door every path (page, API, CLI) goes through for an action change control may hold:
run it, or hold it for review with its dry run, or (an admin) break glass and run it now.

The door function decides; the caller only says what the person asked for (``mode``) and renders
the outcome: the action's own result, or the held change with its id, review and approvals.

- ``RUN``: run the action. Where the cluster's policy holds it for this actor, the area's own gate
  check refuses it (``gate.ApprovalRequired``), the refusal every path maps the same way.
- ``HOLD``: run it where nothing holds it, else submit it for approval (``text`` is the reason).
- ``BREAK_GLASS``: run it where nothing holds it, else an admin runs it now (``text`` is the
  written justification; audited, flagged and announced).

While a freeze window is in force (console/windows) every governed action counts as held: ``RUN``
is refused by the gate (``ChangeWindowClosed``, naming the window and its end), ``HOLD`` submits it
where the policy holds it (approving during a freeze is allowed: the run waits for the freeze's end,
``changes.schedule``) and is refused otherwise, and ``BREAK_GLASS`` is the way through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from console.changes import actions as changes
from console.changes import gate
from console.changes.kinds import Prepared
from console.models import Cluster
from console.models.requests import ChangeRequest
from console.windows import reads as window_reads

RUN, HOLD, BREAK_GLASS = "run", "hold", "break_glass"
MODES = (RUN, HOLD, BREAK_GLASS)


@dataclass(frozen=True)
class Outcome:
    """What the door did: ``result`` is the action's own answer when it ran directly; ``held`` the
    change request when it was submitted for approval or broke glass."""

    result: Any = None
    held: ChangeRequest | None = None


def is_held(actor, cluster: Cluster, kind: str) -> bool:
    """Whether the cluster's change-control policy holds ``kind`` for this actor, or a freeze window
    holds every governed action."""
    return gate.required(actor, cluster, kind) is not None or gate.frozen(cluster, kind)


def page_controls(actor, cluster: Cluster, kind: str) -> dict:
    """What a page's change-control box shows for ``kind``: ``gated`` (the action is held), ``freeze``
    (the freeze in force: id, reason, until; None) and ``no_submit`` (frozen where no policy holds the
    action: submitting for approval would be refused, only an admin's break glass runs it now)."""
    held = gate.required(actor, cluster, kind) is not None
    freeze = (
        window_reads.status(actor=actor, cluster=cluster)["freeze"] if gate.frozen(cluster, kind) else None
    )
    return {
        "gated": held or freeze is not None,
        "freeze": freeze,
        "no_submit": freeze is not None and not held,
    }


def hold(
    *, actor, cluster: Cluster, prepared: Prepared, mode: str, text: str = "", source_ip: str | None = None
) -> ChangeRequest:
    """A prepared held action: submitted for approval, or with BREAK_GLASS run now by an admin."""
    if mode == BREAK_GLASS:
        return changes.break_glass(
            actor=actor, cluster=cluster, prepared=prepared, justification=text, source_ip=source_ip
        )
    return changes.submit_change(
        actor=actor, cluster=cluster, prepared=prepared, reason=text, source_ip=source_ip
    )


def run_or_hold(
    *,
    actor,
    cluster: Cluster,
    kind: str,
    prepare: Callable[[], Prepared],
    run: Callable[[], Any],
    mode: str = RUN,
    text: str = "",
    source_ip: str | None = None,
) -> Outcome:
    """Run the action, or hold it (see the module's modes). ``prepare`` (the dry run and payload) is
    called only when the action is held; ``run`` only when it runs directly."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    if mode == RUN or not is_held(actor, cluster, kind):
        return Outcome(result=run())
    return Outcome(
        held=hold(actor=actor, cluster=cluster, prepared=prepare(), mode=mode, text=text, source_ip=source_ip)
    )
