"""OAUTHBEARER token validation as Kafka's broker does it (BrokerJwtValidator, KIP-768).

The JWT's signature is checked against the keys of a JWKS endpoint (fetched once, cached, fetched
again when a token names a key id the cache does not know: a rotated key); then ``exp`` and
``iat`` must be present and ``exp`` not past (30 s clock skew, ``sasl.oauthbearer.clock.skew.seconds``),
``aud`` must name the expected audience and ``iss`` the expected issuer when those are set, and
``sub`` names the principal. joserfc does the JOSE work; ``alg: none`` and HMAC are refused.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import urllib.parse
from typing import Any

import requests
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

log = logging.getLogger("sandbox.oauth")

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
FETCH_TIMEOUT_S = 10.0


class InvalidToken(Exception):
    """The token is not accepted; the text says why (logged only, never sent to the client)."""


def fetch_jwks(url: str) -> dict[str, Any]:
    """The JWKS document at ``url`` (http(s):// or file://)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":
        with open(urllib.parse.unquote(parts.path), encoding="utf-8") as fh:
            return json.load(fh)
    resp = requests.get(url, timeout=FETCH_TIMEOUT_S)
    resp.raise_for_status()
    return resp.json()


def _header(token: str) -> dict[str, Any]:
    try:
        first = token.split(".")[0]
        header = json.loads(base64.urlsafe_b64decode(first + "=" * (-len(first) % 4)))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidToken(f"not a JWT: {exc}") from None
    if not isinstance(header, dict):
        raise InvalidToken("not a JWT: the header is not an object")
    return header


class JwksValidator:
    """Validates OAUTHBEARER tokens against one JWKS endpoint, audience and issuer."""

    def __init__(
        self, jwks_url: str, audience: str | None, issuer: str | None, clock_skew_s: int = 30
    ) -> None:
        self.jwks_url = jwks_url
        self.audience = audience
        self.issuer = issuer
        self.clock_skew_s = clock_skew_s
        self.fetches = 0  # how many times the JWKS was fetched (tests read it)
        self._keys: KeySet | None = None
        self._lock: asyncio.Lock | None = None

    async def _refresh(self, seen: int) -> None:
        """Fetch the JWKS again unless another connection did since ``seen``."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.fetches != seen and self._keys is not None:
                return
            try:
                doc = await asyncio.to_thread(fetch_jwks, self.jwks_url)
                self._keys = KeySet.import_key_set(doc)  # type: ignore[arg-type]
            except (OSError, ValueError, requests.RequestException, JoseError) as exc:
                log.warning("could not fetch the JWKS at %s: %s", self.jwks_url, exc)
            finally:
                self.fetches += 1

    def _known(self, kid: str | None) -> bool:
        if self._keys is None:
            return False
        if kid is None:
            return len(self._keys.keys) == 1
        return any(k.kid == kid for k in self._keys.keys)

    async def validate(self, token: str) -> tuple[str, int]:
        """The token's subject (the principal name) and expiry (ms since the epoch); InvalidToken
        when it is not acceptable."""
        kid = _header(token).get("kid")
        if not self._known(kid):
            await self._refresh(self.fetches)
            if not self._known(kid):
                raise InvalidToken(f"no key with kid {kid!r} in the JWKS at {self.jwks_url}")
        assert self._keys is not None
        try:
            decoded = jwt.decode(token, self._keys, algorithms=ALGORITHMS)
        except JoseError as exc:
            raise InvalidToken(f"signature: {exc.error}") from None
        options: dict[str, Any] = {
            "exp": {"essential": True},
            "iat": {"essential": True},
            "sub": {"essential": True},
        }
        if self.audience:
            options["aud"] = {"essential": True, "values": [self.audience]}
        if self.issuer:
            options["iss"] = {"essential": True, "value": self.issuer}
        try:
            jwt.JWTClaimsRegistry(leeway=self.clock_skew_s, **options).validate(decoded.claims)
        except JoseError as exc:
            raise InvalidToken(f"claims: {exc.error} {exc.description or ''}".strip()) from None
        return str(decoded.claims["sub"]), int(float(decoded.claims["exp"]) * 1000)


__all__ = ["InvalidToken", "JwksValidator", "fetch_jwks"]
