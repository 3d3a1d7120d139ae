"""DescribeAcls, CreateAcls, DeleteAcls with Kafka's AclBindingFilter matching semantics."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
)

from sandbox.apis import CloseConnection, RequestContext, api
from sandbox.state import AclBinding

ANY = 1
MATCH, LITERAL, PREFIXED = 2, 3, 4
CLUSTER = 4
WILDCARD = "*"


def matches(f: Any, acl: AclBinding) -> bool:
    """Kafka's ResourcePatternFilter.matches + AccessControlEntryFilter.matches."""
    if f.resource_type_filter != ANY and f.resource_type_filter != acl.resource_type:
        return False
    pt = f.pattern_type_filter
    if pt not in (ANY, MATCH) and pt != acl.pattern_type:
        return False
    name = f.resource_name_filter
    if name is not None:
        if pt in (ANY, acl.pattern_type):
            if name != acl.resource_name:
                return False
        elif acl.pattern_type == LITERAL:
            if name != acl.resource_name and acl.resource_name != WILDCARD:
                return False
        elif acl.pattern_type == PREFIXED:
            if not name.startswith(acl.resource_name):
                return False
    if f.principal_filter is not None and f.principal_filter != acl.principal:
        return False
    if f.host_filter is not None and f.host_filter != acl.host:
        return False
    if f.operation != ANY and f.operation != acl.operation:
        return False
    return f.permission_type == ANY or f.permission_type == acl.permission_type


def _check_filter(f: Any) -> None:
    if 0 in (f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type):
        raise CloseConnection("The filter contains UNKNOWN elements")


@api(DescribeAclsRequest, 1, 3, controller=True)
def describe_acls(ctx: RequestContext, req: Any) -> Any:
    """ACLs matching one filter, grouped by resource pattern."""
    dr = DescribeAclsResponse
    _check_filter(req)
    groups: dict[tuple[int, str, int], list[Any]] = {}
    for acl in ctx.state.acls:
        if matches(req, acl):
            groups.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(
                dr.DescribeAclsResource.AclDescription(
                    principal=acl.principal,
                    host=acl.host,
                    operation=acl.operation,
                    permission_type=acl.permission_type,
                )
            )
    return dr(
        version=ctx.version,
        throttle_time_ms=0,
        error_code=0,
        error_message="",
        resources=[
            dr.DescribeAclsResource(resource_type=k[0], resource_name=k[1], pattern_type=k[2], acls=v)
            for k, v in groups.items()
        ],
    )


def _validate(c: Any) -> tuple[int, str | None]:
    """Kafka's checks for a new binding: (error code, message) or (0, None)."""
    if (
        c.resource_type in (0, ANY)
        or c.resource_pattern_type not in (LITERAL, PREFIXED)
        or c.operation in (0, ANY)
        or c.permission_type not in (2, 3)
    ):
        return -1, None  # Kafka answers UNKNOWN_SERVER_ERROR for these
    if not c.resource_name:
        return 42, "Invalid empty resource name"
    if ":" not in c.principal:
        return 42, (
            f"Could not parse principal from `{c.principal}` (no colon is present separating "
            "the principal type from the principal name)"
        )
    if c.resource_type == CLUSTER and c.resource_name != "kafka-cluster":
        return 42, "The only valid name for the CLUSTER resource is kafka-cluster"
    return 0, None


@api(CreateAclsRequest, 1, 3, controller=True)
def create_acls(ctx: RequestContext, req: Any) -> Any:
    """Add bindings (idempotent: an existing identical binding is success)."""
    st = ctx.state
    out = []
    for c in req.creations:
        code, msg = _validate(c)
        if code == 0:
            acl = AclBinding(
                c.resource_type,
                c.resource_name,
                c.resource_pattern_type,
                c.principal,
                c.host,
                c.operation,
                c.permission_type,
            )
            if acl not in st.acls:
                st.acls.append(acl)
            msg = ""
        out.append(CreateAclsResponse.AclCreationResult(error_code=code, error_message=msg))
    st.record()
    return CreateAclsResponse(version=ctx.version, throttle_time_ms=0, results=out)


@api(DeleteAclsRequest, 1, 3, controller=True)
def delete_acls(ctx: RequestContext, req: Any) -> Any:
    """Delete every binding matching each filter; report the matched bindings per filter."""
    st = ctx.state
    fr = DeleteAclsResponse.DeleteAclsFilterResult
    out = []
    for f in req.filters:
        _check_filter(f)
    # as Kafka, every filter is matched against the bindings as they were before this request
    hits = [[a for a in st.acls if matches(f, a)] for f in req.filters]
    gone = {a for hit in hits for a in hit}
    st.acls = [a for a in st.acls if a not in gone]
    for hit in hits:
        out.append(
            fr(
                error_code=0,
                error_message=None,
                matching_acls=[
                    fr.DeleteAclsMatchingAcl(
                        error_code=0,
                        error_message=None,
                        resource_type=a.resource_type,
                        resource_name=a.resource_name,
                        pattern_type=a.pattern_type,
                        principal=a.principal,
                        host=a.host,
                        operation=a.operation,
                        permission_type=a.permission_type,
                    )
                    for a in hit
                ],
            )
        )
    st.record()
    return DeleteAclsResponse(version=ctx.version, throttle_time_ms=0, filter_results=out)
