"""Who may do what on which cluster. `can` answers, `require` enforces; every service calls require."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q

from console import system_actor as system
from console.models import Cluster, IdentityLink, Role, RoleBinding, SystemActor

VIEW = "cluster.view"
REQUEST = "request.submit"
MANAGE_TOPICS = "topic.manage"
MANAGE_CONFIGS = "config.manage"
MANAGE_ACLS = "acl.manage"
MANAGE_REASSIGNMENTS = "reassignment.manage"
MANAGE_GROUPS = "group.manage"  # reset a consumer group's offsets, delete a group or its offsets
MANAGE_ALERTS = "alert.manage"  # acknowledge alerts, set and end silences
APPROVE = "request.approve"
ADMINISTER = "cluster.admin"
VIEW_AUDIT = "audit.view"
RUN_OPERATIONS = "operation.run"

_OPERATOR = {
    VIEW,
    MANAGE_TOPICS,
    MANAGE_CONFIGS,
    MANAGE_ACLS,
    MANAGE_REASSIGNMENTS,
    MANAGE_GROUPS,
    MANAGE_ALERTS,
    APPROVE,
    RUN_OPERATIONS,
}

ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    Role.VIEWER: frozenset({VIEW}),
    Role.REQUESTER: frozenset({VIEW, REQUEST}),
    Role.OPERATOR: frozenset(_OPERATOR),
    Role.ADMIN: frozenset(_OPERATOR | {ADMINISTER, VIEW_AUDIT}),
    Role.AUDITOR: frozenset({VIEW, VIEW_AUDIT}),
}

# The system actor: a real user that cannot log in (no usable password), shown as console-system in
# the audit. Background work acts as it: executing auto-approved requests (topics, configs, ACLs),
# scheduled pipeline runs, and the janitor taking back owed throttles. It holds exactly these
# permissions on every cluster, and nothing cluster-less (it can register nothing). It is the user
# the SystemActor row marks (made by a migration), never whoever has the name: every login method
# refuses the reserved names (console.system_actor).
SYSTEM_USERNAME = system.SYSTEM_USERNAME
SYSTEM_PERMISSIONS = frozenset(
    {
        VIEW,
        MANAGE_TOPICS,
        MANAGE_CONFIGS,
        MANAGE_ACLS,
        MANAGE_REASSIGNMENTS,
        MANAGE_GROUPS,  # auto-approved consumer group offset resets
        RUN_OPERATIONS,
    }
)
_IS_SYSTEM = "_console_is_system"  # the answer cached on a user instance


def system_actor():
    """The system user: the one the SystemActor row marks (made again if the row has gone)."""
    with transaction.atomic():
        user = system.ensure_system_actor(
            User=get_user_model(), SystemActor=SystemActor, IdentityLink=IdentityLink
        )
        if user.has_usable_password() or user.is_superuser or user.is_staff or not user.is_active:
            user.set_unusable_password()  # whatever was done to it in the admin, it never logs in
            user.is_superuser = user.is_staff = False
            user.is_active = True
            user.save()
    setattr(user, _IS_SYSTEM, True)
    return user


def is_system(user) -> bool:
    """Whether this user is the marked system actor (its name proves nothing)."""
    pk = getattr(user, "pk", None)
    if pk is None:
        return False
    cached = getattr(user, _IS_SYSTEM, None)
    if cached is None:
        cached = not user.has_usable_password() and SystemActor.objects.filter(user_id=pk).exists()
        setattr(user, _IS_SYSTEM, cached)
    return cached


# Permissions whose scope a requester's namespaces narrow.
_NAMESPACED = {REQUEST}


def _bindings(user, cluster: Cluster):
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return RoleBinding.objects.none()
    return RoleBinding.objects.filter(cluster=cluster).filter(Q(user=user) | Q(group__in=user.groups.all()))


def roles(user, cluster: Cluster) -> set[str]:
    """The roles a user holds on a cluster (directly or through groups)."""
    return set(_bindings(user, cluster).values_list("role", flat=True))


def permissions(user, cluster: Cluster) -> frozenset[str]:
    if is_system(user):
        return SYSTEM_PERMISSIONS
    if getattr(user, "is_superuser", False) and user.is_active:
        return frozenset().union(*ROLE_PERMISSIONS.values())
    granted: set[str] = set()
    for role in roles(user, cluster):
        granted |= ROLE_PERMISSIONS[role]
    return frozenset(granted)


def in_namespace(user, cluster: Cluster, resource: str) -> bool:
    """True when a requester binding's topic prefixes or principals cover the resource."""
    for binding in _bindings(user, cluster).filter(role=Role.REQUESTER):
        if resource in (binding.principals or []):
            return True
        if any(resource.startswith(prefix) for prefix in binding.namespaces or [] if prefix):
            return True
    return False


def can(user, cluster: Cluster | None, perm: str, resource: str | None = None) -> bool:
    """Whether the user holds perm on the cluster (and, for namespaced perms, on the resource)."""
    if cluster is None:
        # Cluster-less actions (registering a new cluster) are for superusers only.
        return bool(getattr(user, "is_superuser", False) and user.is_active)
    granted = permissions(user, cluster)
    if perm not in granted:
        return False
    if perm in _NAMESPACED and resource is not None and not getattr(user, "is_superuser", False):
        operator_like = bool(granted & {MANAGE_TOPICS})
        return operator_like or in_namespace(user, cluster, resource)
    return True


def require(user, cluster: Cluster | None, perm: str, resource: str | None = None) -> None:
    """Raise PermissionDenied with a reason an operator can act on."""
    if can(user, cluster, perm, resource):
        return
    where = f"on cluster '{cluster.name}'" if cluster is not None else "(superusers only)"
    what = f" for '{resource}'" if resource else ""
    raise PermissionDenied(f"You need the '{perm}' permission {where}{what}.")


def can_view_any_audit(user) -> bool:
    """Whether the user may open the audit pages at all (auditor or admin somewhere, or superuser)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return RoleBinding.objects.filter(
        Q(user=user) | Q(group__in=user.groups.all()), role__in=[Role.AUDITOR, Role.ADMIN]
    ).exists()


def visible_clusters(user):
    """Clusters a user may see at all."""
    if getattr(user, "is_superuser", False) and user.is_active:
        return Cluster.objects.all()
    if not getattr(user, "is_authenticated", False):
        return Cluster.objects.none()
    return Cluster.objects.filter(
        Q(bindings__user=user) | Q(bindings__group__in=user.groups.all())
    ).distinct()
