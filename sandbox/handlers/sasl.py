"""SaslHandshake (17) and SaslAuthenticate (36): the authentication that opens a SASL connection.

``SaslAuthenticator`` follows Kafka 4.1's SaslServerAuthenticator (KIP-43, KIP-152), one per
connection on a SASL listener, until it is complete:

- before the handshake only ApiVersions (once, answered as usual) and SaslHandshake are read;
  any other request closes the connection without an answer (Kafka's InvalidRequestException:
  "Unexpected Kafka request of type X during SASL handshake");
- SaslHandshake for a mechanism that is not enabled answers UNSUPPORTED_SASL_MECHANISM (33) with
  the enabled mechanisms, then closes; an enabled one answers them with no error;
- after a v1 handshake only SaslAuthenticate is read; another request is answered with its own
  response carrying ILLEGAL_SASL_STATE (34), then the connection is closed; a failed exchange
  answers SASL_AUTHENTICATION_FAILED (58) with Kafka's message, then closes; after a v0
  handshake the tokens are exchanged raw (size-prefixed), and a failure just closes;
- frames before authentication may not exceed ``sasl.server.max.receive.size`` (512 KiB).

Sessions (KIP-368): the lifetime answered is the credential's remaining life (an OAUTHBEARER
token's ``exp``), bounded by ``connections_max_reauth_ms`` when that is set, never negative; 0
when neither applies (PLAIN, SCRAM by default). A request arriving after the session ended closes
the connection. A client that used SaslAuthenticate v1+ may re-authenticate on the open
connection with a new SaslHandshake: same mechanism (another one closes the connection at its
next token), same principal ("Cannot change principals during re-authentication from ...").
Otherwise, once authenticated, SaslHandshake and SaslAuthenticate reach the handlers below, which
answer ILLEGAL_SASL_STATE as KafkaApis does (and so on PLAINTEXT and SSL listeners).
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Awaitable, Callable
from typing import Any

from kafka.protocol.metadata import ApiVersionsRequest, MetadataResponse
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from sandbox.apis import ApiSpec, RequestContext, api, frame_body, set_errors
from sandbox.sasl import MechanismServer, SaslFailure, SaslRealm

log = logging.getLogger("sandbox.server")

SASL_MAX_RECEIVE_BYTES = 524288  # sasl.server.max.receive.size
ILLEGAL_SASL_STATE = 34
UNSUPPORTED_SASL_MECHANISM = 33
SASL_AUTHENTICATION_FAILED = 58
_HDR = struct.Struct(">hhi")

FAILED_AUTHENTICATION_DELAY_S = 0.1  # connection.failed.authentication.delay.ms: the answer is read first
Handle = Callable[[bytes], Awaitable["bytes | None"]]  # the node's ordinary request handling
# what to send, and None to keep the connection or the seconds after which to close it
Answer = tuple[bytes, "float | None"]


@api(SaslHandshakeRequest, 0, 1, controller=True)
def sasl_handshake(ctx: RequestContext, req: Any) -> Any:
    """A handshake on an authenticated (or non-SASL) connection: ILLEGAL_SASL_STATE."""
    return SaslHandshakeResponse(version=ctx.version, error_code=ILLEGAL_SASL_STATE, mechanisms=[])


@api(SaslAuthenticateRequest, 0, 2, controller=True)
def sasl_authenticate(ctx: RequestContext, req: Any) -> Any:
    """SaslAuthenticate outside an exchange: ILLEGAL_SASL_STATE, with Kafka's message."""
    return SaslAuthenticateResponse(
        version=ctx.version,
        error_code=ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
        session_lifetime_ms=0,
    )


def _frame(correlation_id: int, resp: Any, version: int) -> bytes:
    return frame_body(correlation_id, resp.encode(version=version), resp.flexible_version_q(version))


def _illegal_state_response(spec: ApiSpec, req: Any, version: int) -> Any:
    """The request's own response type carrying ILLEGAL_SASL_STATE (Kafka's getErrorResponse)."""
    from kafka.protocol.api_header import RequestHeader, ResponseClassRegistry

    hdr = RequestHeader(
        request_api_key=spec.key, request_api_version=version, correlation_id=0, client_id=None
    )
    resp = ResponseClassRegistry.get_response_class(hdr)(version=version)
    message = (
        f"Unexpected Kafka request of type {spec.name.removesuffix('Request')} during SASL authentication."
    )
    if spec.key == 3 and req.topics:  # Metadata: every requested topic carries the error
        resp.topics = [
            MetadataResponse.MetadataResponseTopic(
                error_code=ILLEGAL_SASL_STATE,
                name=t.name,
                topic_id=t.topic_id,
                is_internal=False,
                partitions=[],
            )
            for t in req.topics
        ]
    set_errors(resp, ILLEGAL_SASL_STATE, message)
    return resp


class SaslAuthenticator:
    """The SASL state of one connection; ``handle`` takes each frame until ``complete``."""

    def __init__(
        self,
        realm: SaslRealm,
        apis: dict[int, ApiSpec],
        node_id: int,
        peer: str,
        kafka: Handle,
        renewing: SaslAuthenticator | None = None,
    ) -> None:
        self.realm = realm
        self.apis = apis
        self.node_id = node_id
        self.peer = peer
        self.kafka = kafka
        self.renewing = renewing  # the session this exchange re-authenticates (KIP-368)
        self.state = "HANDSHAKE_REQUEST" if renewing else "HANDSHAKE_OR_VERSIONS_REQUEST"
        self.mechanism: str | None = None
        self.server: MechanismServer | None = None
        self.principal: str | None = None
        self.supports_reauthentication = bool(renewing and renewing.supports_reauthentication)
        self.session_ends: float | None = None  # time.monotonic() when the session ends

    def session_expired(self) -> bool:
        """Whether the authenticated session has ended (its credential expired)."""
        return self.session_ends is not None and time.monotonic() >= self.session_ends

    def reauthentication(self) -> SaslAuthenticator:
        """A new exchange for this authenticated connection (its client sent SaslHandshake)."""
        return SaslAuthenticator(self.realm, self.apis, self.node_id, self.peer, self.kafka, renewing=self)

    @property
    def complete(self) -> bool:
        """Whether the client has authenticated (ordinary requests are served from now on)."""
        return self.state == "COMPLETE"

    def _close(self, why: str) -> Answer:
        log.info("node %s: closing SASL connection from %s: %s", self.node_id, self.peer, why)
        return b"", 0.0

    async def handle(self, data: bytes) -> Answer:
        """The bytes to answer ``data`` with, and None or when to close the connection after them:
        a failed authentication is closed 100 ms after its answer, as Kafka delays it."""
        if len(data) > SASL_MAX_RECEIVE_BYTES:
            return self._close("Failing SASL authentication due to invalid receive size")
        if self.state == "RAW":
            return await self._raw_token(data)
        if self.state == "REAUTH_BAD_MECHANISM":
            assert self.renewing is not None
            return self._close(
                f"SASL mechanism '{self.mechanism}' requested by client is not supported for re-authentication "
                f"of mechanism '{self.renewing.mechanism}'"
            )
        if len(data) < _HDR.size:
            return self._close("Invalid request: too short for a request header")
        key, version, correlation_id = _HDR.unpack_from(data)
        if self.state == "AUTHENTICATE":
            return await self._authenticate(data, key, version, correlation_id)
        if key == ApiVersionsRequest.API_KEY and self.state == "HANDSHAKE_OR_VERSIONS_REQUEST":
            out = await self.kafka(data)
            if out is None:
                return self._close("invalid ApiVersions request")
            # after an error (UNSUPPORTED_VERSION, INVALID_REQUEST) the client may ask again; the
            # response header is never flexible, so the error code follows size and correlation id
            if struct.unpack_from(">h", out, 8)[0] == 0:
                self.state = "HANDSHAKE_REQUEST"
            return out, None
        if key != SaslHandshakeRequest.API_KEY:
            name = self.apis[key].name if key in self.apis else f"api key {key}"
            return self._close(f"Unexpected Kafka request of type {name} during SASL handshake.")
        return self._handshake(data, version, correlation_id)

    def _handshake(self, data: bytes, version: int, correlation_id: int) -> Answer:
        if not 0 <= version <= 1:
            return self._close(f"SaslHandshake v{version} is not supported")
        try:
            req = SaslHandshakeRequest.decode(data, version=version, header=True)
        except Exception as exc:
            return self._close(f"malformed SaslHandshake: {exc}")
        enabled = list(self.realm.mechanisms)
        if req.mechanism not in enabled:
            resp = SaslHandshakeResponse(
                version=version, error_code=UNSUPPORTED_SASL_MECHANISM, mechanisms=enabled
            )
            log.info(
                "node %s: %s asked for SASL mechanism %s (not enabled)",
                self.node_id,
                self.peer,
                req.mechanism,
            )
            return _frame(correlation_id, resp, version), FAILED_AUTHENTICATION_DELAY_S
        self.mechanism = req.mechanism
        self.server = self.realm.server(req.mechanism)
        self.state = "AUTHENTICATE" if version >= 1 else "RAW"
        if self.renewing is not None and req.mechanism != self.renewing.mechanism:
            self.state = "REAUTH_BAD_MECHANISM"
        resp = SaslHandshakeResponse(version=version, error_code=0, mechanisms=enabled)
        return _frame(correlation_id, resp, version), None

    async def _authenticate(self, data: bytes, key: int, version: int, correlation_id: int) -> Answer:
        spec = self.apis.get(key)
        if spec is None or not spec.min_version <= version <= spec.max_version:
            return self._close(f"unsupported api {key} v{version} during SASL authentication")
        try:
            req = spec.request_cls.decode(data, version=version, header=True)
        except Exception as exc:
            return self._close(f"malformed {spec.name}: {exc}")
        if key != SaslAuthenticateRequest.API_KEY:
            log.info("node %s: %s sent %s during SASL authentication", self.node_id, self.peer, spec.name)
            illegal = _illegal_state_response(spec, req, version)
            return _frame(correlation_id, illegal, version), FAILED_AUTHENTICATION_DELAY_S
        assert self.server is not None
        self.supports_reauthentication = self.supports_reauthentication or version > 0
        try:
            challenge = await self.server.evaluate(bytes(req.auth_bytes))
            lifetime_ms = self._maybe_complete()
        except SaslFailure as exc:
            self._log_failure(str(exc))
            resp = SaslAuthenticateResponse(
                version=version, error_code=SASL_AUTHENTICATION_FAILED, error_message=str(exc), auth_bytes=b""
            )
            return _frame(correlation_id, resp, version), FAILED_AUTHENTICATION_DELAY_S
        resp = SaslAuthenticateResponse(
            version=version,
            error_code=0,
            error_message=None,
            auth_bytes=challenge,
            session_lifetime_ms=lifetime_ms,
        )
        return _frame(correlation_id, resp, version), None

    async def _raw_token(self, token: bytes) -> Answer:
        assert self.server is not None
        try:
            challenge = await self.server.evaluate(token)
            self._maybe_complete()
        except SaslFailure as exc:
            self._log_failure(str(exc))
            return b"", 0.0
        return struct.pack(">i", len(challenge)) + challenge, None

    def _maybe_complete(self) -> int:
        """Finish the exchange when the mechanism has; return the session lifetime (ms) to answer."""
        assert self.server is not None
        if not self.server.complete:
            return 0
        principal = self.server.principal
        if self.renewing is not None and principal != self.renewing.principal:
            old = (self.renewing.principal or "").replace(":", ".", 1)
            new = (principal or "").replace(":", ".", 1)
            raise SaslFailure(f"Cannot change principals during re-authentication from {old}: {new}")
        self.state, self.principal = "COMPLETE", principal
        lifetime_ms = self._session_lifetime_ms()
        log.info(
            "node %s: %s %sauthenticated as %s with %s",
            self.node_id,
            self.peer,
            "re-" if self.renewing else "",
            self.principal,
            self.mechanism,
        )
        return lifetime_ms

    def _session_lifetime_ms(self) -> int:
        """Kafka's calcCompletionTimesAndReturnSessionLifetimeMs: the credential's remaining life
        and/or connections.max.reauth.ms, whichever is shorter, never negative; the session then
        ends that long from now (no end when neither applies)."""
        assert self.server is not None
        expires_ms = self.server.expires_ms
        max_reauth_ms = self.realm.security.connections_max_reauth_ms
        if expires_ms is None and max_reauth_ms <= 0:
            return 0
        lifetimes = [expires_ms - int(time.time() * 1000)] if expires_ms is not None else []
        if max_reauth_ms > 0:
            lifetimes.append(max_reauth_ms)
        lifetime_ms = max(0, min(lifetimes))
        self.session_ends = time.monotonic() + lifetime_ms / 1000
        return lifetime_ms

    def _log_failure(self, message: str) -> None:
        reason = getattr(self.server, "reason", None)
        log.info(
            "node %s: SASL %s authentication from %s failed: %s%s",
            self.node_id,
            self.mechanism,
            self.peer,
            message,
            f" ({reason})" if reason else "",
        )
