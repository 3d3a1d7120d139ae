"""ACL rules: the functional core of ACL management (KIP-4, KIP-290). Plain values in, plain values out.

Parsing pasted batches and validating bindings and filters before anything reaches Kafka; effective
access is decided in ``acls/authorizer.py``. No I/O: the shell in ``acls/actions.py`` calls the
gateway and audits.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any

import yaml
from django.conf import settings

from console.kafka.types import AclBinding, AclBindingFilter
from console.uploads import UploadError, load_json, load_yaml

BATCH_MAX = settings.ACL_BATCH_MAX
BATCH_TEXT_MAX = settings.ACL_BATCH_TEXT_MAX
NAME_MAX = 255
GROUPS_SHOWN = 200  # group counts listed on the page; the total number of groups is always shown

# Kafka's AclEntry.supportedOperations, plus ALL on every type.
OPERATIONS: dict[str, tuple[str, ...]] = {
    "TOPIC": ("READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"),
    "GROUP": ("READ", "DELETE", "DESCRIBE"),
    "CLUSTER": (
        "CREATE",
        "ALTER",
        "DESCRIBE",
        "CLUSTER_ACTION",
        "DESCRIBE_CONFIGS",
        "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE",
    ),
    "TRANSACTIONAL_ID": ("WRITE", "DESCRIBE"),
    "DELEGATION_TOKEN": ("DESCRIBE",),
    "USER": ("CREATE_TOKENS", "DESCRIBE_TOKENS"),
}
RESOURCE_TYPES = tuple(OPERATIONS)
ALL_OPERATIONS = tuple(dict.fromkeys(op for ops in OPERATIONS.values() for op in ops)) + ("ALL",)
PATTERN_TYPES = ("LITERAL", "PREFIXED")
FILTER_PATTERN_TYPES = ("ANY", "MATCH", "LITERAL", "PREFIXED")
PERMISSIONS = ("ALLOW", "DENY")
BINDING_FIELDS = (
    "resource_type",
    "resource_name",
    "pattern_type",
    "principal",
    "host",
    "operation",
    "permission",
)
_PRINCIPAL = re.compile(r"^(User|Group):[^\s\x00-\x1f\x7f]+$")
_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class AclValidationError(ValueError):
    """Bindings or filters that must not be sent; ``errors`` lists one sentence per problem."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def label(b: AclBinding) -> str:
    """A readable one-liner, also the binding's audit target."""
    return (
        f"{b.principal} {b.permission} {b.operation} on {b.resource_type}:{b.pattern_type}:"
        f"{b.resource_name} from {b.host}"
    )


def to_dict(b: AclBinding | AclBindingFilter) -> dict[str, Any]:
    return asdict(b)


def check_principal(value: str) -> str | None:
    if not _PRINCIPAL.match(value or "") or len(value) > NAME_MAX:
        return (
            f"principal '{value[:80]}' must look like User:name or Group:name (at most {NAME_MAX} characters)"
        )
    return None


def check_host(value: str) -> str | None:
    if value == "*":
        return None
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return f"host '{value[:80]}' must be * or an IP address"
    return None


def check_resource_name(resource_type: str, pattern_type: str, name: str) -> str | None:
    if not name:
        return "resource name is required"
    if len(name) > NAME_MAX or _CONTROL.search(name):
        return f"resource name must be at most {NAME_MAX} printable characters"
    if name == "*" and pattern_type == "PREFIXED":
        return "the wildcard * is a LITERAL name; a PREFIXED pattern needs a real prefix"
    if resource_type == "CLUSTER" and name != "kafka-cluster":
        return "the CLUSTER resource is always named kafka-cluster"
    if resource_type == "TOPIC" and name != "*" and (len(name) > 249 or not _TOPIC.match(name)):
        return f"topic name '{name[:80]}' may only use ASCII letters, digits, '.', '_' and '-' (at most 249)"
    return None


def validate_binding(data: Mapping[str, Any]) -> tuple[AclBinding | None, list[str]]:
    """A concrete binding from loose input (upper-cased enums, defaults for host/pattern/permission)."""
    unknown = sorted(set(data) - set(BINDING_FIELDS) - {"name"})
    if unknown:
        return None, [f"unknown field(s): {', '.join(str(u)[:40] for u in unknown)}"]
    values = {
        "resource_type": str(data.get("resource_type", "")).strip().upper(),
        "resource_name": str(data.get("resource_name", data.get("name", ""))).strip(),
        "pattern_type": str(data.get("pattern_type") or "LITERAL").strip().upper(),
        "principal": str(data.get("principal", "")).strip(),
        "host": str(data.get("host") or "*").strip(),
        "operation": str(data.get("operation", "")).strip().upper(),
        "permission": str(data.get("permission") or "ALLOW").strip().upper(),
    }
    errors = []
    if values["resource_type"] not in RESOURCE_TYPES:
        errors.append(f"resource type must be one of {', '.join(RESOURCE_TYPES)}")
    if values["pattern_type"] not in PATTERN_TYPES:
        errors.append("pattern type must be LITERAL or PREFIXED (MATCH and ANY are for filters)")
    supported = OPERATIONS.get(values["resource_type"], ALL_OPERATIONS) + ("ALL",)
    if values["operation"] not in supported:
        errors.append(
            f"operation '{values['operation'][:40]}' is not valid on {values['resource_type'] or 'it'}"
        )
    if values["permission"] not in PERMISSIONS:
        errors.append("permission must be ALLOW or DENY")
    errors += [e for e in (check_principal(values["principal"]), check_host(values["host"])) if e]
    if values["resource_type"] in RESOURCE_TYPES and values["pattern_type"] in PATTERN_TYPES:
        problem = check_resource_name(
            values["resource_type"], values["pattern_type"], values["resource_name"]
        )
        if problem:
            errors.append(problem)
    return (None, errors) if errors else (AclBinding(**values), [])


def validate_filter(data: Mapping[str, Any], *, for_delete: bool = False) -> AclBindingFilter:
    """A filter from form values; empty fields match anything. Raises AclValidationError."""
    rt = (data.get("resource_type") or "ANY").upper()
    pt = (data.get("pattern_type") or "ANY").upper()
    op = (data.get("operation") or "ANY").upper()
    perm = (data.get("permission") or "ANY").upper()
    name = (data.get("resource_name") or "").strip() or None
    principal = (data.get("principal") or "").strip() or None
    host = (data.get("host") or "").strip() or None
    errors = []
    if rt not in RESOURCE_TYPES + ("ANY",):
        errors.append("unknown resource type")
    if pt not in FILTER_PATTERN_TYPES:
        errors.append("pattern type must be ANY, MATCH, LITERAL or PREFIXED")
    if op not in ALL_OPERATIONS + ("ANY",):
        errors.append("unknown operation")
    if perm not in PERMISSIONS + ("ANY",):
        errors.append("permission must be ANY, ALLOW or DENY")
    if principal and check_principal(principal):
        errors.append(check_principal(principal))
    if host and check_host(host):
        errors.append(check_host(host))
    if name and (len(name) > NAME_MAX or _CONTROL.search(name)):
        errors.append(f"resource name must be at most {NAME_MAX} printable characters")
    if for_delete and not (name or principal or rt != "ANY"):
        errors.append("a delete filter must name a resource type, a resource name or a principal")
    if errors:
        raise AclValidationError(errors)
    return AclBindingFilter(rt, name, pt, principal, host, op, perm)


def exact_filter(b: AclBinding) -> AclBindingFilter:
    """The filter matching exactly this binding (what a confirmed delete sends)."""
    return AclBindingFilter(
        b.resource_type, b.resource_name, b.pattern_type, b.principal, b.host, b.operation, b.permission
    )


def parse_batch(text: str) -> tuple[list[AclBinding], list[AclBindingFilter]]:
    """Pasted YAML or JSON → (bindings to create, filters to delete). Raises AclValidationError.

    Accepted shapes: one binding, a list of bindings (all created), or
    ``{"create": [...], "delete": [...]}`` where delete entries are filters.
    """
    if len(text) > BATCH_TEXT_MAX:
        raise AclValidationError([f"the pasted batch is larger than {BATCH_TEXT_MAX // 1024} KiB"])
    try:
        data = load_yaml(text)  # bounded: size, depth, no anchors or aliases
    except UploadError as exc:
        prefix = "not valid YAML or JSON: " if exc.kind == "syntax" else ""
        raise AclValidationError([f"{prefix}{exc}"]) from None
    if isinstance(data, Mapping) and set(data) <= {"create", "delete"} and data:
        creates_raw, deletes_raw = data.get("create") or [], data.get("delete") or []
    elif isinstance(data, Mapping):
        creates_raw, deletes_raw = [data], []
    elif isinstance(data, list):
        creates_raw, deletes_raw = data, []
    else:
        raise AclValidationError(["paste a binding, a list of bindings, or {create: [...], delete: [...]}"])
    if not isinstance(creates_raw, list) or not isinstance(deletes_raw, list):
        raise AclValidationError(["'create' and 'delete' must be lists"])
    if len(creates_raw) + len(deletes_raw) > BATCH_MAX:
        raise AclValidationError([f"at most {BATCH_MAX} entries per batch"])
    errors: list[str] = []
    creates: list[AclBinding] = []
    for i, raw in enumerate(creates_raw, 1):
        binding, problems = validate_binding(raw) if isinstance(raw, Mapping) else (None, ["not a mapping"])
        errors += [f"create #{i}: {p}" for p in problems]
        if binding:
            creates.append(binding)
    deletes: list[AclBindingFilter] = []
    for i, raw in enumerate(deletes_raw, 1):
        try:
            if not isinstance(raw, Mapping):
                raise AclValidationError(["not a mapping"])
            deletes.append(validate_filter({k: str(v) for k, v in raw.items()}, for_delete=True))
        except AclValidationError as exc:
            errors += [f"delete #{i}: {e}" for e in exc.errors]
    if errors:
        raise AclValidationError(errors)
    return list(dict.fromkeys(creates)), list(dict.fromkeys(deletes))


def bindings_from_json(values: Iterable[str]) -> list[AclBinding]:
    """Bindings posted back from a confirmation page, validated again (the page could be forged)."""
    out, errors = [], []
    for raw in values:
        try:
            data = load_json(raw)
        except UploadError as exc:
            errors.append(f"a posted binding is not valid JSON ({exc})")
            continue
        binding, problems = validate_binding(data) if isinstance(data, dict) else (None, ["not a mapping"])
        errors += problems
        if binding:
            out.append(binding)
    if len(out) > BATCH_MAX:
        errors.append(f"at most {BATCH_MAX} bindings per change")
    if errors:
        raise AclValidationError(errors)
    return list(dict.fromkeys(out))


def _sort_key(group_by: str):
    if group_by == "resource":
        return lambda b: (
            b.resource_type,
            b.resource_name,
            b.pattern_type,
            b.principal,
            b.operation,
            b.permission,
            b.host,
        )
    return lambda b: (
        b.principal,
        b.resource_type,
        b.resource_name,
        b.pattern_type,
        b.operation,
        b.permission,
        b.host,
    )


def group_key(b: AclBinding, group_by: str) -> str:
    return f"{b.resource_type}:{b.pattern_type}:{b.resource_name}" if group_by == "resource" else b.principal


# ---- export: a file the batch form and ``kafka acls import`` read back, or kafka-acls.sh lines -----

EXPORT_FORMATS = ("yaml", "script")
_RESOURCE_OPTION = {"TOPIC": "--topic", "GROUP": "--group", "TRANSACTIONAL_ID": "--transactional-id"}


def kafka_acls_operation(operation: str) -> str:
    """The operation as kafka-acls.sh documents it: DESCRIBE_CONFIGS -> DescribeConfigs."""
    return "".join(part.capitalize() for part in operation.split("_"))


def export_yaml(bindings: Iterable[AclBinding], *, source: str) -> str:
    """``{create: [...]}``: what the batch form and ``kafka acls import`` take back unchanged."""
    ordered = sorted(bindings, key=_sort_key("resource"))
    head = f"# {len(ordered)} ACL binding(s) of {source}; import: the ACL batch form or `manage.py kafka acls import -f`\n"
    if len(ordered) > BATCH_MAX:
        head += f"# one import takes at most {BATCH_MAX} bindings: split this file\n"
    return head + yaml.safe_dump(
        {"create": [to_dict(b) for b in ordered]}, sort_keys=False, allow_unicode=True
    )


def export_script(bindings: Iterable[AclBinding], *, source: str) -> str:
    """A POSIX shell script of ``kafka-acls.sh --add`` lines, one per binding, every value quoted."""
    ordered = sorted(bindings, key=_sort_key("resource"))
    lines = [
        "#!/bin/sh",
        f"# {len(ordered)} ACL binding(s) of {source}, as kafka-acls.sh adds them.",
        "# BOOTSTRAP_SERVER: host:port of a broker; COMMAND_CONFIG: a client properties file (optional).",
        "set -eu",
        ': "${BOOTSTRAP_SERVER:?set BOOTSTRAP_SERVER to host:port}"',
        'KAFKA_ACLS="${KAFKA_ACLS:-kafka-acls.sh}"',
        'set -- --bootstrap-server "$BOOTSTRAP_SERVER"',
        'if [ -n "${COMMAND_CONFIG:-}" ]; then set -- "$@" --command-config "$COMMAND_CONFIG"; fi',
    ]
    for b in ordered:
        who = "allow" if b.permission == "ALLOW" else "deny"
        if b.resource_type == "CLUSTER":
            resource = ["--cluster"]
        else:
            resource = [_RESOURCE_OPTION[b.resource_type], b.resource_name]
        words = [
            "--add",
            f"--{who}-principal",
            b.principal,
            f"--{who}-host",
            b.host,
            "--operation",
            kafka_acls_operation(b.operation),
            *resource,
            "--resource-pattern-type",
            b.pattern_type.lower(),
        ]
        lines.append('"$KAFKA_ACLS" "$@" ' + " ".join(shlex.quote(w) for w in words))
    return "\n".join(lines) + "\n"
