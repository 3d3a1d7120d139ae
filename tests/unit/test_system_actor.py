"""Issue 33 item 2: the system actor is the user a migration marked, never whoever logs in first with
its name. Reserved names are refused to local, OpenID Connect and token logins (LDAP: test_sso_ldap.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from console import access
from console import system_actor as system
from console.identity import tokens
from console.models import AuditEvent, IdentityLink, Role, RoleBinding, SystemActor
from tests.sso.fixtures import identity_provider, oidc_provider  # noqa: F401 - fixtures
from tests.sso.helpers import provider_login, use_oidc

pytestmark = pytest.mark.django_db


def _last(action):
    return AuditEvent.objects.filter(action=action).order_by("-id").first()


def test_it_has_the_system_actor_from_the_migration_marked_by_its_row():
    marker = SystemActor.objects.select_related("user").get()  # before anyone asked for it
    actor = marker.user
    assert (actor.username, actor.is_active, actor.is_staff, actor.is_superuser) == (
        "console-system",
        True,
        False,
        False,
    )
    assert not actor.has_usable_password()
    assert access.system_actor().pk == actor.pk and access.is_system(actor)
    assert get_user_model().objects.filter(username__iexact="console-system").count() == 1


def test_it_answers_from_the_mark_not_from_the_name(offline_cluster):
    actor = access.system_actor()
    actor.username = "renamed-robot"
    actor.save(update_fields=["username"])
    namesake = get_user_model().objects.create(username="console-system")  # no usable password
    namesake.set_unusable_password()
    namesake.save()
    assert access.is_system(get_user_model().objects.get(pk=actor.pk))
    assert not access.is_system(get_user_model().objects.get(pk=namesake.pk))
    assert access.permissions(namesake, offline_cluster) == frozenset()


@pytest.mark.parametrize(
    "name",
    ["console-system", "Console-System", "console_system", "CONSOLE.SYSTEM", "system", "ｃonsole-system"],
)
def test_it_reserves_the_system_actors_name_and_names_like_it(name):
    assert system.is_reserved(name)


@pytest.mark.parametrize("name", ["alice", "console-systems-team", "sysadmin", ""])
def test_it_leaves_other_names_alone(name):
    assert not system.is_reserved(name)


def test_it_refuses_an_oidc_login_named_console_system_and_grants_it_nothing(
    client,
    identity_provider,  # noqa: F811
    settings,
    offline_cluster,
):
    use_oidc(settings, identity_provider)
    identity_provider.manage("idp", "user", "console-system", "system-pw-1", "kafka-operators")
    RoleBinding.objects.create(
        cluster=offline_cluster, group=Group.objects.create(name="oidc:kafka-operators"), role=Role.OPERATOR
    )
    SystemActor.objects.all().delete()  # as before the fix: nobody holds the name yet
    get_user_model().objects.filter(username="console-system").delete()

    start = client.get(reverse("sso_oidc_login"))
    callback = provider_login(start["Location"], "console-system", "system-pw-1")
    response = client.get(callback[callback.index("/sso/") :], REMOTE_ADDR="10.7.7.7")

    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert "_auth_user_id" not in client.session
    refused = _last("auth.login_failed")
    assert (
        refused.params["reason"]
        == "the user name 'console-system' is reserved for the console's system actor"
    )
    assert not IdentityLink.objects.exists() and _last("auth.login") is None
    actor = access.system_actor()  # made afresh, by its mark: not an account of the provider
    assert not IdentityLink.objects.filter(user=actor).exists()
    assert list(get_user_model().objects.filter(username__iexact="console-system")) == [actor]


def test_it_refuses_a_local_account_with_a_reserved_name(client):
    get_user_model().objects.create_user("Console_System", password="pw-console-1")
    response = client.post(reverse("login"), {"username": "Console_System", "password": "pw-console-1"})
    assert response.status_code == 200 and "_auth_user_id" not in client.session
    failed = _last("auth.login_failed")
    assert failed.params == {
        "username": "Console_System",
        "method": "password",
        "providers": ["local"],
        "reasons": {"local": "the user name 'Console_System' is reserved for the console's system actor"},
    }


def test_it_refuses_a_token_of_the_system_actor():
    made = tokens.create_token(actor=access.system_actor(), name="sneaky", scope="write", days=1)
    with pytest.raises(tokens.TokenInvalid):
        tokens.authenticate(made.secret)


def test_it_never_adopts_an_account_that_took_the_name_before_the_mark_existed():
    SystemActor.objects.all().delete()
    get_user_model().objects.filter(username="console-system").delete()
    squatter = get_user_model().objects.create(username="console-system")
    squatter.set_unusable_password()
    squatter.save()
    IdentityLink.objects.create(user=squatter, provider="oidc", issuer="https://idp", subject="s-1")
    actor = access.system_actor()  # what migration 0019 does on an installation with such an account
    squatter.refresh_from_db()
    assert actor.pk != squatter.pk and actor.username == "console-system"
    assert (squatter.username, squatter.is_active) == (f"console-system.taken-{squatter.pk}", False)
    assert SystemActor.objects.get().user_id == actor.pk and not access.is_system(squatter)


def test_it_adopts_the_passwordless_system_user_made_before_the_mark(offline_cluster):
    SystemActor.objects.all().delete()
    old = get_user_model().objects.get(username="console-system")  # the lazily made one of old
    assert access.system_actor().pk == old.pk
    assert access.permissions(old, offline_cluster) == access.SYSTEM_PERMISSIONS
