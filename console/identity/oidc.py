"""OpenID Connect login: the authorization code flow with PKCE (S256), through Authlib's Django client.

Authlib reads the provider's discovery document, keeps state, nonce and code verifier in the session,
exchanges the code and validates the ID token (signature against the provider's JWKS, issuer, audience,
expiry with OIDC_CLOCK_SKEW_S of leeway, nonce, at_hash). This module turns its answer into a console
user, or into a refusal with a reason the audit can keep.
"""

from __future__ import annotations

import logging

import requests
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.django_client import OAuth
from django.conf import settings
from joserfc.errors import JoseError

from console.identity import core
from console.identity.core import Refused

log = logging.getLogger(__name__)

PROVIDER = "oidc"
_NEXT = "console_oidc_next"
ID_TOKEN = "console_oidc_id_token"  # kept for the logout hint (RP-initiated logout)


def configured() -> bool:
    return bool(settings.OIDC_ISSUER and settings.OIDC_CLIENT_ID)


def discovery_url() -> str:
    return (
        settings.OIDC_DISCOVERY_URL or settings.OIDC_ISSUER.rstrip("/") + "/.well-known/openid-configuration"
    )


def client():
    """A fresh Authlib client (settings may differ between calls; the discovery document is fetched
    once per login step)."""
    oauth = OAuth()
    oauth.register(
        "console",
        client_id=settings.OIDC_CLIENT_ID,
        client_secret=settings.OIDC_CLIENT_SECRET or None,
        server_metadata_url=discovery_url(),
        client_kwargs={
            "scope": settings.OIDC_SCOPES,
            "code_challenge_method": "S256",
            "default_timeout": settings.OIDC_TIMEOUT_S,
        },
    )
    return oauth.create_client("console")


def start(request, redirect_uri: str, next_url: str):
    """The redirect to the provider's authorization endpoint (state, nonce and PKCE verifier kept in
    the session by Authlib)."""
    request.session[_NEXT] = next_url
    try:
        return client().authorize_redirect(request, redirect_uri)
    except (requests.RequestException, ValueError) as exc:
        raise Refused(f"the identity provider is unreachable ({type(exc).__name__})") from exc


def next_url(request) -> str:
    return request.session.pop(_NEXT, "") or ""


def finish(request) -> dict:
    """Exchange the code and validate the ID token; the token's claims, or Refused."""
    if request.GET.get("error"):
        raise Refused(f"the identity provider answered {request.GET['error'][:100]!r}")
    if not request.GET.get("state") or not request.GET.get("code"):
        raise Refused("the callback carries no code or state")
    try:
        token = client().authorize_access_token(request, leeway=settings.OIDC_CLOCK_SKEW_S)
    except OAuthError as exc:
        raise Refused(f"OAuth error: {exc.error or exc}"[:300]) from exc
    except JoseError as exc:
        # Bad signature, expired, wrong issuer or audience, nonce mismatch: the token is not trusted.
        raise Refused(f"ID token rejected: {type(exc).__name__}: {exc}"[:300]) from exc
    except (requests.RequestException, ValueError, KeyError) as exc:
        raise Refused(f"the token exchange failed ({type(exc).__name__})") from exc
    claims = token.get("userinfo")
    if not claims:
        raise Refused("the provider returned no ID token (is the 'openid' scope requested?)")
    request.session[ID_TOKEN] = token["id_token"]
    return dict(claims)


def identity(claims: dict) -> tuple[str, str, str, list[str]]:
    """(issuer, subject, user name, groups) from validated claims."""
    subject = str(claims.get("sub") or "")
    username = str(claims.get(settings.OIDC_USERNAME_CLAIM) or "").strip()
    if not subject or not username:
        raise Refused(f"the ID token has no 'sub' or '{settings.OIDC_USERNAME_CLAIM}' claim", username)
    return (
        str(claims.get("iss") or ""),
        subject,
        username,
        core.groups_claim(claims, settings.OIDC_GROUPS_CLAIM),
    )


def logout_url(request, id_token: str, post_logout_redirect_uri: str) -> str | None:
    """The provider's end-session URL (RP-initiated logout), when it announces one."""
    try:
        app = client()
        if not app.load_server_metadata().get("end_session_endpoint"):
            return None
        return app.create_logout_url(
            post_logout_redirect_uri=post_logout_redirect_uri, id_token_hint=id_token or None
        )["url"]
    except (requests.RequestException, ValueError, KeyError, RuntimeError) as exc:
        log.warning("OIDC end-session URL unavailable: %s", exc)
        return None
