"""ACLs: DescribeAcls, CreateAcls, DeleteAcls (KIP-4 semantics, KIP-290 pattern types).

Sent over kafka-python's protocol classes so the same code serves broker and controller
(KIP-919) connections; filters follow Kafka's matching (ANY, MATCH, LITERAL, PREFIXED).
"""

from __future__ import annotations

from typing import Any

from .base import GatewayBase
from .errors import KafkaOperationError, from_code
from .kp import check
from .types import OK, AclBinding, AclBindingFilter, Ok

RESOURCE_TYPES = {
    "UNKNOWN": 0,
    "ANY": 1,
    "TOPIC": 2,
    "GROUP": 3,
    "CLUSTER": 4,
    "TRANSACTIONAL_ID": 5,
    "DELEGATION_TOKEN": 6,
    "USER": 7,
}
PATTERN_TYPES = {"UNKNOWN": 0, "ANY": 1, "MATCH": 2, "LITERAL": 3, "PREFIXED": 4}
OPERATIONS = {
    "UNKNOWN": 0,
    "ANY": 1,
    "ALL": 2,
    "READ": 3,
    "WRITE": 4,
    "CREATE": 5,
    "DELETE": 6,
    "ALTER": 7,
    "DESCRIBE": 8,
    "CLUSTER_ACTION": 9,
    "DESCRIBE_CONFIGS": 10,
    "ALTER_CONFIGS": 11,
    "IDEMPOTENT_WRITE": 12,
    "CREATE_TOKENS": 13,
    "DESCRIBE_TOKENS": 14,
}
PERMISSIONS = {"UNKNOWN": 0, "ANY": 1, "DENY": 2, "ALLOW": 3}

_NAMES = {
    id(m): {v: k for k, v in m.items()} for m in (RESOURCE_TYPES, PATTERN_TYPES, OPERATIONS, PERMISSIONS)
}


def _code(table: dict[str, int], value: str, what: str) -> int:
    try:
        return table[value.upper()]
    except (KeyError, AttributeError):
        raise KafkaOperationError(42, "INVALID_REQUEST", f"unknown {what} {value!r}") from None


def _name(table: dict[str, int], code: int) -> str:
    return _NAMES[id(table)].get(code, "UNKNOWN")


def _binding(
    resource_type: int, name: str, pattern: int, principal: str, host: str, op: int, perm: int
) -> AclBinding:
    return AclBinding(
        _name(RESOURCE_TYPES, resource_type),
        name,
        _name(PATTERN_TYPES, pattern),
        principal,
        host,
        _name(OPERATIONS, op),
        _name(PERMISSIONS, perm),
    )


def _filter_fields(f: AclBindingFilter) -> dict[str, Any]:
    return dict(
        resource_type_filter=_code(RESOURCE_TYPES, f.resource_type, "resource type"),
        resource_name_filter=f.resource_name,
        pattern_type_filter=_code(PATTERN_TYPES, f.pattern_type, "pattern type"),
        principal_filter=f.principal,
        host_filter=f.host,
        operation=_code(OPERATIONS, f.operation, "operation"),
        permission_type=_code(PERMISSIONS, f.permission, "permission"),
    )


def validate_binding(b: AclBinding) -> None:
    """Reject what Kafka would reject before sending (types must be concrete, principal typed)."""
    for table, value, what in (
        (RESOURCE_TYPES, b.resource_type, "resource type"),
        (PATTERN_TYPES, b.pattern_type, "pattern type"),
        (OPERATIONS, b.operation, "operation"),
        (PERMISSIONS, b.permission, "permission"),
    ):
        if _code(table, value, what) <= 1:
            raise KafkaOperationError(42, "INVALID_REQUEST", f"{what} must be concrete, not {value!r}")
    if b.pattern_type.upper() == "MATCH":
        raise KafkaOperationError(42, "INVALID_REQUEST", "pattern type MATCH is only valid in filters")
    if ":" not in (b.principal or ""):
        raise KafkaOperationError(
            42, "INVALID_REQUEST", f"principal {b.principal!r} must look like 'User:name' or 'Group:name'"
        )


class AclsMixin(GatewayBase):
    """ACL reads and changes."""

    def _acl_send(self, request: Any) -> Any:
        return self._kp.send_to_controller(request) if self.conn.controller_mode else self._kp.send(request)

    def describe_acls(self, acl_filter: AclBindingFilter | None = None) -> tuple[AclBinding, ...]:
        """Every binding matching the filter (default: all bindings)."""
        from kafka.protocol.admin import DescribeAclsRequest

        request = DescribeAclsRequest(**_filter_fields(acl_filter or AclBindingFilter()))
        response = self._acl_send(request)
        check(response)
        return tuple(
            _binding(
                r.resource_type,
                r.resource_name,
                r.pattern_type,
                a.principal,
                a.host,
                a.operation,
                a.permission_type,
            )
            for r in response.resources
            for a in r.acls
        )

    def create_acls(self, bindings: list[AclBinding]) -> dict[AclBinding, Ok | KafkaOperationError]:
        """Create bindings (creating an existing one succeeds); per-binding result."""
        from kafka.protocol.admin import CreateAclsRequest

        out: dict[AclBinding, Ok | KafkaOperationError] = {}
        todo = []
        for b in dict.fromkeys(bindings):
            try:
                validate_binding(b)
                todo.append(b)
            except KafkaOperationError as err:
                out[b] = err
        if todo:
            C = CreateAclsRequest.AclCreation
            request = CreateAclsRequest(
                creations=[
                    C(
                        resource_type=RESOURCE_TYPES[b.resource_type.upper()],
                        resource_name=b.resource_name,
                        resource_pattern_type=PATTERN_TYPES[b.pattern_type.upper()],
                        principal=b.principal,
                        host=b.host,
                        operation=OPERATIONS[b.operation.upper()],
                        permission_type=PERMISSIONS[b.permission.upper()],
                    )
                    for b in todo
                ]
            )
            try:
                response = self._acl_send(request)
            except KafkaOperationError as err:
                out.update(dict.fromkeys(todo, err))
            else:
                for b, r in zip(todo, response.results, strict=False):
                    out[b] = from_code(r.error_code, r.error_message) or OK
        return {b: out[b] for b in dict.fromkeys(bindings)}

    def delete_acls(
        self, filters: list[AclBindingFilter]
    ) -> dict[AclBindingFilter, tuple[AclBinding, ...] | KafkaOperationError]:
        """Delete by filter; per filter, the bindings it matched and deleted (or the error).

        Show the operator ``describe_acls(filter)`` first: that is what this deletes.
        """
        from kafka.protocol.admin import DeleteAclsRequest

        out: dict[AclBindingFilter, tuple[AclBinding, ...] | KafkaOperationError] = {}
        todo = []
        fields = {}
        for f in dict.fromkeys(filters):
            try:
                fields[f] = _filter_fields(f)
                todo.append(f)
            except KafkaOperationError as err:
                out[f] = err
        if todo:
            F = DeleteAclsRequest.DeleteAclsFilter
            request = DeleteAclsRequest(filters=[F(**fields[f]) for f in todo])
            try:
                response = self._acl_send(request)
            except KafkaOperationError as err:
                out.update(dict.fromkeys(todo, err))
            else:
                for f, r in zip(todo, response.filter_results, strict=False):
                    err = from_code(r.error_code, r.error_message)
                    if err is not None:
                        out[f] = err
                        continue
                    matched = []
                    for m in r.matching_acls:
                        merr = from_code(m.error_code, m.error_message)
                        if merr is not None:
                            out[f] = merr
                            break
                        matched.append(
                            _binding(
                                m.resource_type,
                                m.resource_name,
                                m.pattern_type,
                                m.principal,
                                m.host,
                                m.operation,
                                m.permission_type,
                            )
                        )
                    else:
                        out[f] = tuple(matched)
        return {f: out[f] for f in dict.fromkeys(filters)}
