"""SASL mechanism servers, answering as Kafka 4.1's do (PlainSaslServer, ScramSaslServer,
OAuthBearerSaslServer), and the credentials a secured sandbox checks them against.

Each server's ``evaluate(token)`` returns the challenge to send back and raises ``SaslFailure``
with the text Kafka puts in SaslAuthenticate's error message: a mechanism's own message where
Kafka throws SaslAuthenticationException (PLAIN's "Invalid username or password", OAUTHBEARER's
JSON error), the generic "... due to invalid credentials with SASL mechanism X" where Kafka throws
a SaslException (every SCRAM failure, a malformed OAUTHBEARER message) so as not to tell an
unauthenticated client whether a user exists.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import TYPE_CHECKING, Protocol

import scramp

from sandbox.oauth import InvalidToken, JwksValidator
from sandbox.scram_store import ScramCredential
from sandbox.security import SandboxSecurity

if TYPE_CHECKING:
    from sandbox.state import ClusterState

SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM_ITERATIONS = 4096  # Kafka's minimum for both SCRAM mechanisms
INVALID_TOKEN = '{"status":"invalid_token"}'
# RFC 7628 client first message as Kafka parses it (OAuthBearerClientInitialResponse):
# gs2 header with an optional authzid (saslname: %x01-7F but "," and "=", or =2C / =3D), then
# key=value pairs (auth=Bearer <token>, SASL extensions) each ended by %x01, then a final %x01
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*"
_OAUTH_FIRST = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01", re.S)
_OAUTH_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_.a-zA-Z0-9]+)")


class SaslFailure(Exception):
    """Authentication failed; ``str(exc)`` is the error message Kafka sends the client."""


def generic_failure(mechanism: str) -> SaslFailure:
    """SaslServerAuthenticator's answer to a SaslException: it names no cause."""
    return SaslFailure(
        f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
    )


class MechanismServer(Protocol):
    """One SASL exchange on one connection."""

    complete: bool
    principal: str | None
    expires_ms: int | None  # when the credential expires (ms since the epoch), if it does

    async def evaluate(self, token: bytes) -> bytes: ...


_HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}


def scram_keys(mechanism: str, salted_password: bytes) -> tuple[bytes, bytes]:
    """(stored key, server key) from SaltedPassword, as Kafka's controller turns an upsertion of
    AlterUserScramCredentials into a UserScramCredentialRecord (RFC 5802: StoredKey = H(ClientKey),
    ClientKey = HMAC(SaltedPassword, "Client Key"), ServerKey = HMAC(SaltedPassword, "Server Key"))."""
    h = _HASHES[mechanism]
    client_key = hmac.new(salted_password, b"Client Key", h).digest()
    return h(client_key).digest(), hmac.new(salted_password, b"Server Key", h).digest()


class SaslRealm:
    """What a secured cluster checks SASL clients against: users (PLAIN passwords, fixed at start),
    the SCRAM credentials kept in the cluster's state (made at start for the configured users of each
    enabled SCRAM mechanism, then changed by AlterUserScramCredentials and saved with the state) and
    the OAUTHBEARER token validator."""

    def __init__(self, security: SandboxSecurity, state: ClusterState) -> None:
        self.security = security
        self.mechanisms = security.enabled_mechanisms
        self._users = dict(security.users)
        self._state = state
        for mech in SCRAM:
            if mech in self.mechanisms:
                m = scramp.ScramMechanism(mech)
                for user, password in self._users.items():
                    state.scram_credentials.put(
                        mech, user, m.make_auth_info(password, iteration_count=SCRAM_ITERATIONS)
                    )
        self.validator = (
            JwksValidator(
                security.oauth_jwks_url,
                security.oauth_audience,
                security.oauth_issuer,
                security.oauth_clock_skew_s,
            )
            if security.oauth_jwks_url
            else None
        )

    def check_password(self, user: str, password: str) -> bool:
        """PLAIN: the password given is the user's (constant time)."""
        expected = self._users.get(user)
        return expected is not None and hmac.compare_digest(expected.encode(), password.encode())

    def scram_credential(self, mechanism: str, user: str) -> ScramCredential | None:
        """SCRAM: (salt, stored key, server key, iterations) of a user, None for an unknown one."""
        return self._state.scram_credentials.get(mechanism, user)

    def server(self, mechanism: str) -> MechanismServer:
        """A fresh server for one exchange of an enabled ``mechanism``."""
        if mechanism == "PLAIN":
            return PlainServer(self)
        if mechanism in SCRAM:
            return ScramServer(self, mechanism)
        if mechanism == "OAUTHBEARER" and self.validator is not None:
            return OAuthBearerServer(self.validator)
        raise ValueError(f"mechanism {mechanism} is not enabled")


class PlainServer:
    """RFC 4616: ``[authzid] NUL authcid NUL passwd`` in one message."""

    def __init__(self, realm: SaslRealm) -> None:
        self.realm = realm
        self.complete = False
        self.principal: str | None = None
        self.expires_ms: int | None = None

    async def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", "replace").split("\x00")
        if len(parts) != 3:
            raise generic_failure("PLAIN")  # "Invalid SASL/PLAIN response: expected 3 tokens"
        authzid, user, password = parts
        if not user or not password:
            raise generic_failure("PLAIN")  # username / password not specified
        if not self.realm.check_password(user, password):
            raise SaslFailure("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise SaslFailure(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self.complete, self.principal = True, f"User:{user}"
        return b""


class ScramServer:
    """RFC 5802 SCRAM-SHA-256/512 with scramp: client-first -> server-first, client-final ->
    server-final. An unknown user fails at the first message, a wrong password at the second,
    both with the generic message (as Kafka's SaslException)."""

    def __init__(self, realm: SaslRealm, mechanism: str) -> None:
        self.mechanism = mechanism
        self.complete = False
        self.principal: str | None = None
        self.expires_ms: int | None = None
        self._user: str | None = None

        def auth_fn(user: str) -> tuple[bytes, bytes, bytes, int] | None:
            self._user = user
            return realm.scram_credential(mechanism, user)

        self._server = scramp.ScramMechanism(mechanism).make_server(auth_fn)
        self._step = 0

    async def evaluate(self, token: bytes) -> bytes:
        try:
            if self._step == 0:
                self._step = 1
                self._server.set_client_first(token.decode("utf-8"))
                return self._server.get_server_first().encode()
            if self._step == 1:
                self._step = 2
                self._server.set_client_final(token.decode("utf-8"))
                final = self._server.get_server_final().encode()
                self.complete, self.principal = True, f"User:{self._user}"
                return final
        except (scramp.ScramException, UnicodeDecodeError, ValueError, KeyError):
            raise generic_failure(self.mechanism) from None
        raise generic_failure(self.mechanism)  # "Unexpected challenge in Sasl server state"


class OAuthBearerServer:
    """RFC 7628 as Kafka answers it: a token that does not validate gets the JSON error
    ``{"status":"invalid_token"}`` as a challenge; the client's %x01 reply then fails the exchange
    with that JSON as the error message."""

    def __init__(self, validator: JwksValidator) -> None:
        self.validator = validator
        self.complete = False
        self.principal: str | None = None
        self.expires_ms: int | None = None
        self.reason: str | None = None  # why the last token was refused (for the log)
        self._error: str | None = None

    async def evaluate(self, token: bytes) -> bytes:
        if token == b"\x01" and self._error is not None:
            raise SaslFailure(self._error)
        self._error = None
        m = _OAUTH_FIRST.fullmatch(token.decode("utf-8", "replace"))
        if m is None:
            raise generic_failure("OAUTHBEARER")  # "Invalid OAUTHBEARER client first message"
        pairs = dict(p.split("=", 1) for p in m.group("kvpairs").split("\x01") if p)
        auth = _OAUTH_AUTH.fullmatch(pairs.get("auth", ""))
        if auth is None or auth.group("scheme").lower() != "bearer":
            raise generic_failure("OAUTHBEARER")
        try:
            subject, self.expires_ms = await self.validator.validate(auth.group("token"))
        except InvalidToken as exc:
            self.reason, self._error = str(exc), INVALID_TOKEN
            return INVALID_TOKEN.encode()
        authzid = m.group("authzid") or ""
        if authzid and authzid != subject:
            raise SaslFailure(
                f"Authentication failed: Client requested an authorization id ({authzid}) that is different "
                f"from the token's principal name ({subject})"
            )
        self.complete, self.principal = True, f"User:{subject}"
        return b""


__all__ = [
    "SaslFailure",
    "SaslRealm",
    "generic_failure",
    "scram_keys",
]
