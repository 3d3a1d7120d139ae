"""ACL filters follow Kafka's AclBindingFilter matching (LITERAL, PREFIXED, MATCH, ANY)."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

pytestmark = []
P = ResourcePatternType


@pytest.fixture
def admin(cluster):
    client = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    bindings = [
        AclBinding(
            ResourceType.TOPIC, "orders", P.LITERAL, "User:a", "*", AclOperation.READ, AclPermissionType.ALLOW
        ),
        AclBinding(
            ResourceType.TOPIC, "ord", P.PREFIXED, "User:b", "*", AclOperation.WRITE, AclPermissionType.ALLOW
        ),
        AclBinding(
            ResourceType.TOPIC, "*", P.LITERAL, "User:c", "*", AclOperation.DESCRIBE, AclPermissionType.DENY
        ),
        AclBinding(
            ResourceType.GROUP, "orders", P.LITERAL, "User:a", "*", AclOperation.READ, AclPermissionType.ALLOW
        ),
    ]
    for fut in client.create_acls(bindings).values():
        fut.result(10)
    return client


def _names(admin, rtype, name, pattern, principal=None):
    f = AclBindingFilter(rtype, name, pattern, principal, None, AclOperation.ANY, AclPermissionType.ANY)
    return sorted(
        (b.name, b.resource_pattern_type.name, b.principal) for b in admin.describe_acls(f).result(10)
    )


def test_it_matches_literal_prefixed_and_wildcard_with_match(admin):
    assert _names(admin, ResourceType.TOPIC, "orders", P.MATCH) == [
        ("*", "LITERAL", "User:c"),
        ("ord", "PREFIXED", "User:b"),
        ("orders", "LITERAL", "User:a"),
    ]


def test_it_matches_only_the_exact_name_with_any(admin):
    assert _names(admin, ResourceType.ANY, "orders", P.ANY) == [
        ("orders", "LITERAL", "User:a"),
        ("orders", "LITERAL", "User:a"),
    ]


def test_it_matches_the_pattern_type_exactly_with_literal_and_prefixed(admin):
    assert _names(admin, ResourceType.TOPIC, "ord", P.PREFIXED) == [("ord", "PREFIXED", "User:b")]
    assert _names(admin, ResourceType.TOPIC, "ord", P.LITERAL) == []
    assert _names(admin, ResourceType.TOPIC, None, P.LITERAL, "User:c") == [("*", "LITERAL", "User:c")]


def test_it_deletes_what_the_filter_matches(cluster, admin):
    f = AclBindingFilter(
        ResourceType.TOPIC, "orders", P.MATCH, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    deleted = admin.delete_acls([f])[f].result(10)
    assert len(deleted) == 3
    assert [a.resource_type for a in cluster.state.acls] == [3]


def test_it_matches_every_delete_filter_against_the_bindings_before_the_request(cluster, admin):
    literal = AclBindingFilter(
        ResourceType.TOPIC, "orders", P.LITERAL, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    match = AclBindingFilter(
        ResourceType.TOPIC, "orders", P.MATCH, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    results = admin.delete_acls([literal, match])
    assert len(results[literal].result(10)) == 1
    assert len(results[match].result(10)) == 3  # includes the binding the first filter also matched
