"""SASL/OAUTHBEARER tokens: the OIDC client-credentials grant, cached per connection's settings.

Both client paths take their token from here: librdkafka through ``oauth_cb``
(:func:`confluent_oauth_cb`) and kafka-python through an ``AbstractTokenProvider``
(:class:`KpTokenProvider`). One :class:`TokenSource` per :class:`OAuthSettings` fetches a token
when none is cached or the cached one is due (at 80% of its lifetime, never later than 30 s before
it expires); one refresh runs at a time and the others keep using the still-valid token meanwhile.
Every failure is a :class:`KafkaOperationError` whose text names the cause; neither the client
secret nor a token ever appears in a message or a log line.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from .errors import KafkaOperationError
from .sasl import OAuthSettings

__all__ = ["Token", "TokenSource", "KpTokenProvider", "confluent_oauth_cb", "token_source", "refresh_at"]

log = logging.getLogger(__name__)

REFRESH_FRACTION = 0.8
REFRESH_MARGIN_S = 30.0
DEFAULT_LIFETIME_S = 300.0  # an answer without expires_in and an opaque token: assume 5 minutes


@dataclass(frozen=True)
class Token:
    """An access token and what the clients need to know about it (its value never in the repr)."""

    value: str = field(repr=False)
    issued_at: float
    expires_at: float
    principal: str

    @property
    def lifetime(self) -> float:
        return self.expires_at - self.issued_at


def refresh_at(token: Token) -> float:
    """When a fresh token is fetched: at 80% of the lifetime, and no later than 30 s before expiry."""
    lifetime = token.lifetime
    return token.issued_at + max(0.0, min(REFRESH_FRACTION * lifetime, lifetime - REFRESH_MARGIN_S))


def _error(name: str, message: str, retriable: bool = False) -> KafkaOperationError:
    return KafkaOperationError(58, name, message, retriable)


def _claims(token: str) -> dict:
    """The JWT payload, read without verification (Kafka verifies it); {} for an opaque token."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, binascii.Error):
        return {}
    return claims if isinstance(claims, dict) else {}


def _reason(exc: BaseException) -> str:
    """The innermost cause of a requests failure (urllib3 wraps it twice), without the URL."""
    seen = exc
    while seen.__context__ is not None or getattr(seen, "reason", None) is not None:
        inner = getattr(seen, "reason", None)
        nxt = inner if isinstance(inner, BaseException) else seen.__context__
        if nxt is None or nxt is seen:
            break
        seen = nxt
    text = str(seen)
    # urllib3: "<urllib3.connection.HTTPConnection object at 0x..>: Failed to establish ...: [Errno 111] ..."
    if ">: " in text:
        text = text.split(">: ", 1)[1]
    return text or type(seen).__name__


class TokenSource:
    """The cached token of one OAuth client (thread-safe; one refresh at a time)."""

    def __init__(
        self, settings: OAuthSettings, clock: Callable[[], float] = time.time, ca_pem: str | None = None
    ) -> None:
        self.settings = settings
        self.clock = clock
        self._session = _session(ca_pem)
        self._token: Token | None = None
        self._lock = threading.Lock()
        self.fetches = 0

    def token(self, timeout_s: float = 10.0) -> Token:
        """A valid token: the cached one until it is due, else a fresh one (bounded by ``timeout_s``)."""
        cached = self._token
        if cached is not None and self.clock() < refresh_at(cached):
            return cached
        # someone else refreshing: a still-valid token is good meanwhile
        if not self._lock.acquire(blocking=False):
            if cached is not None and self.clock() < cached.expires_at:
                return cached
            if not self._lock.acquire(timeout=timeout_s + 1):
                raise _error(
                    "TOKEN_ENDPOINT_UNREACHABLE", "token endpoint unreachable: another fetch is still waiting"
                )
        try:
            cached = self._token
            if cached is not None and self.clock() < refresh_at(cached):
                return cached
            try:
                self._token = self._fetch(timeout_s)
            except KafkaOperationError as err:
                if cached is not None and self.clock() < cached.expires_at - 1:
                    log.warning("token refresh failed, the current token is used until it expires: %s", err)
                    return cached
                raise
            return self._token
        finally:
            self._lock.release()

    def invalidate(self) -> None:
        """Forget the cached token (Kafka refused it: the next use fetches a new one)."""
        self._token = None

    def _fetch(self, timeout_s: float) -> Token:
        s = self.settings
        data = {"grant_type": "client_credentials"}
        if s.scope:
            data["scope"] = s.scope
        started = self.clock()
        self.fetches += 1
        try:
            answer = self._session.post(
                s.token_endpoint,
                data=data,
                auth=(s.client_id, s.client_secret),
                headers={"Accept": "application/json"},
                timeout=timeout_s,
                allow_redirects=False,  # the secret goes to the saved address only
            )
        except requests.Timeout:
            raise _error(
                "TOKEN_ENDPOINT_UNREACHABLE",
                f"token endpoint unreachable: {s.token_endpoint}: no answer within {timeout_s:g} s",
                True,
            ) from None
        except requests.exceptions.SSLError as exc:
            raise _error(
                "TOKEN_ENDPOINT_UNREACHABLE",
                f"token endpoint unreachable: {s.token_endpoint}: its TLS certificate was not accepted ({_reason(exc)})",
                False,
            ) from None
        except requests.RequestException as exc:
            raise _error(
                "TOKEN_ENDPOINT_UNREACHABLE",
                f"token endpoint unreachable: {s.token_endpoint}: {_reason(exc)}",
                True,
            ) from None
        try:
            body = answer.json()
        except ValueError:
            body = None
        if answer.status_code != 200:
            code = body.get("error") if isinstance(body, dict) else None
            what = f"{answer.status_code} {code}" if code else f"HTTP {answer.status_code}"
            desc = body.get("error_description") if isinstance(body, dict) else None
            raise _error(
                "TOKEN_ENDPOINT_REFUSED",
                f"token endpoint refused the client ({what})" + (f": {desc}" if desc else ""),
                answer.status_code >= 500,
            )
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("access_token"), str)
            or not body["access_token"]
        ):
            raise _error(
                "TOKEN_ENDPOINT_BAD_ANSWER", f"token endpoint {s.token_endpoint}: answer has no access_token"
            )
        value = body["access_token"]
        claims = _claims(value)
        expires_at = None
        if isinstance(claims.get("exp"), int | float):
            expires_at = float(claims["exp"])
        elif isinstance(body.get("expires_in"), int | float):
            expires_at = started + float(body["expires_in"])
        else:
            expires_at = started + DEFAULT_LIFETIME_S
        if expires_at <= started:
            raise _error(
                "TOKEN_EXPIRED",
                f"token endpoint {s.token_endpoint} answered a token that has already expired",
            )
        principal = str(claims.get("sub") or s.client_id)
        return Token(value, started, expires_at, principal)


class _TrustAdapter(HTTPAdapter):
    """HTTPS verified against the system's CAs and the connection's CA bundle (as Kafka's Java
    client verifies its token endpoint with the client's own TLS settings)."""

    def __init__(self, ca_pem: str) -> None:
        self._ctx = ssl.create_default_context()
        self._ctx.load_verify_locations(cadata=ca_pem)
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ssl_context"] = self._ctx
        super().init_poolmanager(*args, **kwargs)


def _session(ca_pem: str | None) -> requests.Session:
    session = requests.Session()
    if ca_pem:
        session.mount("https://", _TrustAdapter(ca_pem))
    return session


_sources: dict[tuple[OAuthSettings, str | None], TokenSource] = {}
_sources_lock = threading.Lock()


def token_source(settings: OAuthSettings, ca_pem: str | None = None) -> TokenSource:
    """The process-wide token source of these OAuth settings (and the CA bundle its endpoint is
    also trusted with: the connection's)."""
    with _sources_lock:
        source = _sources.get((settings, ca_pem))
        if source is None:
            source = _sources[(settings, ca_pem)] = TokenSource(settings, ca_pem=ca_pem)
        return source


def confluent_oauth_cb(
    settings: OAuthSettings, timeout_s: float, ca_pem: str | None = None
) -> Callable[[str], tuple]:
    """librdkafka's ``oauth_cb``: ``(token, expiry in epoch seconds, principal, extensions)``."""
    extensions = dict(settings.extensions)

    def oauth_cb(_config: str) -> tuple:
        token = token_source(settings, ca_pem).token(timeout_s)
        return token.value, token.expires_at, token.principal, extensions

    return oauth_cb


def _provider_base() -> type:
    from kafka.net.sasl.oauth import AbstractTokenProvider

    return AbstractTokenProvider


class KpTokenProvider(_provider_base()):
    """kafka-python's token provider over the same cache."""

    def __init__(self, settings: OAuthSettings, timeout_s: float, ca_pem: str | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.timeout_s = timeout_s
        self.ca_pem = ca_pem

    def token(self) -> str:
        return token_source(self.settings, self.ca_pem).token(self.timeout_s).value

    def extensions(self) -> dict[str, str]:
        return dict(self.settings.extensions)

    def __repr__(self) -> str:
        return f"<KpTokenProvider {self.settings.token_endpoint} client_id={self.settings.client_id}>"
