"""A user's IdP-derived group memberships, recomputed at each login, and the audit of what that did
to their roles."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Q

from console.audit import store
from console.identity import audit_names, core
from console.models import RoleBinding


def roles_by_cluster(user) -> dict[str, set[str]]:
    """Every role the user holds, directly or through a group, per cluster name."""
    held: dict[str, set[str]] = defaultdict(set)
    rows = RoleBinding.objects.filter(Q(user=user) | Q(group__in=user.groups.all())).values_list(
        "cluster__name", "role"
    )
    for cluster, role in rows:
        held[cluster].add(role)
    return dict(held)


def apply_idp_groups(
    *, user, provider: str, idp_groups: Iterable[str], source_ip: str | None = None
) -> core.GroupPlan:
    """Make the user's IdP-derived groups exactly those the provider named at this login (creating the
    console groups not seen before); audit the change with the roles gained and lost per cluster."""
    idp_groups = list(idp_groups)
    with transaction.atomic():
        current = list(user.groups.values_list("name", flat=True))
        plan = core.plan_groups(provider, idp_groups, current)
        if not (plan.add or plan.remove):
            return plan
        before = roles_by_cluster(user)
        created = []
        for name in plan.add:
            group, new = Group.objects.get_or_create(name=name)
            if new:
                created.append(name)
            user.groups.add(group)
        if plan.remove:
            user.groups.remove(*Group.objects.filter(name__in=plan.remove))
        after = roles_by_cluster(user)
        held = sorted(n for n in current if core.is_idp_group(n))
        store.record(
            actor=user,
            action=audit_names.GROUPS_CHANGE,
            targets=[f"user:{user.get_username()}", *(f"group:{n}"[:200] for n in plan.add + plan.remove)],
            params={
                "provider": provider,
                "added": list(plan.add),
                "removed": list(plan.remove),
                "groups_created": created,
                "skipped": list(plan.skipped),
                "roles": core.role_changes(before, after),
            },
            before={"groups": held},
            after={"groups": sorted((set(held) - set(plan.remove)) | set(plan.add))},
            outcome="success",
            source_ip=source_ip,
        )
    return plan
