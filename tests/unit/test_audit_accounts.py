"""Issue 13 item 6 (part): log-ins, log-outs, failed log-ins and admin changes are in the audit trail."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from console.models import AuditEvent

pytestmark = pytest.mark.django_db


def _events(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("id"))


def test_login_logout_and_failed_login_are_audited(client, personas):
    url = reverse("login")
    client.post(url, {"username": "viewer", "password": "wrong"}, REMOTE_ADDR="10.1.2.3")
    client.post(url, {"username": "my-password-by-mistake", "password": "x"}, REMOTE_ADDR="10.1.2.3")
    assert (
        client.post(url, {"username": "viewer", "password": "pw-viewer"}, REMOTE_ADDR="10.1.2.3").status_code
        == 302
    )
    client.post(reverse("logout"), REMOTE_ADDR="10.1.2.3")
    failed = _events("auth.login_failed")
    assert [(e.params["username"], e.outcome, e.source_ip) for e in failed] == [
        ("viewer", "failure", "10.1.2.3"),
        ("(no such user)", "failure", "10.1.2.3"),
    ]
    assert "my-password-by-mistake" not in str([(e.params, e.targets) for e in failed])
    login, logout = _events("auth.login")[-1], _events("auth.logout")[-1]
    assert (login.actor_name, login.source_ip, login.targets) == ("viewer", "10.1.2.3", ["user:viewer"])
    assert logout.actor_name == "viewer"


def test_changes_in_django_admin_are_audited_with_who_made_them(client, personas):
    client.force_login(personas["admin"])
    response = client.post(
        reverse("admin:auth_user_add"),
        {
            "username": "newcomer",
            "password1": "a-long-pass-123",
            "password2": "a-long-pass-123",
            "usable_password": "true",
        },
    )
    assert response.status_code == 302, response.content[:500]
    assert get_user_model().objects.filter(username="newcomer").exists()
    group = Group.objects.create(name="kafka-ops")
    response = client.post(reverse("admin:auth_group_delete", args=[group.pk]), {"post": "yes"})
    assert response.status_code == 302, response.content[:500]
    added = _events("admin.add")[-1]
    assert (added.actor_name, added.targets, added.params["model"]) == ("admin", ["user:newcomer"], "user")
    assert "a-long-pass-123" not in str(added.params)
    deleted = _events("admin.delete")[-1]
    assert (deleted.actor_name, deleted.targets) == ("admin", ["group:kafka-ops"])
