"""Effective access as Kafka's StandardAuthorizer decides it (KIP-4, KIP-290). Plain values in and out.

Super users first, then a DENY wins, then an ALLOW; a resource with no binding at all follows
``allow.everyone.if.no.acl.found``; otherwise denied by default. A binding matches when its principal
is the one asked or its type's wildcard, and its host is * or exactly the client's address
(``StandardAuthorizerData.findResult``). No I/O: ``acls/actions.py`` reads the bindings and facts.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, replace

from console.acls.core import OPERATIONS
from console.kafka.types import AclBinding

# An allowed operation that also grants another (Kafka's authorizer: READ/WRITE/DELETE/ALTER imply DESCRIBE).
IMPLIED_BY = {"DESCRIBE": ("READ", "WRITE", "DELETE", "ALTER"), "DESCRIBE_CONFIGS": ("ALTER_CONFIGS",)}


def resource_matches(b: AclBinding, resource_type: str, name: str) -> bool:
    if b.resource_type != resource_type:
        return False
    if b.pattern_type == "LITERAL":
        return b.resource_name in (name, "*")
    return b.pattern_type == "PREFIXED" and name.startswith(b.resource_name)


def principal_matches(b: AclBinding, principal: str) -> bool:
    kind = principal.split(":", 1)[0]
    return b.principal in (principal, f"{kind}:*")


OUTCOME_TEXT = {
    "SUPER_USER": "allowed (super user)",
    "ALLOWED": "allowed",
    "DENIED": "denied by a DENY",
    "DEFAULT_DENY": "denied (the resource has bindings, none allows this)",
    "NO_ACL_ALLOWED": "allowed (no binding on the resource; allow.everyone.if.no.acl.found=true)",
    "NO_ACL_DENIED": "denied (no binding on the resource; allow.everyone.if.no.acl.found=false)",
    "UNKNOWN": "unknown",
}
ANY_HOST = "*"


def _allowed(outcome: str) -> bool | None:
    if outcome == "UNKNOWN":
        return None
    return outcome in ("SUPER_USER", "ALLOWED", "NO_ACL_ALLOWED")


@dataclass(frozen=True)
class HostAccess:
    """The outcome for one operation from one client address that has bindings of its own."""

    host: str
    outcome: str
    deciding: tuple[AclBinding, ...] = ()
    note: str = ""

    @property
    def allowed(self) -> bool | None:
        return _allowed(self.outcome)


@dataclass(frozen=True)
class OperationAccess:
    """The outcome for one operation, as Kafka's StandardAuthorizer decides it.

    ``outcome``: SUPER_USER (allowed), ALLOWED / DENIED (a matching ALLOW / DENY binding),
    DEFAULT_DENY (the resource has bindings, none allows this), NO_ACL_ALLOWED / NO_ACL_DENIED (no
    binding on the resource at all: ``allow.everyone.if.no.acl.found``), or UNKNOWN when the
    answer depends on a broker setting the console does not know (``note`` says which).

    Asked for any host, ``outcome`` is the verdict from an address no binding names, and ``hosts``
    the addresses whose own bindings give another verdict; ``verdict`` says both in one sentence.
    """

    operation: str
    outcome: str
    deciding: tuple[AclBinding, ...] = ()
    note: str = ""
    hosts: tuple[HostAccess, ...] = ()
    verdict: str = ""

    @property
    def allowed(self) -> bool | None:
        return _allowed(self.outcome)


@dataclass(frozen=True)
class AuthorizerFacts:
    """The two broker settings the authorizer decides with, as far as they are known.

    ``super_users`` None and ``allow_if_no_acl`` None mean unknown (Kafka hides both from
    DescribeConfigs); ``*_from`` says where each known value came from.
    """

    super_users: frozenset[str] | None = None
    allow_if_no_acl: bool | None = None
    super_users_from: str = ""
    allow_if_no_acl_from: str = ""


def parse_super_users(value: str) -> frozenset[str]:
    """``super.users`` as Kafka reads it: principals separated by semicolons."""
    return frozenset(p.strip() for p in value.split(";") if p.strip())


def _decide(op, applying, principal, facts: AuthorizerFacts, resource_has_acls: bool) -> OperationAccess:
    if facts.super_users is not None and principal in facts.super_users:
        return OperationAccess(op, "SUPER_USER", note=f"{principal} is in super.users")
    deny = tuple(b for b in applying if b.permission == "DENY" and b.operation in (op, "ALL"))
    grants = (op, "ALL") + IMPLIED_BY.get(op, ())
    allow = tuple(b for b in applying if b.permission == "ALLOW" and b.operation in grants)
    if deny:
        decided = OperationAccess(op, "DENIED", deny)
    elif allow:
        return OperationAccess(op, "ALLOWED", allow)
    elif resource_has_acls:
        decided = OperationAccess(op, "DEFAULT_DENY")
    elif facts.allow_if_no_acl is None:
        return OperationAccess(
            op,
            "UNKNOWN",
            note="no binding on this resource: allow.everyone.if.no.acl.found decides (unknown)",
        )
    elif facts.allow_if_no_acl:
        return OperationAccess(op, "NO_ACL_ALLOWED", note="no binding on this resource")
    else:
        decided = OperationAccess(op, "NO_ACL_DENIED", note="no binding on this resource")
    if facts.super_users is None:
        return OperationAccess(
            op,
            "UNKNOWN",
            decided.deciding,
            note=f"{decided.outcome.lower()} unless {principal} is a super user (super.users unknown)",
        )
    return decided


def _text(decided: OperationAccess | HostAccess) -> str:
    text = OUTCOME_TEXT[decided.outcome]
    return f"{text} ({decided.note})" if decided.note and decided.outcome == "UNKNOWN" else text


def _with_hosts(decided: OperationAccess, hosts: list[HostAccess]) -> OperationAccess:
    differ = tuple(h for h in hosts if h.allowed != decided.allowed)
    verdict = _text(decided)
    if differ:
        verdict += " from any host except " + "; ".join(f"{h.host}: {_text(h)}" for h in differ)
    return replace(decided, hosts=differ, verdict=verdict)


def client_address(host: str) -> str | None:
    """The text Kafka compares a binding's host with: the client's address as Java's
    ``InetAddress.getHostAddress()`` writes it (IPv6 in full without leading zeros,
    0:0:0:0:0:0:0:1; an IPv4-mapped address as IPv4). None when ``host`` is no IP address."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        groups = (int.from_bytes(ip.packed[i : i + 2], "big") for i in range(0, 16, 2))
        return ":".join(f"{g:x}" for g in groups) + (f"%{ip.scope_id}" if ip.scope_id else "")
    return str(getattr(ip, "ipv4_mapped", None) or ip)


def _matchable(b: AclBinding) -> bool:
    return b.host == ANY_HOST or client_address(b.host) == b.host


def never_matching(
    bindings: Iterable[AclBinding], *, principal: str, resource_type: str, resource_name: str
) -> list[AclBinding]:
    """The principal's bindings on the resource whose host no client address is ever written as
    (``::1``, a host name): Kafka never applies them."""
    return [
        b
        for b in bindings
        if resource_matches(b, resource_type, resource_name)
        and principal_matches(b, principal)
        and not _matchable(b)
    ]


def evaluate(
    bindings: Iterable[AclBinding],
    *,
    principal: str,
    host: str,
    resource_type: str,
    resource_name: str,
    facts: AuthorizerFacts = AuthorizerFacts(),
) -> tuple[list[AclBinding], list[OperationAccess]]:
    """The bindings that apply to principal@host on the resource, and the outcome per operation:
    super users first, then a DENY wins, then an ALLOW; with no binding on the resource at all (for
    any principal) ``allow.everyone.if.no.acl.found`` decides, otherwise it is denied by default.

    Kafka matches a binding whose host is * or exactly the client's address as Java writes it
    (``client_address``; a binding written otherwise never applies, see ``never_matching``).
    ``host`` * means any host: every binding of the principal applies to some address, and each
    address named by one gets its own verdict (kept where it differs from the verdict from an
    unnamed address)."""
    bindings = list(bindings)
    on_resource = [b for b in bindings if resource_matches(b, resource_type, resource_name)]
    mine = [b for b in on_resource if principal_matches(b, principal) and _matchable(b)]
    host = host if host == ANY_HOST else (client_address(host) or host)
    applying = sorted(
        (b for b in mine if host == ANY_HOST or b.host in (ANY_HOST, host)),
        key=lambda b: (b.permission != "DENY", b.operation, b.pattern_type, b.resource_name, b.host),
    )
    anywhere = [b for b in applying if b.host in (ANY_HOST, host)]
    named = hosts_named(applying) if host == ANY_HOST else []
    ops = []
    for op in OPERATIONS.get(resource_type, ()):
        decided = _decide(op, anywhere, principal, facts, bool(on_resource))
        hosts = []
        for address in named:
            there = _decide(
                op,
                [b for b in applying if b.host in (ANY_HOST, address)],
                principal,
                facts,
                bool(on_resource),
            )
            hosts.append(HostAccess(address, there.outcome, there.deciding, there.note))
        ops.append(_with_hosts(decided, hosts))
    return applying, ops


def hosts_named(applying: Iterable[AclBinding]) -> list[str]:
    """The client addresses the applying bindings name (beyond *), in order."""
    return sorted({b.host for b in applying} - {ANY_HOST})


ANYONE = "*"  # the principal name that stands for "any principal of this type no binding names"


@dataclass(frozen=True)
class PrincipalAccess:
    """One principal's outcome per operation on one resource (a row of "who can do what on T").
    ``principal`` ``User:*`` is every User that no binding on the resource names and that is not a
    super user."""

    principal: str
    operations: tuple[OperationAccess, ...]

    @property
    def anyone(self) -> bool:
        return self.principal.endswith(":" + ANYONE)

    @property
    def allowed(self) -> tuple[str, ...]:
        return tuple(o.operation for o in self.operations if o.allowed)

    @property
    def unknown(self) -> tuple[str, ...]:
        return tuple(o.operation for o in self.operations if o.allowed is None)


@dataclass(frozen=True)
class PatternAccess:
    """A principal's outcome per operation on the resources one binding pattern covers (a row of
    "everything User:x can do"): for a PREFIXED pattern or the literal ``*``, a resource it covers
    that has no binding of its own (a longer prefix or a literal name may narrow that further)."""

    resource_type: str
    pattern_type: str
    resource_name: str
    operations: tuple[OperationAccess, ...]

    @property
    def allowed(self) -> tuple[str, ...]:
        return tuple(o.operation for o in self.operations if o.allowed)

    @property
    def denied(self) -> tuple[str, ...]:
        return tuple(o.operation for o in self.operations if o.allowed is False and o.deciding)

    @property
    def covers(self) -> str:
        if self.pattern_type == "PREFIXED":
            return f"names starting with {self.resource_name}"
        return f"every {self.resource_type.lower()}" if self.resource_name == ANY_HOST else self.resource_name


def who_can(
    bindings: Iterable[AclBinding], *, resource_type: str, resource_name: str, facts: AuthorizerFacts
) -> list[PrincipalAccess]:
    """Every principal whose access to the resource a binding or ``super.users`` decides, from any
    host, then one row per principal type for everyone else (``User:*``, not a super user): their
    outcome is what wildcard bindings and ``allow.everyone.if.no.acl.found`` give."""
    bindings = [b for b in bindings if b.resource_type == resource_type]
    on_resource = [b for b in bindings if resource_matches(b, resource_type, resource_name)]
    named = {b.principal for b in on_resource if _matchable(b) and not b.principal.endswith(":" + ANYONE)}
    named |= set(facts.super_users or ())
    kinds = sorted({p.split(":", 1)[0] for p in named | {b.principal for b in on_resource}} | {"User"})
    others = replace(facts, super_users=frozenset())  # everyone else is, by definition, no super user
    asked = [(p, facts) for p in sorted(named)] + [(f"{k}:{ANYONE}", others) for k in kinds]
    return [
        PrincipalAccess(p, tuple(_from_any_host(bindings, p, resource_type, resource_name, known)))
        for p, known in asked
    ]


def _from_any_host(bindings, principal: str, resource_type: str, name: str, facts) -> list[OperationAccess]:
    return evaluate(
        bindings,
        principal=principal,
        host=ANY_HOST,
        resource_type=resource_type,
        resource_name=name,
        facts=facts,
    )[1]


def _sample_name(pattern_type: str, resource_name: str) -> str:
    """A resource name the pattern covers and no other binding names literally: the literal name
    itself, ``*`` for the wildcard, a prefix followed by a character no Kafka name holds."""
    return resource_name + "\0" if pattern_type == "PREFIXED" else resource_name


def what_can(
    bindings: Iterable[AclBinding], *, principal: str, facts: AuthorizerFacts
) -> list[PatternAccess]:
    """Everything the principal's bindings (its own and its type's wildcard) decide, from any host:
    one row per resource pattern they name, with the outcome per operation there."""
    bindings = list(bindings)
    patterns = sorted(
        {
            (b.resource_type, b.pattern_type, b.resource_name)
            for b in bindings
            if principal_matches(b, principal) and _matchable(b)
        }
    )
    rows = []
    for resource_type, pattern_type, resource_name in patterns:
        of_type = [b for b in bindings if b.resource_type == resource_type]
        sample = _sample_name(pattern_type, resource_name)
        ops = _from_any_host(of_type, principal, resource_type, sample, facts)
        rows.append(PatternAccess(resource_type, pattern_type, resource_name, tuple(ops)))
    return rows
