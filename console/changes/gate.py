"""Whether an operator action needs approval, and the only ways past the gate: running an approved
change request, or an admin's audited break glass.

The areas' mutations call ``check`` (topics, configs, acls, groups, reassignment, throttles,
elections):
a gated action called directly (a page, the API, the CLI) is refused with ApprovalRequired, so no
path skips the review; while a freeze window is in force (console/windows) every such action is
refused with ``ChangeWindowClosed``, held or not. The change runner and break glass set a context for the kind they run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from django.core.exceptions import PermissionDenied

from console import access
from console.models import Cluster
from console.models.changes import ChangePolicy
from console.windows import guard

# The action kinds a policy can gate (the value stored in ChangePolicy.kinds), how pages name them,
# and the permission each kind's own action needs (holding one for review needs it too). Each area
# declares its own in its held.py (``declare``), in the order the policy page lists them; console/apps.py
# loads those modules in every process.
KINDS: dict[str, str] = {}
PERMISSIONS: dict[str, str] = {}
# Kinds held for approval by someone other than the author whatever the policy says (``always_held``).
ALWAYS_HELD: set[str] = set()
MAX_APPROVERS = 2

_passed: ContextVar[frozenset[str]] = ContextVar("change_gate_passed", default=frozenset())


class ApprovalRequired(PermissionDenied):
    """The cluster's change-control policy holds this action for approval."""


def declare(kind: str, label: str, permission: str, *, always_held: bool = False) -> str:
    """An area declares a policy kind (at import of its held.py); declaring it again replaces it.
    ``always_held``: four eyes on every cluster, with or without a policy (the estate's plans)."""
    KINDS[kind] = label
    PERMISSIONS[kind] = permission
    if always_held:
        ALWAYS_HELD.add(kind)
    return kind


def policy_of(cluster: Cluster) -> ChangePolicy | None:
    policy = ChangePolicy.objects.filter(cluster=cluster, enabled=True).first()
    return policy if policy is not None and policy.kinds else None


def required(actor, cluster: Cluster, kind: str) -> ChangePolicy | None:
    """The policy that holds ``kind`` for this actor on this cluster, or None (the action runs).

    A policy naming roles holds the actions of anyone bound to one of them on the cluster; a policy
    naming none holds everyone's (superusers included: break glass is their way round)."""
    if kind not in KINDS or access.is_system(actor):
        return None
    policy = policy_of(cluster)
    if kind in ALWAYS_HELD:
        return ChangePolicy(cluster=cluster, approvers=policy.approvers if policy is not None else 1)
    if policy is None or kind not in policy.kinds:
        return None
    if policy.roles and not (access.roles(actor, cluster) & set(policy.roles)):
        return None
    return policy


def approvals_for(cluster: Cluster, kind: str) -> int:
    """How many approvers (never the author) the policy asks for an action of ``kind``: its count
    when it holds the kind, else one. Self-service requests use it too (console/requests)."""
    policy = policy_of(cluster)
    return policy.approvers if policy is not None and kind in policy.kinds else 1


def frozen(cluster: Cluster, kind: str) -> bool:
    """Whether a freeze window is in force on the cluster for an action of ``kind`` (every kind a
    policy can hold: the areas' governed mutations)."""
    return kind in KINDS and guard.refusal(cluster, rule=False) is not None


def check(actor, cluster: Cluster, kind: str) -> None:
    """In an area's mutation, after its permission check: refuse a governed action while a freeze
    window is in force (``guard.ChangeWindowClosed``, naming the window and its end), and a held
    action run directly. Break glass and an approved change's run pass (``passed``)."""
    if kind in _passed.get():
        return
    if kind in KINDS:
        guard.check_frozen(cluster)
    if required(actor, cluster, kind) is not None:
        raise ApprovalRequired(
            f"On cluster '{cluster.name}' {KINDS[kind].lower()} need approval: submit it for review "
            "(the page does this for you), or break glass as an admin with a written justification."
        )


@contextlib.contextmanager
def passed(*kinds: str) -> Iterator[None]:
    """Inside: the named kinds (none named: every kind) run without the gate - an approved change,
    break glass, or a self-service request approved by its own four eyes."""
    token = _passed.set(_passed.get() | frozenset(kinds or KINDS))
    try:
        yield
    finally:
        _passed.reset(token)
