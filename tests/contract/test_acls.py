"""DescribeAcls / CreateAcls / DeleteAcls contract: Kafka's filter semantics (KIP-290)."""

from __future__ import annotations

import pytest

from console.kafka import AclBinding, AclBindingFilter, KafkaOperationError, Ok

from .conftest import eventually, unique

pytestmark = pytest.mark.contract


@pytest.fixture
def acl_set(gw):
    """A literal, a prefixed and a wildcard-free set of bindings under a unique prefix."""
    prefix = unique("acl")
    principal = f"User:{prefix}-app"
    bindings = [
        AclBinding("TOPIC", f"{prefix}.orders", "LITERAL", principal, "*", "READ", "ALLOW"),
        AclBinding("TOPIC", f"{prefix}.", "PREFIXED", principal, "*", "WRITE", "ALLOW"),
        AclBinding("GROUP", f"{prefix}-group", "LITERAL", principal, "*", "READ", "ALLOW"),
        AclBinding("TOPIC", f"{prefix}.orders", "LITERAL", principal, "10.0.0.1", "DELETE", "DENY"),
    ]
    assert gw.create_acls(bindings) == dict.fromkeys(bindings, Ok())
    eventually(lambda: gw.describe_acls(AclBindingFilter(principal=principal)), lambda r: len(r) == 4)
    yield prefix, principal, bindings
    gw.delete_acls([AclBindingFilter(principal=principal)])


def test_describe_by_principal(gw, acl_set):
    prefix, principal, bindings = acl_set
    assert set(gw.describe_acls(AclBindingFilter(principal=principal))) == set(bindings)


def test_literal_filter_matches_exact_name_only(gw, acl_set):
    prefix, principal, bindings = acl_set
    got = gw.describe_acls(AclBindingFilter("TOPIC", f"{prefix}.orders", "LITERAL", principal=principal))
    assert set(got) == {bindings[0], bindings[3]}


def test_prefixed_filter_matches_the_prefix_binding_only(gw, acl_set):
    prefix, principal, bindings = acl_set
    got = gw.describe_acls(AclBindingFilter("TOPIC", f"{prefix}.", "PREFIXED", principal=principal))
    assert set(got) == {bindings[1]}
    assert gw.describe_acls(AclBindingFilter("TOPIC", f"{prefix}.ord", "PREFIXED", principal=principal)) == ()


def test_match_filter_finds_every_binding_that_applies(gw, acl_set):
    prefix, principal, bindings = acl_set
    got = gw.describe_acls(AclBindingFilter("TOPIC", f"{prefix}.orders", "MATCH", principal=principal))
    assert set(got) == {bindings[0], bindings[1], bindings[3]}
    got = gw.describe_acls(AclBindingFilter("TOPIC", f"{prefix}.payments", "MATCH", principal=principal))
    assert set(got) == {bindings[1]}


def test_any_filter_and_other_fields(gw, acl_set):
    prefix, principal, bindings = acl_set
    assert set(gw.describe_acls(AclBindingFilter("ANY", None, "ANY", principal=principal))) == set(bindings)
    assert set(gw.describe_acls(AclBindingFilter("GROUP", principal=principal))) == {bindings[2]}
    assert set(gw.describe_acls(AclBindingFilter(principal=principal, permission="DENY"))) == {bindings[3]}
    assert set(gw.describe_acls(AclBindingFilter(principal=principal, host="10.0.0.1"))) == {bindings[3]}
    assert set(gw.describe_acls(AclBindingFilter(principal=principal, operation="WRITE"))) == {bindings[1]}


def test_delete_returns_matched_bindings_per_filter(gw, acl_set):
    prefix, principal, bindings = acl_set
    f_literal = AclBindingFilter("TOPIC", f"{prefix}.orders", "LITERAL", principal=principal)
    f_none = AclBindingFilter("TOPIC", f"{prefix}-nothing", "LITERAL", principal=principal)
    out = gw.delete_acls([f_literal, f_none])
    assert set(out[f_literal]) == {bindings[0], bindings[3]}
    assert out[f_none] == ()
    left = eventually(lambda: gw.describe_acls(AclBindingFilter(principal=principal)), lambda r: len(r) == 2)
    assert set(left) == {bindings[1], bindings[2]}


def test_create_is_idempotent(gw, acl_set):
    prefix, principal, bindings = acl_set
    assert gw.create_acls([bindings[0]]) == {bindings[0]: Ok()}


def test_invalid_bindings_rejected_per_binding(gw):
    name = unique("acl")
    good = AclBinding("TOPIC", name, "LITERAL", f"User:{name}", "*", "READ", "ALLOW")
    no_type = AclBinding("TOPIC", name, "LITERAL", "alice", "*", "READ", "ALLOW")
    match = AclBinding("TOPIC", name, "MATCH", f"User:{name}", "*", "READ", "ALLOW")
    any_op = AclBinding("TOPIC", name, "LITERAL", f"User:{name}", "*", "ANY", "ALLOW")
    try:
        out = gw.create_acls([good, no_type, match, any_op])
        assert out[good] == Ok()
        for bad in (no_type, match, any_op):
            assert isinstance(out[bad], KafkaOperationError)
    finally:
        gw.delete_acls([AclBindingFilter(principal=f"User:{name}")])


def test_the_authorizer_settings_are_hidden_so_effective_access_says_what_it_assumes(gw):
    """Kafka reports super.users and allow.everyone.if.no.acl.found without a value: the console
    knows them only when the cluster's admins state them, and says which it assumed."""
    from console.acls.actions import authorizer_facts
    from console.models import Cluster

    facts = authorizer_facts(Cluster(name="x"), gw)
    assert (facts.super_users, facts.allow_if_no_acl) == (None, None)
    stated = authorizer_facts(Cluster(name="x", acl_super_users="User:admin", acl_allow_if_no_acl="true"), gw)
    assert stated.super_users == frozenset({"User:admin"}) and stated.allow_if_no_acl is True
    assert stated.super_users_from == stated.allow_if_no_acl_from == "the cluster's settings"
