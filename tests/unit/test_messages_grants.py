"""Data grants and masking rules: who may read and write messages, and how admins manage both."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404

from console import access
from console.messages import actions, audit_names, grants, store
from console.messages.grants import DATA_READ, DATA_WRITE
from console.models import AuditEvent, Cluster, DataGrant, MaskingRule

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster(db):
    return Cluster.objects.create(name="data", bootstrap_servers="127.0.0.1:1")


@pytest.fixture
def people(cluster):
    from tests.conftest import make_personas

    return make_personas(cluster)


def _events(action):
    return list(AuditEvent.objects.filter(action=action).order_by("id"))


def test_it_grants_nothing_through_roles(cluster, people):
    for name in ("operator", "requester", "auditor", "viewer", "outsider"):
        for perm in (DATA_READ, DATA_WRITE):
            assert not grants.can(people[name], cluster, "orders", perm), (name, perm)
    with pytest.raises(PermissionDenied) as caught:
        grants.require(people["operator"], cluster, "orders", DATA_READ)
    assert str(caught.value) == "You need the 'data.read' permission on cluster 'data' for topic 'orders'."
    assert not grants.visible(people["viewer"], cluster, "orders")


def test_it_gives_a_superuser_everything_and_the_system_actor_nothing(cluster, people):
    admin, system = people["admin"], access.system_actor()
    DataGrant.objects.create(cluster=cluster, user=system, prefix="", read=True, write=True, unmasked=True)
    assert [grants.can(admin, cluster, "x", p) for p in (DATA_READ, DATA_WRITE)] == [True, True]
    assert grants.may_unmask(admin, cluster, "x")
    assert [grants.can(system, cluster, "x", p) for p in (DATA_READ, DATA_WRITE)] == [False, False]
    assert not grants.may_unmask(system, cluster, "x")


def test_it_reads_grants_by_prefix_for_users_and_groups(cluster, people):
    viewer, outsider = people["viewer"], people["outsider"]
    DataGrant.objects.create(cluster=cluster, user=viewer, prefix="team-a.", read=True)
    team = Group.objects.create(name="team-b")
    outsider.groups.add(team)
    DataGrant.objects.create(cluster=cluster, group=team, prefix="team-b.", read=True, write=True)
    other = Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:2")
    DataGrant.objects.create(cluster=other, user=viewer, prefix="", read=True, write=True)
    table = {
        (who.username, topic, perm): grants.can(who, cluster, topic, perm)
        for who in (viewer, outsider)
        for topic in ("team-a.orders", "team-b.orders", "orders")
        for perm in (DATA_READ, DATA_WRITE)
    }
    assert {k for k, v in table.items() if v} == {
        ("viewer", "team-a.orders", DATA_READ),
        ("outsider", "team-b.orders", DATA_READ),
        ("outsider", "team-b.orders", DATA_WRITE),
    }


def test_it_needs_a_grant_with_unmasked_and_a_reason_for_an_unmasked_read(cluster, people):
    viewer, outsider = people["viewer"], people["outsider"]
    DataGrant.objects.create(cluster=cluster, user=viewer, prefix="pay.", read=True, unmasked=True)
    DataGrant.objects.create(cluster=cluster, user=outsider, prefix="pay.", read=True)
    grants.require_unmasked(viewer, cluster, "pay.cards", "incident 42")
    with pytest.raises(PermissionDenied, match="^An unmasked read needs a reason"):
        grants.require_unmasked(viewer, cluster, "pay.cards", "  ")
    with pytest.raises(PermissionDenied) as caught:
        grants.require_unmasked(outsider, cluster, "pay.cards", "incident 42")
    assert str(caught.value) == (
        "You need a data grant with unmasked reads on cluster 'data' for topic 'pay.cards' to read it unmasked."
    )
    with pytest.raises(PermissionDenied, match="'data.read' permission"):
        grants.require_unmasked(viewer, cluster, "orders", "incident 42")


def test_it_lets_an_admin_grant_and_revoke_with_the_audit_trail(cluster, people):
    admin = people["admin"]
    row = actions.grant(
        actor=admin, cluster=cluster, user="viewer", prefix="team-a.", write=True, source_ip="10.0.0.9"
    )
    assert (row.user, row.group, row.prefix, row.read, row.write, row.unmasked) == (
        people["viewer"],
        None,
        "team-a.",
        True,
        True,
        False,
    )
    described = {
        "id": row.pk,
        "subject": "user:viewer",
        "prefix": "team-a.",
        "read": True,
        "write": True,
        "unmasked": False,
    }
    [event] = _events(audit_names.DATA_GRANT)
    assert (
        event.actor_name,
        event.cluster_name,
        event.targets,
        event.outcome,
        event.before,
        event.after,
    ) == (
        "admin",
        "data",
        ["user:viewer", "topic:team-a.*"],
        "success",
        None,
        described,
    )
    assert event.source_ip == "10.0.0.9"
    assert store.grants_of(cluster) == [described]
    actions.revoke(actor=admin, cluster=cluster, grant_id=row.pk)
    [gone] = _events(audit_names.DATA_REVOKE)
    assert (gone.before, gone.targets, gone.outcome) == (
        described,
        ["user:viewer", "topic:team-a.*"],
        "success",
    )
    assert not DataGrant.objects.exists()
    with pytest.raises(Http404, match="There is no data grant"):
        actions.revoke(actor=admin, cluster=cluster, grant_id=row.pk)


def test_it_refuses_grants_from_anyone_but_an_admin_and_bad_grants(cluster, people):
    with pytest.raises(PermissionDenied, match="'cluster.admin' permission"):
        actions.grant(actor=people["operator"], cluster=cluster, user="operator", prefix="")
    [refused] = _events(audit_names.DATA_GRANT)
    assert (refused.actor_name, refused.outcome, refused.targets) == ("operator", "refused", ["topic:*"])
    admin = people["admin"]
    bad = [
        (dict(user="nobody"), "There is no user 'nobody'."),
        (dict(group="nope"), "There is no group 'nope'."),
        (dict(), "A data grant names a user or a group, not both and not neither."),
        (dict(user="viewer", read=False), "A data grant gives read, write or both."),
        (
            dict(user="viewer", read=False, write=True, unmasked=True),
            "Unmasked reads need the read permission",
        ),
        (dict(user=access.system_actor()), "The system actor reads and writes no messages."),
    ]
    for kwargs, message in bad:
        with pytest.raises(ValidationError) as caught:
            actions.grant(actor=admin, cluster=cluster, **kwargs)
        assert message in " ".join(caught.value.messages), kwargs
    actions.grant(actor=admin, cluster=cluster, group=Group.objects.create(name="g"), prefix="x")
    with pytest.raises(
        ValidationError, match="group:g already has a data grant on prefix 'x': revoke it first."
    ):
        actions.grant(actor=admin, cluster=cluster, group="g", prefix="x")
    assert DataGrant.objects.count() == 1


def test_it_adds_and_removes_masking_rules_with_the_audit_trail(cluster, people):
    admin = people["admin"]
    rule = actions.add_rule(
        actor=admin, cluster=cluster, kind="json_path", expression="$.card", prefix="pay.", note="PCI"
    )
    described = {
        "id": rule.pk,
        "prefix": "pay.",
        "kind": "json_path",
        "expression": "$.card",
        "note": "PCI",
        "label": "json_path $.card (topics 'pay.*')",
    }
    [event] = _events(audit_names.MASK_RULE_ADD)
    assert (event.after, event.targets, event.outcome) == (described, ["topic:pay.*"], "success")
    assert [r.label for r in store.rules_in_force(cluster, "pay.cards")] == [
        "json_path $.card (topics 'pay.*')"
    ]
    assert store.rules_in_force(cluster, "orders") == ()
    actions.remove_rule(actor=admin, cluster=cluster, rule_id=rule.pk)
    [gone] = _events(audit_names.MASK_RULE_REMOVE)
    assert (gone.before, gone.outcome) == (described, "success")
    assert not MaskingRule.objects.exists()


def test_it_refuses_a_masking_rule_that_cannot_apply_when_it_is_added(cluster, people):
    admin = people["admin"]
    for kind, expression, reason in (
        (
            "regex",
            "(unclosed",
            "The masking rule cannot be used: '(unclosed' is not a regular expression RE2 accepts",
        ),
        ("json_path", "$..[", "The masking rule cannot be used: '$..[' is not a JSON path"),
        ("base64", "x", "The masking rule cannot be used: unknown masking kind 'base64'"),
    ):
        with pytest.raises(ValidationError) as caught:
            actions.add_rule(actor=admin, cluster=cluster, kind=kind, expression=expression)
        assert caught.value.messages[0].startswith(reason), caught.value.messages
    assert not MaskingRule.objects.exists()
    assert [e.outcome for e in _events(audit_names.MASK_RULE_ADD)] == ["refused"] * 3
    with pytest.raises(PermissionDenied):
        actions.add_rule(actor=people["operator"], cluster=cluster, kind="header", expression="auth")


def test_it_refuses_a_read_when_a_stored_rule_no_longer_compiles(cluster, people):
    from console.messages.core import BrowseInvalid

    row = MaskingRule.objects.create(cluster=cluster, prefix="pay.", kind="regex", expression="(broken")
    assert store.rules_in_force(cluster, "orders") == ()
    with pytest.raises(BrowseInvalid) as caught:
        store.rules_in_force(cluster, "pay.cards")
    assert str(caught.value).startswith(
        f"masking rule {row.pk} of topic prefix 'pay.' cannot be applied ('(broken'"
    )


def test_the_rules_in_force_are_the_clusters_own_by_prefix_then_age(cluster, people):
    other = Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:2")
    MaskingRule.objects.create(cluster=other, prefix="", kind="header", expression="elsewhere")
    MaskingRule.objects.create(cluster=cluster, prefix="pay.", kind="header", expression="second")
    MaskingRule.objects.create(cluster=cluster, prefix="", kind="header", expression="first")
    MaskingRule.objects.create(cluster=cluster, prefix="pay.", kind="json_path", expression="$.card")
    MaskingRule.objects.create(cluster=cluster, prefix="payroll", kind="header", expression="not-pay.")
    in_force = store.rules_in_force(cluster, "pay.cards")
    assert [(r.kind, r.expression, r.prefix) for r in in_force] == [
        ("header", "first", ""),
        ("header", "second", "pay."),
        ("json_path", "$.card", "pay."),
    ]
    assert [r.expression for r in store.rules_in_force(other, "pay.cards")] == ["elsewhere"]
