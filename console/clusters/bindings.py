"""Granting and revoking per-cluster roles (a cluster's admins manage its bindings)."""

from __future__ import annotations

from collections.abc import Iterable

from django.core.exceptions import ValidationError

from console import access
from console.audit import recorded
from console.audit.refusals import refused_as
from console.clusters import audit_names
from console.models import Cluster, Role, RoleBinding


def _describe(binding: RoleBinding) -> dict:
    return {
        "subject": f"user:{binding.user.username}" if binding.user_id else f"group:{binding.group.name}",
        "role": binding.role,
        "namespaces": list(binding.namespaces or []),
        "principals": list(binding.principals or []),
    }


@refused_as(audit_names.ACCESS_GRANT, ValidationError)
def grant_role(
    *,
    actor,
    cluster: Cluster,
    role: str,
    user=None,
    group=None,
    namespaces: Iterable[str] = (),
    principals: Iterable[str] = (),
    source_ip: str | None = None,
) -> RoleBinding:
    """Bind a role on the cluster to a user or a group; requester bindings need a namespace or principal."""
    access.require(actor, cluster, access.ADMINISTER)
    namespaces, principals = sorted(set(namespaces)), sorted(set(principals))
    if role == Role.REQUESTER and not (namespaces or principals):
        raise ValidationError(
            "A requester binding needs at least one topic prefix or principal to request for."
        )
    if role != Role.REQUESTER and (namespaces or principals):
        raise ValidationError("Namespaces and principals only apply to requester bindings.")
    binding = RoleBinding(
        cluster=cluster, user=user, group=group, role=role, namespaces=namespaces, principals=principals
    )
    binding.full_clean()
    duplicate = RoleBinding.objects.filter(cluster=cluster, user=user, group=group, role=role).exists()
    if duplicate:
        raise ValidationError("This subject already holds that role on this cluster.")
    return recorded.save(
        binding,
        actor=actor,
        action=audit_names.ACCESS_GRANT,
        cluster=cluster,
        targets=lambda b: [_describe(b)["subject"]],
        after=_describe,
        source_ip=source_ip,
    )


@refused_as(audit_names.ACCESS_REVOKE)
def revoke_role(*, actor, binding: RoleBinding, source_ip: str | None = None) -> None:
    """Remove a binding; the audit event keeps what it granted."""
    access.require(actor, binding.cluster, access.ADMINISTER)
    described = _describe(binding)
    recorded.delete(
        binding,
        actor=actor,
        action=audit_names.ACCESS_REVOKE,
        cluster=binding.cluster,
        targets=[described["subject"]],
        before=described,
        source_ip=source_ip,
    )
