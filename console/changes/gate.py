"""Whether an operator action needs approval, and the only ways past the gate: running an approved
change request, or an admin's audited break glass.

The areas' mutations call ``check`` (topics, configs, acls, groups, reassignment, throttles,
elections):
a gated action called directly (a page, the API, the CLI) is refused with ApprovalRequired, so no
path skips the review. The change runner and break glass set a context for the kind they run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from django.core.exceptions import PermissionDenied

from console import access
from console.models import Cluster
from console.models.changes import ChangePolicy

# The action kinds a policy can gate (the value stored in ChangePolicy.kinds) and how pages name
# them; each has a held kind its area declares (<area>/held.py) and a page that submits it.
# "group.reset" holds deleting a group or its committed offsets of a topic too: either puts the
# group's consumers back at auto.offset.reset, a reset in effect, so a policy holding resets
# cannot be walked round by deleting instead (and existing policies hold them from the start).
KINDS: dict[str, str] = {
    "topic.create": "Topic creations",
    "topic.delete": "Topic deletions",
    "topic.partitions": "Partition increases",
    "config": "Topic config changes",
    "broker.config": "Broker config changes",
    "acl": "ACL changes",
    "reassignment": "Reassignments",
    "throttle": "Throttle changes of running reassignments",
    "election": "Leader elections",
    "group.reset": "Consumer group offset resets and deletions",
}
# The permission each kind's own action needs: holding an action for review needs it too.
PERMISSIONS: dict[str, str] = {
    "topic.create": access.MANAGE_TOPICS,
    "topic.delete": access.MANAGE_TOPICS,
    "topic.partitions": access.MANAGE_TOPICS,
    "config": access.MANAGE_CONFIGS,
    "broker.config": access.MANAGE_CONFIGS,
    "acl": access.MANAGE_ACLS,
    "reassignment": access.MANAGE_REASSIGNMENTS,
    "throttle": access.MANAGE_REASSIGNMENTS,
    "election": access.MANAGE_REASSIGNMENTS,
    "group.reset": access.MANAGE_GROUPS,
}
MAX_APPROVERS = 2

_passed: ContextVar[frozenset[str]] = ContextVar("change_gate_passed", default=frozenset())


class ApprovalRequired(PermissionDenied):
    """The cluster's change-control policy holds this action for approval."""


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


def check(actor, cluster: Cluster, kind: str) -> None:
    """In an area's mutation, after its permission check: refuse a held action run directly."""
    if kind in _passed.get():
        return
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
