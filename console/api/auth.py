"""How the API knows who is calling: a bearer API token, or the browser's session (with CSRF).

A read-only token is refused every unsafe method here, before any area action runs, whatever its
user's roles; the refusal is audited like a refused POST of the web pages.

Failed token attempts count as failed log-ins in django-axes under one pseudo user name per address
(``AXES_FAILURE_LIMIT`` failures make the address's further bad tokens answer 429 for
``AXES_COOLOFF_MINUTES``); the pseudo name is no valid user name, so it never locks a person's web
log-in. The lock-out throttles guessing only: a valid token is checked first and always accepted,
so made-up tokens sent from an address (or through the proxy every client shares) lock nobody out.
A genuine token that the login rules refuse (``tokens.TokenRefused``) is no failed attempt.
The address is the client's as django-axes finds it (through django-ipware behind the proxy).
"""

from __future__ import annotations

from axes.handlers.proxy import AxesProxyHandler
from django.contrib.auth.signals import user_login_failed
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import SAFE_METHODS, BasePermission

from console import addresses
from console.audit.refusals import record_refusal
from console.identity import tokens
from console.models import ApiToken, Cluster
from console.models.api import TokenScope


def client_ip(request) -> str | None:
    """The client's address as the lock-out sees it (AXES_IPWARE_* behind the proxy)."""
    return addresses.client_ip(request)


TOKEN_ATTEMPTS = {"username": "[api token]"}  # axes' credentials for token attempts (no real user name)


class TokenAuthentication(BaseAuthentication):
    """``Authorization: Bearer kc_<prefix>_<secret>``."""

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != b"bearer":
            return None
        http = request._request
        try:
            if len(parts) != 2:
                raise tokens.TokenInvalid("malformed header")
            token = tokens.authenticate(parts[1].decode("ascii"), source_ip=client_ip(request))
        except tokens.TokenRefused as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from None
        except (UnicodeError, tokens.TokenInvalid):
            if not AxesProxyHandler.is_allowed(http, TOKEN_ATTEMPTS):
                raise exceptions.Throttled(
                    detail="Too many failed token attempts from this address; a valid token still works."
                ) from None
            user_login_failed.send(sender=__name__, credentials=TOKEN_ATTEMPTS, request=http)
            if len(parts) != 2:
                raise exceptions.AuthenticationFailed("Send 'Authorization: Bearer <token>'.") from None
            raise exceptions.AuthenticationFailed("The token is invalid, expired or revoked.") from None
        return tokens.acting_user(token), token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class TokenScheme(OpenApiAuthenticationExtension):
    target_class = "console.api.auth.TokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token (kc_…) from /account/tokens/.",
        }


def token_of(request) -> ApiToken | None:
    return request.auth if isinstance(request.auth, ApiToken) else None


class ApiAccess(BasePermission):
    """Signed in (token or session); a read-only token may only read."""

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        token = token_of(request)
        if token is not None and token.scope != TokenScope.WRITE and request.method not in SAFE_METHODS:
            # audited as a refusal by the API's exception handler (console.api.errors.handle)
            message = f"The {token.label} is read-only: it can never change anything."
            raise exceptions.PermissionDenied(message, code="read_only_token")
        return True


def audit_refusal(request, view, exc: BaseException) -> None:
    """A refused change by a signed-in caller is recorded once (outcome "refused"), as the pages do."""
    if request.method in SAFE_METHODS or not getattr(request.user, "is_authenticated", False):
        return
    match = getattr(request, "resolver_match", None)
    name = (match.kwargs.get("name") if match else None) or ""
    record_refusal(
        actor=request.user,
        action=f"api.{match.url_name if match and match.url_name else 'post'}",
        cluster=Cluster.objects.filter(name=name).first() if name else None,
        exc=exc,
        targets=[request.path[:300]],
        source_ip=client_ip(request),
    )
