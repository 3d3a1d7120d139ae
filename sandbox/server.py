"""Asyncio TCP servers, one per node, speaking the Kafka wire protocol.

Framing and error handling follow Kafka's SocketServer: a request larger than
``socket.request.max.bytes`` (100 MiB), a frame that does not parse, an unknown API key or an
unsupported version closes that connection only; ApiVersions with an unsupported version is
answered with a v0 body carrying UNSUPPORTED_VERSION and the supported API list.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import ssl
import struct
from typing import TYPE_CHECKING, Any

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from sandbox import handlers  # importing the package registers every handler with sandbox.apis
from sandbox.apis import CloseConnection, Deferred, Encoded, RequestContext, frame_body, served, set_errors
from sandbox.security import ANONYMOUS, ssl_principal
from sandbox.tls import TlsStream

if TYPE_CHECKING:
    from sandbox.cluster import SandboxCluster
    from sandbox.state import Node

log = logging.getLogger("sandbox.server")

MAX_REQUEST_BYTES = 100 * 1024 * 1024  # socket.request.max.bytes default
UNSUPPORTED_VERSION = 35
TLS_HANDSHAKE_TIMEOUT_S = 30.0
SASL_HANDSHAKE = 17
_HDR = struct.Struct(">hhi")


def api_versions_v0_error(correlation_id: int, node: Node) -> bytes:
    """UNSUPPORTED_VERSION answer to an ApiVersions request of a version we do not know."""
    resp = ApiVersionsResponse(
        version=0,
        error_code=UNSUPPORTED_VERSION,
        api_keys=[
            ApiVersionsResponse.ApiVersion(
                api_key=s.key, min_version=s.min_version, max_version=s.max_version
            )
            for s in served(node.is_controller).values()
        ],
    )
    return frame_body(correlation_id, resp.encode(version=0), False)


class NodeServer:
    """The listener of one node; ``stop`` refuses new connections and drops open ones."""

    def __init__(self, cluster: SandboxCluster, node: Node) -> None:
        self.cluster = cluster
        self.node = node
        self.server: asyncio.base_events.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.tasks: set[asyncio.Task[Any]] = set()  # its connections' handlers (cancelled at shutdown)
        self.apis = served(node.is_controller)
        self.thawed = asyncio.Event()  # cleared while frozen: connections are accepted, nothing is answered
        self.thawed.set()

    async def start(self) -> None:
        """Listen on the node's port (choosing one when it is 0)."""
        self.server = await asyncio.start_server(
            self._serve, self.node.host, self.node.port, reuse_address=True, limit=1 << 20
        )
        self.node.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Close the listener and every open connection."""
        if self.server is not None:
            self.server.close()
            for w in list(self.writers):
                w.close()
            await self.server.wait_closed()
            self.server = None
        self.writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        peer = writer.get_extra_info("peername") or ("127.0.0.1", 0)
        stream: Any = writer
        try:
            if self.cluster.ssl_context is not None:
                stream = reader = await self._tls_handshake(reader, writer, peer[0])
                if stream is None:
                    return
            principal = ssl_principal(stream.get_extra_info("ssl_object"))
            sasl = self._sasl_authenticator(peer[0], principal)
            if self.cluster.security is not None and sasl is None:
                log.info("node %s: connection from %s as %s", self.node.node_id, peer[0], principal)
            while True:
                await self.thawed.wait()  # a frozen (SIGSTOP'd) node reads nothing until thawed
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                authenticating = sasl is not None and not sasl.complete
                if size < 0 or size > MAX_REQUEST_BYTES or (size < _HDR.size and not authenticating):
                    log.info("closing %s: bad request size %d", peer, size)
                    return
                data = await reader.readexactly(size)
                await self.thawed.wait()
                if sasl is not None and sasl.complete:
                    if sasl.session_expired():  # Kafka closes it whatever the request, a handshake too
                        log.info("node %s: closing %s: its SASL session expired", self.node.node_id, peer[0])
                        return
                    if _HDR.unpack_from(data)[0] == SASL_HANDSHAKE and sasl.supports_reauthentication:
                        sasl, authenticating = sasl.reauthentication(), True  # KIP-368
                close_after: float | None = None
                if sasl is not None and authenticating:
                    out, close_after = await sasl.handle(data)
                    principal = sasl.principal or principal
                else:
                    out = await self._handle(data, peer[0], principal)
                    close_after = 0.0 if out is None else None
                if out:
                    stream.write(out)
                    await stream.drain()
                if close_after is not None:
                    await asyncio.sleep(close_after)
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # peer went away, or the node is stopping
        except Exception:  # a bug in a handler must not take the node down
            log.exception("node %s: closing connection after error", self.node.node_id)
        finally:
            self.writers.discard(writer)
            self.tasks.discard(task)  # type: ignore[arg-type]
            writer.close()

    async def _tls_handshake(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str
    ) -> TlsStream | None:
        """The connection's TLS stream, or None when the handshake failed (the alert was sent)."""
        assert self.cluster.ssl_context is not None
        await self.thawed.wait()
        tls = TlsStream(self.cluster.ssl_context, reader, writer)
        try:
            await asyncio.wait_for(tls.handshake(), TLS_HANDSHAKE_TIMEOUT_S)
        except (TimeoutError, ssl.SSLError, ConnectionError) as exc:
            log.info("node %s: TLS handshake with %s failed: %s", self.node.node_id, host, exc)
            return None
        return tls

    def _sasl_authenticator(self, host: str, principal: str) -> handlers.sasl.SaslAuthenticator | None:
        """The SASL exchange a connection must finish first, on a SASL listener."""
        realm = self.cluster.sasl_realm
        if realm is None:
            return None
        return handlers.sasl.SaslAuthenticator(
            realm, self.apis, self.node.node_id, host, lambda data: self._handle(data, host, principal)
        )

    def _not_active_controller(self, key: int, req: Any) -> str | None:
        """NOT_CONTROLLER's message when a write reaches a controller that is not the active one.

        Changing a node's own log levels (BROKER_LOGGER) is handled by that node itself, so every
        controller accepts it (KIP-919), not only the active one.
        """
        active = self.cluster.state.active_controller
        if not (self.node.is_controller and key in CONTROLLER_WRITES and active != self.node.node_id):
            return None
        if key == INCREMENTAL_ALTER_CONFIGS and all(
            r.resource_type == BROKER_LOGGER and r.resource_name == str(self.node.node_id)
            for r in req.resources
        ):
            return None
        return f"The active controller appears to be node {active}."

    async def _handle(self, data: bytes, host: str, principal: str = ANONYMOUS) -> bytes | None:
        """Return the framed response, b"" for no response, None to close the connection."""
        key, version, correlation_id = _HDR.unpack_from(data)
        spec = self.apis.get(key)
        if (
            key == ApiVersionsRequest.API_KEY
            and spec
            and not (spec.min_version <= version <= spec.max_version)
        ):
            return api_versions_v0_error(correlation_id, self.node)
        if spec is None or not spec.min_version <= version <= spec.max_version:
            log.info("node %s: closing, unsupported api %d v%d", self.node.node_id, key, version)
            return None
        try:
            req = spec.request_cls.decode(data, version=version, header=True)
        except Exception as exc:
            log.info("node %s: closing, malformed %s v%d: %s", self.node.node_id, spec.name, version, exc)
            return None
        fault = self.cluster.faults.take(key, self.node.node_id)
        if fault is not None and fault.delay_s > 0:
            await asyncio.sleep(fault.delay_s)
        state = self.cluster.state
        not_active = self._not_active_controller(key, req)
        if (fault is not None and fault.error_code is not None) or not_active:
            with state.lock:  # a failed request must leave no trace: run it on a throwaway copy
                state = copy.deepcopy(state)
        ctx = RequestContext(self.cluster, state, self.node, version, req.header.client_id, host, principal)
        try:
            with self.cluster.state.lock:
                resp: Any = spec.handler(ctx, req)
        except CloseConnection as exc:
            log.info("node %s: closing, invalid %s: %s", self.node.node_id, spec.name, exc)
            return None
        while isinstance(resp, Deferred):  # long polls (Fetch), rebalances (JoinGroup/SyncGroup)
            await asyncio.sleep(resp.wait_s)
            ctx.retried = True
            with self.cluster.state.lock:
                resp = spec.handler(ctx, req)
        if resp is None:  # e.g. Produce with acks=0
            return b""
        if fault is not None and fault.error_code is not None:
            if isinstance(resp, Encoded):
                resp = _decode_response(key, version, resp)
            set_errors(resp, fault.error_code, fault.error_message)
        if not_active:
            not_controller(resp, key, not_active)
        if isinstance(resp, Encoded):
            return frame_body(correlation_id, resp.body, resp.flexible)
        flexible = resp.flexible_version_q(version) and key != ApiVersionsRequest.API_KEY
        return frame_body(correlation_id, resp.encode(version=version), flexible)


CONTROLLER_WRITES = {30, 31, 33, 43, 44, 45, 49, 57}  # Create/DeleteAcls, (Incremental)AlterConfigs, ...
INCREMENTAL_ALTER_CONFIGS = 44
BROKER_LOGGER = 8  # config resource type


def not_controller(resp: Any, key: int, message: str) -> None:
    """Rewrite a write's response the way an inactive KRaft controller answers (NOT_CONTROLLER)."""
    if key == 30:  # CreateAcls: entries that failed validation keep their own error
        for r in resp.results:
            if r.error_code == 0:
                r.error_code, r.error_message = 41, message
        return
    set_errors(resp, 41, message)
    if key == 31:
        for r in resp.filter_results:
            r.matching_acls = []
    elif key == 57:
        resp.results = []


def _decode_response(key: int, version: int, enc: Encoded) -> Any:
    """Decode a cached body back into a response object (to inject an error into it)."""
    from kafka.protocol.api_header import RequestHeader, ResponseClassRegistry

    hdr = RequestHeader(request_api_key=key, request_api_version=version, correlation_id=0, client_id=None)
    return ResponseClassRegistry.get_response_class(hdr).decode(enc.body, version=version)
