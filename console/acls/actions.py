"""ACLs: list, preview deletes, change (deletes before adds), effective access (KIP-4, KIP-290).

The imperative shell: each service checks access, calls the gateway and audits every change with the
bindings it affected. Parsing and validation live in ``acls/core.py``, evaluation in ``acls/authorizer.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from console import access, collector
from console.acls import audit_names
from console.acls import core as acl_rules
from console.acls.authorizer import (
    ANY_HOST,
    AuthorizerFacts,
    OperationAccess,
    PatternAccess,
    PrincipalAccess,
    client_address,
    evaluate,
    hosts_named,
    never_matching,
    parse_super_users,
    what_can,
    who_can,
)
from console.acls.core import (
    GROUPS_SHOWN,
    NAME_MAX,
    RESOURCE_TYPES,
    AclValidationError,
    _sort_key,
    check_host,
    check_principal,
    exact_filter,
    group_key,
    label,
    to_dict,
    validate_binding,
)
from console.audit import outcomes as outcomes_log
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import ConfigResource, KafkaOperationError
from console.kafka.types import AclBinding, AclBindingFilter
from console.models import Cluster


@dataclass(frozen=True)
class AclListing:
    """One page of bindings (sorted by group), the group counts and the total."""

    rows: list[AclBinding]
    total: int
    groups: list[tuple[str, int]]  # the first GROUPS_SHOWN groups by key
    group_by: str
    page: int
    pages: int
    group_count: int = 0


# A cluster's bindings (50,000 and more) are read, counted and sorted whole for one page: acyclic
# objects the collector would otherwise walk again and again while they live (console.collector).
@collector.paused()
def list_acls(
    *,
    actor,
    cluster: Cluster,
    acl_filter: AclBindingFilter,
    group_by: str = "principal",
    page: int = 1,
    page_size: int = 100,
) -> AclListing:
    """Bindings matching the filter (one DescribeAcls), grouped by principal or resource, paged."""
    access.require(actor, cluster, access.MANAGE_ACLS)
    group_by = "resource" if group_by == "resource" else "principal"
    bindings = gateway_for(cluster).describe_acls(acl_filter)
    counts = Counter(group_key(b, group_by) for b in bindings)
    pages = max(1, -(-len(bindings) // page_size))
    page = min(max(1, page), pages)
    ordered = sorted(bindings, key=_sort_key(group_by))
    rows = ordered[(page - 1) * page_size : page * page_size]
    groups = sorted(counts.items())[:GROUPS_SHOWN]
    return AclListing(rows, len(bindings), groups, group_by, page, pages, len(counts))


def export_acls(*, actor, cluster: Cluster, filters: Iterable[AclBindingFilter], fmt: str) -> tuple[str, str]:
    """The bindings any of the filters matches as a file: (file name, text), ``fmt`` yaml (the batch
    form's and ``kafka acls import``'s input) or script (kafka-acls.sh lines)."""
    access.require(actor, cluster, access.MANAGE_ACLS)
    if fmt not in acl_rules.EXPORT_FORMATS:
        raise AclValidationError([f"format must be one of {', '.join(acl_rules.EXPORT_FORMATS)}"])
    gateway = gateway_for(cluster)
    bindings = list(dict.fromkeys(b for f in filters for b in gateway.describe_acls(f)))
    source = f"cluster {cluster.name}"
    if fmt == "yaml":
        return f"{cluster.name}-acls.yaml", acl_rules.export_yaml(bindings, source=source)
    return f"{cluster.name}-acls.sh", acl_rules.export_script(bindings, source=source)


def preview_delete(*, actor, cluster: Cluster, filters: Iterable[AclBindingFilter]) -> list[AclBinding]:
    """Exactly the bindings the filters match now (DescribeAcls with the same filters)."""
    access.require(actor, cluster, access.MANAGE_ACLS)
    gateway = gateway_for(cluster)
    matched: dict[AclBinding, None] = {}
    for f in filters:
        matched.update(dict.fromkeys(gateway.describe_acls(f)))
    return sorted(matched, key=_sort_key("principal"))


@dataclass(frozen=True)
class BindingResult:
    action: str  # "delete" or "create"
    binding: AclBinding
    ok: bool
    message: str = ""


@dataclass
class AclChange:
    """Per-binding outcomes of a change, deletes first."""

    results: list[BindingResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def failed(self) -> int:
        return sum(not r.ok for r in self.results)


def _error_text(err: KafkaOperationError) -> str:
    return f"{err.name}: {err.operator_text}" if getattr(err, "operator_text", "") else f"{err.name}: {err}"


def _confirm(gateway, binding: AclBinding, present: bool) -> bool:
    """After a timeout the change may still have happened: re-read instead of assuming failure."""
    try:
        return bool(gateway.describe_acls(exact_filter(binding))) == present
    except KafkaOperationError:
        return False


def _send(gateway, action: str, bindings: list[AclBinding]) -> list[BindingResult]:
    """The deletes (by exact filter) or the creates in one request, a result per binding: a timeout
    is confirmed by re-reading, and deleting a binding already gone converges (what was asked)."""
    if not bindings:
        return []
    deleting = action == "delete"
    key = exact_filter if deleting else (lambda b: b)
    done = "deleted" if deleting else "created"
    try:
        outcome = (gateway.delete_acls if deleting else gateway.create_acls)([key(b) for b in bindings])
    except KafkaOperationError as exc:
        outcome = {key(b): exc for b in bindings}
    results = []
    for b in bindings:
        got = outcome.get(key(b))
        if not isinstance(got, KafkaOperationError):
            results.append(BindingResult(action, b, True, done if got or not deleting else "already absent"))
        elif "TIMED_OUT" in got.name and _confirm(gateway, b, present=not deleting):
            results.append(BindingResult(action, b, True, f"{done} (confirmed after a timeout)"))
        else:
            results.append(BindingResult(action, b, False, _error_text(got)))
    return results


def _outcome(actor, cluster, action, results, *, source_ip, on_behalf_of, operation=None) -> dict | None:
    """The outcome event of the deletes or the creates (None when there were none)."""
    if not results:
        return None
    bindings = [to_dict(r.binding) for r in results]
    return {
        "actor": actor,
        "action": action,
        "cluster": cluster,
        "targets": [f"acl:{label(r.binding)}" for r in results],
        "params": {"bindings": bindings},
        "before": bindings if action == audit_names.ACL_DELETE else None,
        "after": bindings if action == audit_names.ACL_CREATE else None,
        "outcomes": {f"acl:{label(r.binding)}": {"ok": r.ok, "message": r.message} for r in results},
        "operation": operation,
        "source_ip": source_ip,
        "on_behalf_of": on_behalf_of,
    }


@refused_as(audit_names.ACL_CHANGE, AclValidationError)
def change_acls(
    *,
    actor,
    cluster: Cluster,
    deletes: Iterable[AclBinding] = (),
    creates: Iterable[AclBinding] = (),
    source_ip: str | None = None,
    on_behalf_of: str = "",
    operation=None,
    request_id: str = "",
) -> AclChange:
    """Delete exact bindings, then create bindings (KIP-4: deletes before adds); per-binding results."""
    access.require(actor, cluster, access.MANAGE_ACLS)
    gate.check(actor, cluster, "acl")
    deletes, creates = list(dict.fromkeys(deletes)), list(dict.fromkeys(creates))
    problems = [p for b in deletes + creates for p in validate_binding(to_dict(b))[1]]
    if problems:
        raise AclValidationError(problems)
    if not deletes and not creates:
        raise AclValidationError(["nothing to change"])
    if len(deletes) + len(creates) > acl_rules.BATCH_MAX:
        raise AclValidationError([f"at most {acl_rules.BATCH_MAX} bindings per change"])
    req = outcomes_log.requested(
        actor=actor,
        action=audit_names.ACL_CHANGE,
        cluster=cluster,
        targets=[f"acl:{label(b)}" for b in deletes + creates],
        params={"delete": [to_dict(b) for b in deletes], "create": [to_dict(b) for b in creates]},
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        operation=operation,
        request_id=request_id,
    )
    gateway = gateway_for(cluster)
    change = AclChange(_send(gateway, "delete", deletes))  # KIP-4: deletes before adds
    change.results += _send(gateway, "create", creates)
    kw = {"source_ip": source_ip, "on_behalf_of": on_behalf_of, "operation": operation}
    records = [
        _outcome(
            actor, cluster, audit_names.ACL_DELETE, [r for r in change.results if r.action == "delete"], **kw
        ),
        _outcome(
            actor, cluster, audit_names.ACL_CREATE, [r for r in change.results if r.action == "create"], **kw
        ),
    ]
    outcomes_log.settle_all(req, [r for r in records if r is not None])
    return change


@dataclass(frozen=True)
class EffectiveAccess:
    """The answer to "may this principal do X here": ``host`` * means from any host, with ``hosts``
    the client addresses that bindings of their own single out (each operation says how)."""

    principal: str
    host: str
    resource_type: str
    resource_name: str
    applying: list[AclBinding]
    operations: list[OperationAccess]
    facts: AuthorizerFacts = AuthorizerFacts()
    hosts: list[str] = field(default_factory=list)
    never_matching: list[AclBinding] = field(default_factory=list)  # hosts no client address matches
    kind: str = "both"


def effective_access(
    *, actor, cluster: Cluster, principal: str, resource_type: str, resource_name: str, host: str = "*"
) -> EffectiveAccess:
    """Why can (or can't) this principal do X on this resource: the bindings and the outcome per
    operation, from ``host`` or (blank or *) from any host, with each address a binding names."""
    access.require(actor, cluster, access.MANAGE_ACLS)
    host = (host or "").strip() or ANY_HOST  # blank: from any host
    errors = [e for e in (check_principal(principal), check_host(host)) if e]
    errors += _check_resource(resource_type, resource_name)
    if errors:
        raise AclValidationError(errors)
    gateway = gateway_for(cluster)
    candidates = gateway.describe_acls(AclBindingFilter(resource_type=resource_type))
    facts = authorizer_facts(cluster, gateway)
    applying, ops = evaluate(
        candidates,
        principal=principal,
        host=host,
        resource_type=resource_type,
        resource_name=resource_name,
        facts=facts,
    )
    named = hosts_named(applying) if host == ANY_HOST else []
    never = never_matching(
        candidates, principal=principal, resource_type=resource_type, resource_name=resource_name
    )
    asked = host if host == ANY_HOST else (client_address(host) or host)  # as Kafka writes it
    return EffectiveAccess(principal, asked, resource_type, resource_name, applying, ops, facts, named, never)


@dataclass(frozen=True)
class AccessByResource:
    """Who can do what on one resource: each principal a binding or ``super.users`` names, then
    everyone else (``User:*``), from any host."""

    resource_type: str
    resource_name: str
    principals: list[PrincipalAccess]
    facts: AuthorizerFacts = AuthorizerFacts()
    kind: str = "resource"


@dataclass(frozen=True)
class AccessByPrincipal:
    """Everything one principal's bindings decide: one row per resource pattern, from any host."""

    principal: str
    patterns: list[PatternAccess]
    facts: AuthorizerFacts = AuthorizerFacts()
    super_user: bool | None = False  # None: super.users unknown
    kind: str = "principal"


def _check_resource(resource_type: str, resource_name: str) -> list[str]:
    if resource_type not in RESOURCE_TYPES:
        return ["unknown resource type"]
    if not resource_name or len(resource_name) > NAME_MAX:
        return ["resource name is required"]
    return []


def access_to_resource(
    *, actor, cluster: Cluster, resource_type: str, resource_name: str
) -> AccessByResource:
    """Who can read, write, ... this resource: "who can read topic T"."""
    access.require(actor, cluster, access.MANAGE_ACLS)
    errors = _check_resource(resource_type, resource_name)
    if errors:
        raise AclValidationError(errors)
    gateway = gateway_for(cluster)
    bindings = gateway.describe_acls(AclBindingFilter(resource_type=resource_type))
    facts = authorizer_facts(cluster, gateway)
    rows = who_can(bindings, resource_type=resource_type, resource_name=resource_name, facts=facts)
    return AccessByResource(resource_type, resource_name, rows, facts)


def access_of_principal(*, actor, cluster: Cluster, principal: str) -> AccessByPrincipal:
    """Everything this principal can do: "everything User:x can do"."""
    access.require(actor, cluster, access.MANAGE_ACLS)
    problem = check_principal(principal)
    if problem:
        raise AclValidationError([problem])
    gateway = gateway_for(cluster)
    bindings = gateway.describe_acls(AclBindingFilter())
    facts = authorizer_facts(cluster, gateway)
    su = None if facts.super_users is None else principal in facts.super_users
    return AccessByPrincipal(principal, what_can(bindings, principal=principal, facts=facts), facts, su)


def effective(
    *, actor, cluster: Cluster, principal: str, resource_type: str, resource_name: str, host: str = ""
) -> EffectiveAccess | AccessByResource | AccessByPrincipal:
    """Effective access both ways, by what is asked: a principal and a resource (the outcome per
    operation and why), a principal alone (everything it can do), a resource alone (who can do what
    on it). A host narrows only the first question."""
    principal, resource_name, host = (
        (principal or "").strip(),
        (resource_name or "").strip(),
        (host or "").strip(),
    )
    if principal and resource_name:
        return effective_access(
            actor=actor,
            cluster=cluster,
            principal=principal,
            resource_type=resource_type,
            resource_name=resource_name,
            host=host,
        )
    access.require(actor, cluster, access.MANAGE_ACLS)
    if host not in ("", ANY_HOST):
        raise AclValidationError(["a host applies only when both a principal and a resource are given"])
    if principal:
        return access_of_principal(actor=actor, cluster=cluster, principal=principal)
    if resource_name:
        return access_to_resource(
            actor=actor, cluster=cluster, resource_type=resource_type, resource_name=resource_name
        )
    raise AclValidationError(["give a principal, a resource, or both"])


def authorizer_facts(cluster: Cluster, gateway) -> AuthorizerFacts:
    """super.users and allow.everyone.if.no.acl.found: from a broker's configs where Kafka shows
    them (it reports both as sensitive, without a value), else as the cluster's admins stated them
    in its settings, else unknown."""
    shown: dict[str, str] = {}
    broker = ""
    try:
        info = gateway.describe_cluster()
        if info.brokers and info.endpoint_type == "broker":
            broker = str(info.brokers[0].id)
            entries = gateway.describe_configs([ConfigResource("BROKER", broker)])[
                ConfigResource("BROKER", broker)
            ]
            if not isinstance(entries, KafkaOperationError):
                shown = {
                    n: e.value
                    for n, e in entries.items()
                    if n in ("super.users", "allow.everyone.if.no.acl.found") and e.value is not None
                }
    except KafkaOperationError:
        shown = {}
    super_users, su_from = None, ""
    if "super.users" in shown:
        super_users, su_from = parse_super_users(shown["super.users"]), f"Kafka (broker {broker})"
    elif cluster.acl_super_users.strip():
        super_users, su_from = parse_super_users(cluster.acl_super_users), "the cluster's settings"
    allow, allow_from = None, ""
    if "allow.everyone.if.no.acl.found" in shown:
        allow = shown["allow.everyone.if.no.acl.found"].strip().lower() == "true"
        allow_from = f"Kafka (broker {broker})"
    elif cluster.acl_allow_if_no_acl:
        allow, allow_from = cluster.acl_allow_if_no_acl == "true", "the cluster's settings"
    return AuthorizerFacts(super_users, allow, su_from, allow_from)


def _reread_acls(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: whether each binding the change named is on Kafka now."""
    gateway = gateway_for(cluster)
    state = {}
    for data in [*params.get("delete", []), *params.get("create", [])]:
        binding, problems = validate_binding(data)
        if binding is not None and not problems:
            state[f"acl:{label(binding)}"] = {"present": bool(gateway.describe_acls(exact_filter(binding)))}
    return state


outcomes_log.register_reader(audit_names.ACL_CHANGE, _reread_acls)
