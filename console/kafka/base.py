"""Shared plumbing of the gateway: lazily created clients, waiting on futures, mode checks."""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from console import collector

from .clientconf import confluent_config
from .connection import ClusterConnection
from .diagnose import probe_addresses
from .errors import KafkaOperationError, timeout_error, translate
from .kp import KpClient
from .metadata_read import WholeMetadata, read_metadata

#: Errors that end a client's login for good (until the settings change).
LOGIN_REFUSED = frozenset({"SASL_AUTHENTICATION_FAILED", "UNSUPPORTED_SASL_MECHANISM", "ILLEGAL_SASL_STATE"})

K = TypeVar("K")
V = TypeVar("V")


class GatewayBase:
    """Holds the two clients of one connection; both are created on first use."""

    def __init__(self, conn: ClusterConnection) -> None:
        self.conn = conn
        self._lock = threading.Lock()
        self._admin_client: Any = None
        self._kp_client: KpClient | None = None
        self._probed = False
        self._seen_brokers: dict[int, Any] = {}  # every broker this gateway saw registered, by id

    # -- clients ----------------------------------------------------------------------------

    @property
    def _admin(self) -> Any:
        """The confluent-kafka AdminClient (broker mode only)."""
        self._require_brokers("this operation")
        if self._admin_client is None:
            with self._opening(), self._lock:
                if self._admin_client is None:
                    self._admin_client = self._new_admin()
        if self.conn.sasl_mechanism == "OAUTHBEARER":
            # librdkafka asks oauth_cb for its token (first and at each refresh) from the poll queue
            self._admin_client.poll(0)
        return self._admin_client

    def _new_admin(self) -> Any:
        """A new AdminClient; for OAUTHBEARER the token is fetched first, so that a token endpoint
        failure is reported as such (librdkafka only says "OAuth token not set" after 10 s)."""
        from confluent_kafka.admin import AdminClient

        if self.conn.oauth is not None and self.conn.sasl_mechanism == "OAUTHBEARER":
            from .oauth import token_source

            token_source(self.conn.oauth, self.conn.ca_cert_pem).token(self.conn.request_timeout_s)
        try:
            return AdminClient(confluent_config(self.conn))
        except Exception as exc:  # noqa: BLE001 - every client error is translated
            raise translate(exc, self.conn.address_text) from None

    def _whole_metadata(self) -> WholeMetadata:
        """Every topic's Metadata from any broker (``KpClient``'s failover: one that does not answer
        within the connect timeout is passed over), decoded in one pass (``metadata_read.py``)."""
        self._require_brokers("listing topics")
        self._reachable()
        with collector.paused():  # the decoder's tuples and bytes are not walked while they are made
            return read_metadata(self._kp)

    @property
    def _kp(self) -> KpClient:
        """The kafka-python request client (both modes)."""
        if self._kp_client is None:
            with self._opening(), self._lock:
                if self._kp_client is None:
                    try:
                        self._kp_client = KpClient(self.conn)
                    except Exception as exc:  # noqa: BLE001
                        raise translate(exc, self.conn.address_text) from None
        return self._kp_client

    def _opening(self) -> contextlib.AbstractContextManager[None]:
        """Held while a client is created (before ``_lock``): the process's cap on open clients
        (``gateway.py``) makes room here; nothing to do for a gateway of its own."""
        return contextlib.nullcontext()

    @property
    def is_open(self) -> bool:
        """Whether a client of this gateway is open (each costs a network thread and buffers)."""
        return self._kp_client is not None or self._admin_client is not None

    def close(self) -> None:
        """Release both clients (the gateway can be used again afterwards)."""
        with self._lock:
            kp, self._kp_client = self._kp_client, None
            self._admin_client = None
            self._probed = False
        if kp is not None:
            kp.close()

    # -- helpers ----------------------------------------------------------------------------

    def _require_brokers(self, what: str) -> None:
        if self.conn.controller_mode:
            raise KafkaOperationError(
                115,
                "UNSUPPORTED_ENDPOINT_TYPE",
                f"{what} needs a broker connection; it is not offered in direct-to-controller mode (KIP-919)",
                False,
            )

    def _reachable(self) -> None:
        """Fail fast, naming the address, when no bootstrap address accepts a connection.

        librdkafka otherwise waits the whole request timeout and reports a vague timeout.
        Only done until the first successful call.
        """
        if not self._probed:
            probe_addresses(self.conn)
            if self.conn.uses_sasl:
                # librdkafka reports a refused login only as a transport failure: kafka-python names it
                self._login()
            self._probed = True

    def _login(self) -> None:
        """Bootstrap the kafka-python client; one whose login was refused is dropped (it would only
        retry the same credentials in the background, and answer "node not ready" meanwhile)."""
        try:
            self._kp.ensure_ready()
        except KafkaOperationError as err:
            if err.name in LOGIN_REFUSED or err.name.startswith(("TLS_", "TOKEN_", "KERBEROS_")):
                with self._lock:
                    kp, self._kp_client = self._kp_client, None
                if kp is not None:
                    kp.close()
            raise

    @property
    def _timeout(self) -> float:
        return self.conn.request_timeout_s

    def _admin_kwargs(self) -> dict[str, float]:
        return {"request_timeout": self._timeout}

    def _wait(self, future: concurrent.futures.Future, what: str) -> Any:
        """Result of one confluent future, translated; bounded by the request timeout."""
        try:
            return future.result(timeout=self._timeout + self.conn.connect_timeout_s + 1)
        except concurrent.futures.TimeoutError:
            raise timeout_error(what, self._timeout) from None
        except Exception as exc:  # noqa: BLE001 - every client error is translated
            raise translate(exc, what) from None

    def _wait_all(
        self, futures: dict[K, concurrent.futures.Future], convert: Callable[[K, Any], V], what: str
    ) -> dict[K, V | KafkaOperationError]:
        """Independent per-resource results of a batch: ``{key: value | KafkaOperationError}``."""
        out: dict[K, V | KafkaOperationError] = {}
        for key, fut in futures.items():
            try:
                out[key] = convert(key, self._wait(fut, f"{what} {key}"))
            except KafkaOperationError as err:
                out[key] = err
        return out

    def _call(self, fn: Callable[..., Any], *args: Any, what: str, **kwargs: Any) -> Any:
        """Call a client function, translating what it raises synchronously."""
        try:
            return fn(*args, **kwargs)
        except KafkaOperationError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise translate(exc, what) from None


def group_by_topic(pairs: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    """``[(topic, partition)]`` (or TopicPartitions) -> ``{topic: [partitions]}``, first-seen order."""
    out: dict[str, list[int]] = {}
    for topic, partition in pairs:
        out.setdefault(topic, []).append(partition)
    return out
