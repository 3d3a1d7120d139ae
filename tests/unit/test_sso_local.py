"""Local accounts beside single sign-on: switchable off (audited refusals), bounded session age, and the
pure group rules."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from console.identity import core
from console.identity.sessions import LOGIN_AT
from console.models import AuditEvent
from tests.sso.fixtures import require_ldap_extra

pytestmark = pytest.mark.django_db


def _login(client, username, password):
    return client.post(reverse("login"), {"username": username, "password": password})


def _last(action):
    return AuditEvent.objects.filter(action=action).order_by("-id").first()


@pytest.fixture
def root():
    return get_user_model().objects.create_superuser("root", password="root-pw-1")


@pytest.fixture
def plain():
    return get_user_model().objects.create_user("plain", password="plain-pw-1")


def test_with_nothing_configured_the_page_and_login_are_as_before(client, plain):
    page = client.get(reverse("login")).content.decode()
    assert 'id="id_username"' in page and 'id="id_password"' in page and "sso-oidc" not in page
    assert _login(client, "plain", "plain-pw-1").status_code == 302
    assert _last("auth.login").params == {"method": "password", "provider": "local"}


def test_local_accounts_switched_off_are_refused_and_audited(client, settings, root):
    settings.CONSOLE_LOCAL_LOGIN = "off"
    page = client.get(reverse("login")).content.decode()
    assert 'id="id_password"' not in page and "No login method is configured" in page
    assert _login(client, "root", "root-pw-1").status_code == 200
    failed = _last("auth.login_failed")
    assert failed.params["reasons"] == {"local": "local accounts are switched off (CONSOLE_LOCAL_LOGIN=off)"}
    assert failed.targets == ["user:root"]
    assert not AuditEvent.objects.filter(action="auth.login").exists()
    # Django's admin uses the same backends: no way around it there either.
    client.post(reverse("admin:login"), {"username": "root", "password": "root-pw-1"})
    assert client.get(reverse("cluster_list")).status_code == 302


def test_a_session_opened_before_local_accounts_were_switched_off_ends(client, settings, root):
    assert _login(client, "root", "root-pw-1").status_code == 302
    assert client.get(reverse("cluster_list")).status_code == 200
    settings.CONSOLE_LOCAL_LOGIN = "off"
    assert client.get(reverse("cluster_list")).status_code == 302


def test_break_glass_mode_keeps_superusers_only(client, settings, root, plain):
    settings.CONSOLE_LOCAL_LOGIN = "superusers"
    assert _login(client, "plain", "plain-pw-1").status_code == 200
    assert _last("auth.login_failed").params["reasons"] == {"local": "local accounts are for superusers only"}
    assert _login(client, "root", "root-pw-1").status_code == 302


def test_a_session_ends_at_its_maximum_age_however_active(client, settings, plain):
    settings.CONSOLE_SESSION_MAX_AGE_S = 3600
    assert _login(client, "plain", "plain-pw-1").status_code == 302
    assert client.get(reverse("cluster_list")).status_code == 200
    session = client.session
    session[LOGIN_AT] = time.time() - 3601
    session.save()
    response = client.get(reverse("cluster_list"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert _last("auth.logout").actor_name == "plain"
    assert client.get(reverse("cluster_list")).status_code == 302


def test_group_plans_leave_local_groups_and_normalize_dns():
    plan = core.plan_groups(
        "ldap",
        ["CN=Kafka Ops, OU=Groups,DC=Example,DC=org", "", "x" * 200],
        ["team-local", "ldap:cn=old,dc=example,dc=org", "oidc:from-the-other-door"],
    )
    assert plan.add == ("ldap:cn=kafka ops,ou=groups,dc=example,dc=org",)
    assert plan.remove == ("ldap:cn=old,dc=example,dc=org", "oidc:from-the-other-door")
    assert len(plan.skipped) == 2


def test_role_changes_and_the_groups_claim():
    before, after = {"a": {"viewer", "operator"}, "b": {"viewer"}}, {"a": {"viewer"}, "c": {"admin"}}
    assert core.role_changes(before, after) == {
        "a": {"gained": [], "lost": ["operator"]},
        "b": {"gained": [], "lost": ["viewer"]},
        "c": {"gained": ["admin"], "lost": []},
    }
    assert core.groups_claim({"groups": "one"}, "groups") == ["one"]
    assert core.groups_claim({"realm_access": {"roles": ["r1", 2, None]}}, "realm_access.roles") == [
        "r1",
        "2",
    ]
    assert core.groups_claim({"groups": {"not": "a list"}}, "groups") == []


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CONSOLE_LOCAL_LOGIN": "maybe"}, "CONSOLE_LOCAL_LOGIN must be all, superusers or off"),
        ({"LDAP_SERVER_URI": "ldap://127.0.0.1:1", "LDAP_GROUP_TYPE": "groupies"}, "LDAP_GROUP_TYPE must be"),
    ],
)
def test_a_wrong_sso_setting_stops_the_start_with_the_reason(env, message, tmp_path):
    import os
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", "import console.settings"],
        env={**os.environ, "CONSOLE_VAR_DIR": str(tmp_path), **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode != 0 and message in run.stderr


def test_every_ldap_group_type_setting_has_a_group_type(settings):
    require_ldap_extra()
    from console.identity.ldap import GROUP_TYPES

    assert tuple(GROUP_TYPES) == settings.LDAP_GROUP_TYPES
