"""Granting and revoking roles: admins only, requester scopes required, every change audited."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from console import access
from console.clusters import bindings
from console.models import AuditEvent, Role, RoleBinding

pytestmark = pytest.mark.django_db


def test_it_grants_a_requester_role_with_namespaces_and_audits_it(personas, kafka_cluster):
    outsider = personas["outsider"]
    binding = bindings.grant_role(
        actor=personas["admin"],
        cluster=kafka_cluster,
        role=Role.REQUESTER,
        user=outsider,
        namespaces=["team-b.", "team-b."],
    )
    assert binding.namespaces == ["team-b."]
    assert access.can(outsider, kafka_cluster, access.REQUEST, "team-b.orders")
    assert not access.can(outsider, kafka_cluster, access.REQUEST, "team-a.orders")
    event = AuditEvent.objects.get(action="access.grant")
    assert event.targets == ["user:outsider"]
    assert event.after == {
        "subject": "user:outsider",
        "role": "requester",
        "namespaces": ["team-b."],
        "principals": [],
    }


def test_a_requester_binding_without_scope_is_refused(personas, kafka_cluster):
    with pytest.raises(ValidationError, match="at least one topic prefix"):
        bindings.grant_role(
            actor=personas["admin"], cluster=kafka_cluster, role=Role.REQUESTER, user=personas["outsider"]
        )
    assert not AuditEvent.objects.filter(action="access.grant").exclude(outcome="refused").exists()


def test_only_cluster_admins_grant_roles(personas, kafka_cluster):
    with pytest.raises(PermissionDenied):
        bindings.grant_role(
            actor=personas["operator"], cluster=kafka_cluster, role=Role.ADMIN, user=personas["operator"]
        )
    assert not RoleBinding.objects.filter(user=personas["operator"], role=Role.ADMIN).exists()


def test_revoking_removes_access_and_keeps_the_grant_in_the_audit(personas, kafka_cluster):
    binding = RoleBinding.objects.get(user=personas["viewer"])
    bindings.revoke_role(actor=personas["admin"], binding=binding)
    assert not access.can(personas["viewer"], kafka_cluster, access.VIEW)
    event = AuditEvent.objects.get(action="access.revoke")
    assert event.before["role"] == "viewer"


def test_the_access_page_grants_through_the_form(client, personas, kafka_cluster):
    client.force_login(personas["admin"])
    url = reverse("cluster_access", kwargs={"name": kafka_cluster.name})
    response = client.post(url, {"user": personas["outsider"].pk, "role": "viewer"})
    assert response.status_code == 302
    assert access.can(personas["outsider"], kafka_cluster, access.VIEW)
    bad = client.post(url, {"role": "requester", "user": personas["outsider"].pk, "principals": "alice"})
    assert bad.status_code == 200
    assert b"is not a principal like User:name" in bad.content
