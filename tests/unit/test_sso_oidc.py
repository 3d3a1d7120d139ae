"""OpenID Connect login against a real provider (tests/sso/provider, its own process): the code flow
with PKCE end to end, groups mapped to roles, and forged ID tokens refused and audited."""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlparse

import pytest
import requests
from authlib.integrations.django_client import DjangoOAuth2App
from django.contrib.auth import get_user_model
from django.urls import reverse
from joserfc import jwt
from joserfc.jwk import RSAKey

from console import access
from console.models import AuditEvent, IdentityLink, Role
from tests.sso.fixtures import identity_provider, oidc_provider  # noqa: F401 - fixtures
from tests.sso.helpers import bind_operators, provider_login, use_oidc

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(identity_provider, settings):  # noqa: F811
    use_oidc(settings, identity_provider)
    return identity_provider


@pytest.fixture
def operators_bound(offline_cluster):
    return bind_operators(offline_cluster, "oidc:kafka-operators")


def _start(client) -> str:
    """The console's redirect to the provider (the authorization URL)."""
    response = client.get(reverse("sso_oidc_login") + "?next=/clusters/")
    assert response.status_code == 302
    return response["Location"]


def _sign_in(client, username, password):
    callback = provider_login(_start(client), username, password)
    return client.get(callback[callback.index("/sso/") :], REMOTE_ADDR="10.7.7.7")


def _last(action):
    return AuditEvent.objects.filter(action=action).order_by("-id").first()


def test_the_authorization_request_uses_pkce_and_a_nonce(client, provider):
    query = parse_qs(urlparse(_start(client)).query)
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) >= 43
    assert query["nonce"] and query["state"] and query["response_type"] == ["code"]
    assert query["scope"] == ["openid profile email"] and query["client_id"] == ["console"]


def test_it_logs_in_with_the_roles_the_groups_claim_maps_to(client, provider, operators_bound):
    response = _sign_in(client, "alice", "alice-pw-1")
    assert response.status_code == 302 and response["Location"] == "/clusters/"
    alice = get_user_model().objects.get(username="alice")
    assert (alice.email, alice.first_name, alice.has_usable_password()) == (
        "alice@example.org",
        "Alice",
        False,
    )
    link = IdentityLink.objects.get(user=alice)
    assert (link.provider, link.issuer) == ("oidc", provider.issuer)
    assert access.roles(alice, operators_bound) == {Role.OPERATOR}
    assert client.get(reverse("cluster_list")).status_code == 200  # the session is alice's
    login = _last("auth.login")
    assert login.params == {"method": "oidc", "provider": provider.issuer}
    assert login.source_ip == "10.7.7.7"
    assert _last("auth.groups.change").params["roles"] == {"offline": {"gained": ["operator"], "lost": []}}


def test_a_group_removed_at_the_provider_takes_the_role_away_at_the_next_login(
    client, provider, operators_bound
):
    assert _sign_in(client, "alice", "alice-pw-1").status_code == 302
    provider.set_groups("alice", ["kafka-viewers"])
    client.post(reverse("logout"))
    assert _sign_in(client, "alice", "alice-pw-1").status_code == 302
    alice = get_user_model().objects.get(username="alice")
    assert set(alice.groups.values_list("name", flat=True)) == {"oidc:kafka-viewers"}
    assert access.roles(alice, operators_bound) == set()
    change = _last("auth.groups.change")
    assert (change.params["added"], change.params["removed"]) == (
        ["oidc:kafka-viewers"],
        ["oidc:kafka-operators"],
    )
    assert change.params["roles"] == {"offline": {"gained": [], "lost": ["operator"]}}


def test_logout_goes_on_to_the_providers_end_session_endpoint(client, provider):
    assert _sign_in(client, "bob", "bob-pw-1").status_code == 302
    response = client.post(reverse("logout"))
    assert response.status_code == 200
    url = re.search(r'id="provider-logout" href="([^"]+)"', response.content.decode()).group(1)
    assert url.startswith(f"{provider.issuer}/logout/") and "id_token_hint=" in url
    assert _last("auth.logout").actor_name == "bob"
    assert client.get(reverse("cluster_list")).status_code == 302  # logged out here


def test_a_local_account_is_never_taken_over(client, provider):
    get_user_model().objects.create_user("bob", password="local-bob-pw")
    response = _sign_in(client, "bob", "bob-pw-1")
    assert response.status_code == 302 and response["Location"] == reverse("login")
    failed = _last("auth.login_failed")
    assert failed.params["method"] == "oidc" and failed.params["username"] == "bob"
    assert "belongs to a console account that is not a oidc account" in failed.params["reason"]
    assert not IdentityLink.objects.exists()


def test_an_error_from_the_provider_is_refused_and_audited(client, provider):
    state = parse_qs(urlparse(_start(client)).query)["state"][0]
    response = client.get(reverse("sso_oidc_callback") + f"?error=access_denied&state={state}")
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert _last("auth.login_failed").params["reason"] == "the identity provider answered 'access_denied'"


# -- forged ID tokens: the token endpoint's answer is replaced, everything else is the real provider --


def _claims(provider, nonce, **changes):
    now = int(time.time())
    claims = {
        "iss": provider.issuer, "aud": provider.client_id, "sub": "4242", "preferred_username": "eve",
        "groups": ["kafka-operators"], "iat": now, "exp": now + 300, "nonce": nonce,
    }  # fmt: skip
    claims.update(changes)
    return claims


def _kid(provider) -> str:
    return requests.get(f"{provider.issuer}/.well-known/jwks.json", timeout=5).json()["keys"][0]["kid"]


def _sign(claims, pem, kid) -> str:
    return jwt.encode({"alg": "RS256", "kid": kid}, claims, RSAKey.import_key(pem))


def _forged(client, monkeypatch, provider, make):
    """Start a real login (state, nonce, verifier in the session), then answer the code exchange with
    the token ``make(nonce)`` returns."""
    query = parse_qs(urlparse(_start(client)).query)
    token = {
        "access_token": "opaque",
        "token_type": "Bearer",
        "expires_in": 300,
        "id_token": make(query["nonce"][0]),
    }
    monkeypatch.setattr(DjangoOAuth2App, "fetch_access_token", lambda self, *a, **kw: dict(token))
    return client.get(reverse("sso_oidc_callback") + f"?code=forged&state={query['state'][0]}")


def test_a_token_signed_with_the_providers_key_is_accepted(client, monkeypatch, provider):
    """The control for the refusals below: the same path takes a well-formed, well-signed token."""
    kid = _kid(provider)
    response = _forged(
        client, monkeypatch, provider, lambda n: _sign(_claims(provider, n), provider.private_key_pem, kid)
    )
    assert response.status_code == 302 and response["Location"] == "/clusters/"
    assert get_user_model().objects.get(username="eve").groups.filter(name="oidc:kafka-operators").exists()


def _refused(response, reason_part):
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert not get_user_model().objects.filter(username="eve").exists()
    assert not AuditEvent.objects.filter(action="auth.login").exists()
    failed = _last("auth.login_failed")
    assert failed.outcome == "failure" and failed.params["method"] == "oidc"
    assert reason_part in failed.params["reason"], failed.params
    return failed


def test_a_tampered_id_token_is_refused_and_audited(client, monkeypatch, provider):
    kid = _kid(provider)

    def tampered(nonce):
        header, payload, signature = _sign(_claims(provider, nonce), provider.private_key_pem, kid).split(".")
        import base64
        import json

        forged = _claims(provider, nonce, groups=["kafka-admins"])
        body = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
        return f"{header}.{body}.{signature}"

    failed = _refused(_forged(client, monkeypatch, provider, tampered), "BadSignatureError")
    assert failed.params["provider"] == provider.issuer


def test_a_token_signed_by_another_key_is_refused(client, monkeypatch, provider):
    from tests.sso.fixtures import _rsa_pem

    kid, other = _kid(provider), _rsa_pem()
    _refused(
        _forged(client, monkeypatch, provider, lambda n: _sign(_claims(provider, n), other, kid)),
        "BadSignatureError",
    )


def test_an_expired_id_token_is_refused_and_audited(client, monkeypatch, provider):
    kid = _kid(provider)
    old = int(time.time()) - 3600

    def expired(nonce):
        return _sign(_claims(provider, nonce, iat=old - 300, exp=old), provider.private_key_pem, kid)

    _refused(_forged(client, monkeypatch, provider, expired), "ExpiredTokenError")


def test_a_token_for_another_client_or_nonce_is_refused(client, monkeypatch, provider):
    kid = _kid(provider)
    key = provider.private_key_pem
    _refused(
        _forged(
            client, monkeypatch, provider, lambda n: _sign(_claims(provider, n, aud="other-app"), key, kid)
        ),
        "ID token rejected",  # aud is not this client (Authlib then asks for azp; either way refused)
    )
    _refused(
        _forged(client, monkeypatch, provider, lambda n: _sign(_claims(provider, "replayed"), key, kid)),
        "nonce",
    )


def test_without_oidc_configured_the_routes_are_absent_and_the_page_is_as_before(client, settings):
    settings.OIDC_ISSUER = ""
    assert client.get(reverse("sso_oidc_login")).status_code == 404
    assert client.get(reverse("sso_oidc_callback") + "?code=x&state=y").status_code == 404
    page = client.get(reverse("login")).content.decode()
    assert "sso-oidc" not in page and 'id="id_password"' in page


@pytest.mark.parametrize(
    "query",
    ["?code=x&state=never-issued", "?code=x", "?state=only", "", "?error=%00%FF&state=" + "x" * 3000],
)
def test_a_callback_without_a_login_in_progress_is_refused_not_an_error(client, provider, query):
    response = client.get(reverse("sso_oidc_callback") + query)
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert _last("auth.login_failed").params["method"] == "oidc"
    assert not AuditEvent.objects.filter(action="auth.login").exists()


def test_an_unreachable_provider_is_a_refusal_with_the_reason(client, settings):
    from tests.sso.fixtures import free_port

    settings.OIDC_ISSUER = f"http://127.0.0.1:{free_port()}/o"
    settings.OIDC_CLIENT_ID = "console"
    response = client.get(reverse("sso_oidc_login"))
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert "unreachable" in _last("auth.login_failed").params["reason"]
