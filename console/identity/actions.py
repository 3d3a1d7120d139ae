"""The OpenID Connect login, start to finish: the verbs the views call."""

from __future__ import annotations

from django.conf import settings
from django.contrib import auth
from django.db import transaction
from django.shortcuts import resolve_url
from django.utils.http import url_has_allowed_host_and_scheme

from console.addresses import client_ip
from console.audit import accounts as audit_accounts
from console.identity import groups, oidc, users
from console.identity.core import Refused

OIDC_BACKEND = "console.identity.backends.OIDCBackend"


def _ip(request) -> str | None:
    return client_ip(request)


def safe_next(request, candidate: str) -> str:
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def start_oidc_login(request, *, redirect_uri: str, next_url: str):
    """The redirect to the identity provider; Refused (audited) when it cannot be reached."""
    try:
        return oidc.start(request, redirect_uri, safe_next(request, next_url))
    except Refused as exc:
        audit_accounts.login_refused(request, method="oidc", provider=_provider(), reason=exc.reason)
        raise


def finish_oidc_login(request) -> str:
    """Validate the provider's answer, find or create the user, recompute their groups, log them in;
    the URL to go on to. Refused (audited as auth.login_failed, with the reason) otherwise."""
    try:
        claims = oidc.finish(request)
        issuer, subject, username, idp_groups = oidc.identity(claims)
        with transaction.atomic():
            user = users.oidc_user(
                issuer=issuer,
                subject=subject,
                username=username,
                profile=users.oidc_profile(claims),
                source_ip=_ip(request),
            )
            groups.apply_idp_groups(user=user, provider="oidc", idp_groups=idp_groups, source_ip=_ip(request))
    except Refused as exc:
        audit_accounts.login_refused(
            request, method="oidc", provider=_provider(), reason=exc.reason, username=exc.username
        )
        raise
    next_url = oidc.next_url(request)
    id_token = request.session.get(oidc.ID_TOKEN)
    user.backend = OIDC_BACKEND  # what the login audit event reads (method and provider)
    auth.login(request, user, backend=OIDC_BACKEND)  # a new session key; the audit's auth.login event
    request.session[oidc.ID_TOKEN] = id_token
    return safe_next(request, next_url)


def logout_redirect(request, post_logout_redirect_uri: str) -> str | None:
    """Before logging out: the provider's end-session URL for an OIDC session (None otherwise)."""
    if not oidc.configured() or not settings.OIDC_LOGOUT_AT_PROVIDER:
        return None
    if request.session.get(auth.BACKEND_SESSION_KEY) != OIDC_BACKEND:
        return None
    return oidc.logout_url(request, request.session.get(oidc.ID_TOKEN, ""), post_logout_redirect_uri)


def _provider() -> str:
    return settings.OIDC_ISSUER or "oidc"
