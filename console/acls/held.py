"""Held ACL changes: the exact bindings to delete (first) and to create, each with whether it is
there now; drift is any of them appearing or disappearing before the run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from console import access
from console.acls import actions as acls
from console.acls import core as acl_core
from console.changes import gate
from console.changes.kinds import (
    ChangeInvalid,
    Checked,
    HeldKind,
    Prepared,
    Requested,
    checked,
    outside_namespace,
    payload_mapping,
    register,
    review,
)
from console.kafka.types import AclBinding
from console.models.requests import RequestKind

# The policy kind of this area (console/changes/gate.py lists what the areas declare).
ACL = gate.declare("acl", "ACL changes", access.MANAGE_ACLS)


def _bindings(entries: Iterable[Mapping[str, Any]]) -> list[AclBinding]:
    out, errors = [], []
    for data in entries:
        binding, problems = acl_core.validate_binding(data)
        errors += problems
        if binding is not None:
            out.append(binding)
    if errors:
        raise ChangeInvalid(errors)
    return out


def _review(actor, cluster, payload: Mapping[str, Any]) -> dict[str, Any]:
    rows, pinned, bad = [], [], []
    changes = [(action, b) for action in ("delete", "create") for b in _bindings(payload[action])]
    filters = [acl_core.exact_filter(b) for _, b in changes]  # each matches its own binding only
    there = set(acls.preview_delete(actor=actor, cluster=cluster, filters=filters))
    for action, b in changes:
        present = b in there
        before = "present" if present else "absent"
        after = "deleted" if action == "delete" else ("already present" if present else "created")
        if action == "delete" and not present:
            bad.append(f"the binding to delete is not there: {acl_core.label(b)}")
        resource = f"{b.resource_type}:{b.pattern_type}:{b.resource_name}"
        rows.append([action, b.principal, b.permission, b.operation, resource, b.host, before, after])
        pinned.append([action, acl_core.label(b), present])
    return review(
        ["change", "principal", "permission", "operation", "resource", "host", "before", "after"], rows,
        ok=not bad, kafka="; ".join(bad) or "every binding to delete is there now (DescribeAcls)", pinned=pinned,
    )  # fmt: skip


def prepare_acl_change(actor, cluster, deletes: list[AclBinding], creates: list[AclBinding]) -> Prepared:
    deletes, creates = list(dict.fromkeys(deletes)), list(dict.fromkeys(creates))
    if not deletes and not creates:
        raise ChangeInvalid(["nothing to change"])
    if len(deletes) + len(creates) > acl_core.BATCH_MAX:
        raise ChangeInvalid([f"at most {acl_core.BATCH_MAX} bindings per change"])
    payload = {
        "delete": [acl_core.to_dict(b) for b in deletes],
        "create": [acl_core.to_dict(b) for b in creates],
    }
    first = (deletes + creates)[0]
    return checked(Prepared(
        RequestKind.CHANGE_ACL, "acl", f"acl:{acl_core.label(first)}" + (" …" if len(deletes) + len(creates) > 1 else ""),
        payload, _review(actor, cluster, payload),
        f"ACL change: delete {len(deletes)}, create {len(creates)} binding(s)",
    ))  # fmt: skip


def _run(
    actor, cluster, payload, request_id: str, *, on_behalf_of="", retry=False, pinned=False
) -> tuple[bool, str]:
    """Delete then create the bindings (creating one that exists again converges)."""
    change = acls.change_acls(
        actor=actor,
        cluster=cluster,
        deletes=_bindings(payload["delete"]),
        creates=_bindings(payload["create"]),
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    if not change.ok:
        failed = [r for r in change.results if not r.ok]
        return False, "; ".join(f"{r.action} {acl_core.label(r.binding)}: {r.message}" for r in failed[:10])
    return True, f"deleted {len(payload['delete'])}, created {len(payload['create'])} binding(s)"


def _request(user, cluster, payload, *, approving: bool = False) -> Checked:
    """A requester's ACL: its principal and resource in their namespaces, never cluster-wide."""
    errors: list[str] = []
    fields = payload_mapping(payload, "binding", errors)
    if errors:
        raise ChangeInvalid(errors)
    binding, errors = acl_core.validate_binding(fields)
    if binding is not None:
        errors += outside_namespace(user, cluster, "Principal", binding.principal)
        if binding.resource_type == "CLUSTER":
            errors.append("cluster-wide ACLs cannot be requested; ask an operator")
        else:
            errors += outside_namespace(user, cluster, "Resource", binding.resource_name)
    if errors:
        raise ChangeInvalid(errors)
    return Checked(
        binding.principal, {"binding": acl_core.to_dict(binding)}, f"ACL: {acl_core.label(binding)}"
    )


register(
    HeldKind(
        name=RequestKind.CHANGE_ACL,
        gate="acl",
        prepare=prepare_acl_change,
        review=_review,
        run=_run,
        requested=Requested(
            RequestKind.ACL_CREATE, _request, lambda p: {"delete": [], "create": [dict(p["binding"])]}
        ),
    )
)
