"""Registry of implemented Kafka APIs, and the contract between the server and a handler.

A handler module registers its APIs with ``@api`` (request class, advertised versions, node roles);
``sandbox/handlers/__init__.py`` is the one place that imports every handler module. A handler gets a
``RequestContext`` and returns a response object, an ``Encoded`` body, a ``Deferred`` (call again
later) or None (no answer), or raises ``CloseConnection``. This module imports no handler, no server
and no cluster: the cluster reaches handlers as a ``ClusterView``.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kafka.protocol.api_header import ResponseHeader

if TYPE_CHECKING:
    from sandbox.state import ClusterState, Node

# Kafka's create.topic.policy.class.name: a message it returns fails the topic with POLICY_VIOLATION.
CreateTopicPolicy = Callable[[str, int, int, dict[str, str]], "str | None"]


class ClusterView(Protocol):
    """What a handler reads of the running cluster besides its state (SandboxCluster is one)."""

    create_topic_policy: CreateTopicPolicy | None


@dataclass(slots=True)
class RequestContext:
    """What a handler gets besides the decoded request."""

    cluster: ClusterView
    state: ClusterState
    node: Node
    version: int
    client_id: str | None
    client_host: str
    principal: str = "User:ANONYMOUS"  # the connection's authenticated principal (TLS or SASL)
    retried: bool = False
    started: float = field(default_factory=time.monotonic)


class Deferred:
    """Returned by a handler to be called again after ``wait_s`` (long polls, group rebalances)."""

    def __init__(self, wait_s: float) -> None:
        self.wait_s = wait_s


class CloseConnection(Exception):
    """Raised by a handler for requests Kafka rejects at parse time (the connection is closed)."""


class Encoded:
    """A pre-encoded response body (no header), e.g. a cached full Metadata response."""

    __slots__ = ("body", "flexible")

    def __init__(self, body: bytes, flexible: bool) -> None:
        self.body = body
        self.flexible = flexible


def frame_body(correlation_id: int, body: bytes, flexible_header: bool) -> bytes:
    """Frame a response body with its response header."""
    hdr = ResponseHeader(correlation_id=correlation_id).encode(flexible=flexible_header)
    return struct.pack(">i", len(hdr) + len(body)) + hdr + body


Handler = Callable[[RequestContext, Any], Any]


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """One implemented API and where it is served."""

    key: int
    name: str
    request_cls: Any
    min_version: int
    max_version: int
    handler: Handler
    broker: bool
    controller: bool


APIS: dict[int, ApiSpec] = {}


def api(
    request_cls: Any, min_version: int, max_version: int, *, broker: bool = True, controller: bool = False
) -> Callable[[Handler], Handler]:
    """Register a handler for ``request_cls`` advertised as ``min_version..max_version``."""

    def deco(fn: Handler) -> Handler:
        APIS[request_cls.API_KEY] = ApiSpec(
            request_cls.API_KEY,
            request_cls.name,
            request_cls,
            min_version,
            max_version,
            fn,
            broker,
            controller,
        )
        return fn

    return deco


def served(is_controller: bool) -> dict[int, ApiSpec]:
    """The registered APIs a broker (or a controller) serves."""
    return {k: s for k, s in sorted(APIS.items()) if (s.controller if is_controller else s.broker)}


def api_key_of(name_or_key: str | int) -> int:
    """Resolve an API name ("Metadata", "CreateTopics") or key to the numeric key."""
    if isinstance(name_or_key, int):
        return name_or_key
    if name_or_key.isdigit():
        return int(name_or_key)
    wanted = name_or_key.lower().removesuffix("request")
    for spec in APIS.values():
        if spec.name.lower().removesuffix("request") == wanted:
            return spec.key
    raise ValueError(f"unknown API {name_or_key!r}")


def set_errors(obj: Any, code: int, message: str | None) -> None:
    """Recursively set every error_code (and error_message) in a response, for fault injection."""
    fields = getattr(obj, "fields", None)
    if not fields:
        return
    for name, f in fields.items():
        if name == "error_code":
            obj.error_code = code
        elif name == "error_message":
            obj.error_message = message
        elif f.is_struct_array():
            for item in getattr(obj, name) or []:
                set_errors(item, code, message)
        elif f.is_struct():
            sub = getattr(obj, name, None)
            if sub is not None:
                set_errors(sub, code, message)


def fast_factory(cls: Any) -> Callable[..., Any]:
    """A constructor for a kafka-python data class that skips DataContainer.__init__'s per-field
    loop (hot paths building 100k objects). Every field must be given; encoding is unchanged and
    still done by kafka-python (tests compare the bytes with the regular constructor)."""
    names = tuple(cls.fields)

    def make(**values: Any) -> Any:
        obj = cls.__new__(cls)
        obj.tags = None
        obj.unknown_tags = None
        obj._version = None
        for name in names:
            setattr(obj, name, values[name])
        return obj

    return make
