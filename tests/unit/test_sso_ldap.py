"""LDAP login against a real OpenLDAP server (Debian's slapd, started by tests/sso/fixtures.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from console import access
from console.models import AuditEvent, IdentityLink, Role
from tests.sso.fixtures import ldap_directory, require_ldap_extra, slapd  # noqa: F401 - fixtures
from tests.sso.helpers import bind_operators, ldap_group, use_ldap

pytestmark = pytest.mark.django_db

require_ldap_extra()


@pytest.fixture
def directory(ldap_directory, settings):  # noqa: F811
    use_ldap(settings, ldap_directory)
    return ldap_directory


@pytest.fixture
def operators_bound(offline_cluster):
    return bind_operators(offline_cluster, ldap_group("kafka-operators"))


def _login(client, username, password):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR="10.9.8.7")


def _last(action):
    return AuditEvent.objects.filter(action=action).order_by("-id").first()


def test_it_logs_in_a_directory_user_with_the_roles_its_groups_map_to(client, directory, operators_bound):
    response = _login(client, "alice", "alice-pw-1")
    assert response.status_code == 302 and response["Location"] == reverse("home")
    alice = get_user_model().objects.get(username="alice")
    assert (alice.first_name, alice.last_name, alice.email) == ("Alice", "Example", "alice@example.org")
    assert not alice.has_usable_password()
    assert IdentityLink.objects.filter(user=alice, provider="ldap", subject="alice").exists()
    assert set(alice.groups.values_list("name", flat=True)) == {ldap_group("kafka-operators")}
    assert access.roles(alice, operators_bound) == {Role.OPERATOR}
    login = _last("auth.login")
    assert login.params == {"method": "password", "provider": "ldap"} and login.actor_name == "alice"
    assert _last("auth.user.create").params["provider"] == "ldap"
    change = _last("auth.groups.change")
    assert change.params["added"] == [ldap_group("kafka-operators")]
    assert change.params["roles"] == {"offline": {"gained": ["operator"], "lost": []}}
    assert change.source_ip == "10.9.8.7"


def test_a_group_removed_in_the_directory_takes_the_role_away_at_the_next_login(
    client, directory, operators_bound
):
    assert _login(client, "alice", "alice-pw-1").status_code == 302
    directory.set_members("kafka-operators", [])
    directory.set_members("kafka-viewers", ["alice", "bob"])
    client.post(reverse("logout"))
    assert _login(client, "alice", "alice-pw-1").status_code == 302
    alice = get_user_model().objects.get(username="alice")
    assert set(alice.groups.values_list("name", flat=True)) == {ldap_group("kafka-viewers")}
    assert access.roles(alice, operators_bound) == set()
    change = _last("auth.groups.change")
    assert change.params["removed"] == [ldap_group("kafka-operators")]
    assert change.params["added"] == [ldap_group("kafka-viewers")]
    assert change.params["roles"] == {"offline": {"gained": [], "lost": ["operator"]}}


def test_local_groups_are_left_alone(client, directory, operators_bound):
    assert _login(client, "alice", "alice-pw-1").status_code == 302
    alice = get_user_model().objects.get(username="alice")
    alice.groups.add(Group.objects.create(name="hand-made"))
    client.post(reverse("logout"))
    assert _login(client, "alice", "alice-pw-1").status_code == 302
    assert "hand-made" in set(alice.groups.values_list("name", flat=True))


def test_a_wrong_password_and_an_unknown_user_are_refused_and_audited(client, directory):
    assert _login(client, "alice", "not-her-password").status_code == 200
    assert _login(client, "mallory", "whatever").status_code == 200
    assert not get_user_model().objects.filter(username__in=["alice", "mallory"]).exists()
    wrong, unknown = AuditEvent.objects.filter(action="auth.login_failed").order_by("id")
    assert wrong.params["username"] == "alice" and wrong.targets == ["user:alice"]
    assert wrong.params["reasons"] == {"local": "unknown user", "ldap": "wrong password"}
    assert unknown.params["username"] == "(no such user)" and unknown.targets == []
    assert unknown.params["reasons"] == {"local": "unknown user", "ldap": "unknown user"}
    assert "mallory" not in str(unknown.params)
    assert not AuditEvent.objects.filter(action="auth.login").exists()


def test_a_local_account_is_never_taken_over_by_a_directory_user_of_the_same_name(client, directory):
    get_user_model().objects.create_user("carol", password="local-carol-pw")
    assert _login(client, "carol", "carol-pw-1").status_code == 200
    failed = _last("auth.login_failed")
    assert failed.params["reasons"]["ldap"].startswith("the user name 'carol' belongs to a console account")
    assert _login(client, "carol", "local-carol-pw").status_code == 302  # the local account still works


def test_it_refuses_a_directory_user_named_like_the_system_actor(client, directory, operators_bound):
    assert _login(client, "console-system", "system-pw-1").status_code == 200
    assert "_auth_user_id" not in client.session
    failed = _last("auth.login_failed")
    reason = "the user name 'console-system' is reserved for the console's system actor"
    assert failed.params["reasons"] == {"local": reason, "ldap": reason}
    assert not IdentityLink.objects.exists()
    actor = access.system_actor()
    assert list(get_user_model().objects.filter(username__iexact="console-system")) == [actor]
    assert access.roles(actor, operators_bound) == set()


def test_each_directory_login_stamps_the_link_api_tokens_count_from(client, directory):
    assert _login(client, "bob", "bob-pw-1").status_code == 302
    link = IdentityLink.objects.get(user__username="bob")
    IdentityLink.objects.filter(pk=link.pk).update(last_login_at=link.last_login_at - timedelta(days=2))
    client.logout()
    assert _login(client, "bob", "bob-pw-1").status_code == 302
    assert IdentityLink.objects.get(pk=link.pk).last_login_at >= link.last_login_at


def test_an_unreachable_directory_refuses_with_the_reason(client, directory, settings):
    from tests.sso.fixtures import free_port

    settings.LDAP_SERVER_URI = f"ldap://127.0.0.1:{free_port()}"
    assert _login(client, "alice", "alice-pw-1").status_code == 200
    assert (
        _last("auth.login_failed").params["reasons"]["ldap"] == "directory error: Can't contact LDAP server"
    )


@pytest.mark.parametrize("how", ["starttls", "ldaps"])
def test_it_logs_in_over_tls_verifying_the_directorys_certificate(client, directory, settings, how):
    settings.LDAP_CA_CERT_FILE = directory.ca_file
    if how == "ldaps":
        settings.LDAP_SERVER_URI = directory.ldaps_uri
    else:
        settings.LDAP_START_TLS = True
    assert _login(client, "alice", "alice-pw-1").status_code == 302
    assert _last("auth.login").params == {"method": "password", "provider": "ldap"}


@pytest.mark.parametrize("how", ["starttls", "ldaps"])
def test_a_certificate_from_an_unknown_ca_is_refused(client, directory, settings, how):
    if how == "ldaps":
        settings.LDAP_SERVER_URI = directory.ldaps_uri
    else:
        settings.LDAP_START_TLS = True  # no LDAP_CA_CERT_FILE: the system CAs do not know the test CA
    assert _login(client, "alice", "alice-pw-1").status_code == 200
    reason = _last("auth.login_failed").params["reasons"]["ldap"]
    assert reason.startswith("directory error"), reason
    assert not get_user_model().objects.filter(username="alice").exists()


def test_the_login_page_names_the_directory(client, directory):
    page = client.get(reverse("login")).content.decode()
    assert "User name (directory or local)" in page and "sso-oidc" not in page
