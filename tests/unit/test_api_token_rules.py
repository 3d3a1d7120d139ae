"""Issue 33 item 5: an API token follows the login rules of its user at every use, as a session does:
CONSOLE_LOCAL_LOGIN for local accounts; for single sign-on users a configured provider and groups read
at a login no older than API_TOKEN_SSO_MAX_AGE_S (docs/sso.md); never for an inactive user."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from console.identity import tokens
from console.models import AuditEvent, IdentityLink

pytestmark = pytest.mark.django_db

URL = reverse("api:clusters")


def _get(secret: str):
    return Client(REMOTE_ADDR="10.4.4.4").get(URL, HTTP_AUTHORIZATION=f"Bearer {secret}")


def _token(user) -> tuple[str, str]:
    made = tokens.create_token(actor=user, name="ci", scope="read", days=365)
    return made.secret, made.token.prefix


def _refusal(prefix: str) -> AuditEvent:
    return AuditEvent.objects.filter(action="api.token.refused", targets=[f"api-token:{prefix}"]).latest("id")


@pytest.fixture
def local_user():
    return get_user_model().objects.create_user("dana", password="dana-pw-1")


@pytest.fixture
def sso_user(settings):
    settings.OIDC_ISSUER, settings.OIDC_CLIENT_ID = "https://idp.example", "console"
    user = get_user_model().objects.create(username="erin")
    user.set_unusable_password()
    user.save()
    IdentityLink.objects.create(
        user=user,
        provider="oidc",
        issuer="https://idp.example",
        subject="s-erin",
        last_login_at=timezone.now(),
    )
    return user


@pytest.mark.django_db(transaction=True)  # as a server runs: the refusal's audit opens its own transaction
def test_it_refuses_a_local_accounts_token_once_local_logins_are_switched_off(settings, local_user):
    secret, prefix = _token(local_user)
    assert _get(secret).status_code == 200
    settings.CONSOLE_LOCAL_LOGIN = "off"
    answer = _get(secret)
    assert answer.status_code == 401
    assert answer.json()["error"]["message"] == (
        f"The token {prefix} 'ci' cannot be used: local accounts are switched off (CONSOLE_LOCAL_LOGIN=off)."
    )
    event = _refusal(prefix)
    assert (event.actor_name, event.outcome, event.targets, event.source_ip) == (
        "dana",
        "refused",
        [f"api-token:{prefix}"],
        "10.4.4.4",
    )
    assert event.params == {
        "name": "ci",
        "scope": "read",
        "reason": "local accounts are switched off (CONSOLE_LOCAL_LOGIN=off)",
    }


def test_it_keeps_a_superusers_token_and_refuses_others_when_local_logins_are_for_superusers(
    settings, local_user
):
    root = get_user_model().objects.create_superuser("root", password="root-pw-1")
    secret, _ = _token(local_user)
    root_secret, _ = _token(root)
    settings.CONSOLE_LOCAL_LOGIN = "superusers"
    assert _get(secret).status_code == 401
    assert _get(root_secret).status_code == 200


def test_it_refuses_an_sso_users_token_once_their_groups_are_older_than_the_limit(settings, sso_user):
    settings.API_TOKEN_SSO_MAX_AGE_S = 3600
    secret, prefix = _token(sso_user)
    assert _get(secret).status_code == 200
    IdentityLink.objects.filter(user=sso_user).update(last_login_at=timezone.now() - timedelta(seconds=3601))
    answer = _get(secret)
    assert answer.status_code == 401
    reason = (
        "its user's groups were last read from the identity provider more than 3600 s ago: "
        "log in to the console again to use it"
    )
    assert answer.json()["error"]["message"] == f"The token {prefix} 'ci' cannot be used: {reason}."
    assert _refusal(prefix).params["reason"] == reason
    # a new login reads the groups again (console.identity.users stamps the link): the token works again
    IdentityLink.objects.filter(user=sso_user).update(last_login_at=timezone.now())
    assert _get(secret).status_code == 200


def test_it_refuses_an_sso_users_token_once_their_provider_is_no_longer_configured(settings, sso_user):
    secret, _ = _token(sso_user)
    settings.OIDC_ISSUER = ""
    answer = _get(secret)
    assert answer.status_code == 401
    assert "its single sign-on provider (oidc) is no longer configured" in answer.json()["error"]["message"]


def test_it_refuses_an_inactive_users_token(local_user):
    secret, prefix = _token(local_user)
    local_user.is_active = False
    local_user.save()
    answer = _get(secret)
    assert answer.status_code == 401
    assert (
        answer.json()["error"]["message"] == f"The token {prefix} 'ci' cannot be used: its user is inactive."
    )
    assert _refusal(prefix).params["reason"] == "its user is inactive"
