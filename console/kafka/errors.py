"""One error type for every Kafka failure, and the operator-facing text for it.

Both clients' exceptions (confluent-kafka's ``KafkaError``/``KafkaException`` and
kafka-python's ``kafka.errors.*``) are translated into :class:`KafkaOperationError` here,
so nothing above the gateway ever sees a client exception.

Local (client-side) failures are folded into Kafka's own vocabulary so the rest of the
console has one set of names to handle: a connection that cannot be made becomes
``NETWORK_EXCEPTION`` (with the address in the message) and a client-side timeout becomes
``REQUEST_TIMED_OUT``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "KafkaOperationError",
    "OPERATOR_TEXT",
    "from_code",
    "from_confluent",
    "from_kafka_python",
    "translate",
    "network_error",
    "timeout_error",
]

# Kafka protocol error codes the gateway produces itself.
NETWORK_EXCEPTION = 13
REQUEST_TIMED_OUT = 7
UNKNOWN_SERVER_ERROR = -1
INVALID_REQUEST = 42
UNSUPPORTED_VERSION = 35
MISMATCHED_ENDPOINT_TYPE = 114
UNSUPPORTED_ENDPOINT_TYPE = 115
UNKNOWN_CONTROLLER_ID = 116

#: What the operator should do, by Kafka error name.
OPERATOR_TEXT: dict[str, str] = {
    "TOPIC_ALREADY_EXISTS": "A topic with this name already exists. Pick another name or use the existing topic.",
    "UNKNOWN_TOPIC_OR_PARTITION": "The topic or partition does not exist (it may have just been deleted). Refresh and check the name.",
    "UNKNOWN_TOPIC_ID": "The topic id is unknown; the topic was probably deleted. Refresh the page.",
    "INVALID_TOPIC_EXCEPTION": "The topic name is not valid: use only letters, digits, '.', '_' and '-', at most 249 characters, not '.' or '..'.",
    "INVALID_PARTITIONS": "The partition count is not valid: it must be at least 1 (and, when adding partitions, more than the current count).",
    "INVALID_REPLICATION_FACTOR": "The replication factor is not valid: it must be at least 1 and at most the number of live brokers.",
    "INVALID_REPLICA_ASSIGNMENT": "The replica assignment is not valid: every partition needs the same number of distinct, existing broker ids.",
    "INVALID_CONFIG": "A config key or value was rejected. Check the key name and the allowed values in the documentation.",
    "POLICY_VIOLATION": "The cluster's create/alter policy rejected this request. Ask the cluster owners which limits apply.",
    "CLUSTER_AUTHORIZATION_FAILED": "The console's Kafka principal is not allowed to do this on the cluster. Grant it the needed ACL (e.g. ALTER or DESCRIBE on CLUSTER).",
    "TOPIC_AUTHORIZATION_FAILED": "The console's Kafka principal is not allowed to access this topic. Grant it the needed topic ACL.",
    "GROUP_AUTHORIZATION_FAILED": "The console's Kafka principal is not allowed to access this consumer group.",
    "SECURITY_DISABLED": "No authorizer is configured on the cluster, so ACLs cannot be managed.",
    "SASL_AUTHENTICATION_FAILED": "Authentication failed: check the SASL mechanism and the credentials (user name and password, OAuth client, or Kerberos principal) of the cluster connection.",
    "ILLEGAL_SASL_STATE": "The SASL handshake failed: check the security protocol and SASL mechanism of the cluster connection.",
    "UNSUPPORTED_SASL_MECHANISM": "The cluster does not accept this SASL mechanism. Pick one the listener enables.",
    "TLS_SERVER_CERTIFICATE_REJECTED": "The cluster's TLS certificate was not accepted. Give the CA bundle that issued it, check that the address matches a name in the certificate, and that it has not expired.",
    "TLS_CLIENT_CERTIFICATE_REFUSED": "The cluster refused the console's client certificate (mTLS). Upload a valid certificate issued by a CA the listener trusts, with its private key.",
    "TLS_VERSION_REFUSED": "The cluster and the console share no TLS version. Check the connection's minimum TLS version and the listener's ssl.enabled.protocols.",
    "TLS_HANDSHAKE_FAILED": "The TLS handshake failed. Check that the listener speaks TLS (security protocol SSL or SASL_SSL) and its TLS settings.",
    "TOKEN_ENDPOINT_UNREACHABLE": "The OAuth token endpoint could not be reached. Check its URL and that the console can reach it.",
    "TOKEN_ENDPOINT_REFUSED": "The OAuth token endpoint refused the console's client. Check the client id, client secret and scope.",
    "TOKEN_ENDPOINT_BAD_ANSWER": "The OAuth token endpoint's answer has no usable access token. Check that the URL is the identity provider's token endpoint.",
    "TOKEN_EXPIRED": "The OAuth token is already expired. Check the clocks of the console and the identity provider.",
    "KERBEROS_UNAVAILABLE": 'Kerberos (GSSAPI) support is not installed on this console: install the "kerberos" extra.',
    "KERBEROS_LOGIN_FAILED": "The Kerberos login failed. Check the principal, the keytab, the realm's KDCs (krb5.conf) and the clocks.",
    "REQUEST_TIMED_OUT": "The request timed out. It may still complete on the cluster: re-read the state before retrying.",
    "NETWORK_EXCEPTION": "The cluster could not be reached. Check the address, port, security protocol and that the brokers are up.",
    "BROKER_NOT_AVAILABLE": "The broker is not available. Check that it is running.",
    "LEADER_NOT_AVAILABLE": "The partition has no leader right now (an election may be in progress). Retry in a moment.",
    "NOT_CONTROLLER": "The request reached a node that is not the active controller. Retry; the console will find the controller.",
    "NOT_LEADER_OR_FOLLOWER": "Leadership moved while the request was in flight. Retry.",
    "INVALID_REQUEST": "The request is not valid for this cluster. Check the input.",
    "UNSUPPORTED_VERSION": "The cluster does not support this operation (its Kafka version is too old).",
    "NO_REASSIGNMENT_IN_PROGRESS": "There is no reassignment in progress for this partition, so there is nothing to cancel.",
    "REASSIGNMENT_IN_PROGRESS": "A reassignment is already in progress for this partition. Wait for it or cancel it first.",
    "ELECTION_NOT_NEEDED": "The preferred replica is already the leader; nothing to do.",
    "PREFERRED_LEADER_NOT_AVAILABLE": "The preferred replica is not in sync or its broker is down, so it cannot become leader now.",
    "ELIGIBLE_LEADERS_NOT_AVAILABLE": "No in-sync replica can become leader. Only an unclean election (with data loss) could elect one.",
    "INVALID_PRINCIPAL_TYPE": "The principal must look like 'User:name' (or 'Group:name').",
    "UNKNOWN_SERVER_ERROR": "The cluster reported an unexpected error. Check the broker logs.",
    "KAFKA_STORAGE_ERROR": "A log directory on the broker is offline. Check the broker's disks.",
    "LOG_DIR_NOT_FOUND": "The log directory does not exist on that broker.",
    "REPLICA_NOT_AVAILABLE": "The replica is not available on that broker.",
    "THROTTLING_QUOTA_EXCEEDED": "The cluster is throttling admin requests. Retry in a moment or with smaller batches.",
    "TOPIC_DELETION_DISABLED": "Topic deletion is disabled on this cluster (delete.topic.enable=false).",
    "INVALID_UPDATE_VERSION": "The feature version update is not valid.",
    "FEATURE_UPDATE_FAILED": "The feature update failed on the controller.",
    "MISMATCHED_ENDPOINT_TYPE": "These addresses are brokers — register them as bootstrap servers (or these are controllers — register them as bootstrap controllers).",
    "UNSUPPORTED_ENDPOINT_TYPE": "This operation is not available in direct-to-controller mode (or the controllers' metadata version is too old for controller registrations). Use a broker connection.",
    "UNKNOWN_CONTROLLER_ID": "The controller id named in the request is not part of the quorum. Refresh the controller list.",
}


@dataclass(unsafe_hash=True)
class KafkaOperationError(Exception):
    """A Kafka failure: protocol error code and name, the message, and whether a retry may help.

    Treat as immutable. (Not a frozen dataclass: Python sets ``__traceback__`` on raised
    exceptions, e.g. in ``contextlib``, which a frozen dataclass would refuse.)
    """

    code: int
    name: str
    message: str = ""
    retriable: bool = False

    def __post_init__(self) -> None:
        Exception.__init__(self, self.code, self.name, self.message)

    def __str__(self) -> str:
        return f"{self.name}: {self.message}" if self.message else self.name

    def __reduce__(self) -> tuple[Any, ...]:
        return (KafkaOperationError, (self.code, self.name, self.message, self.retriable))

    @property
    def operator_text(self) -> str:
        """What the operator should do about this error (falls back to the Kafka message)."""
        text = OPERATOR_TEXT.get(self.name)
        if text is None:
            return self.message or f"Kafka error {self.name} ({self.code})."
        if self.name in _WITH_DETAIL and self.message:
            return f"{text} ({self.message})"
        return text

    def as_json(self) -> dict[str, str]:
        """How an answer of the API, the CLI's JSON and a result's ``as_json`` name it."""
        return {"name": self.name, "message": self.operator_text}

    def with_message(self, message: str) -> KafkaOperationError:
        """A copy carrying a different message."""
        return KafkaOperationError(self.code, self.name, message, self.retriable)


#: Errors whose message (the cause, from Kafka or the probe; never a secret) is shown with the advice.
_WITH_DETAIL = {
    "NETWORK_EXCEPTION",
    "SASL_AUTHENTICATION_FAILED",
    "UNSUPPORTED_SASL_MECHANISM",
    "ILLEGAL_SASL_STATE",
    "TLS_SERVER_CERTIFICATE_REJECTED",
    "TLS_CLIENT_CERTIFICATE_REFUSED",
    "TLS_VERSION_REFUSED",
    "TLS_HANDSHAKE_FAILED",
    "TOKEN_ENDPOINT_UNREACHABLE",
    "TOKEN_ENDPOINT_REFUSED",
    "TOKEN_ENDPOINT_BAD_ANSWER",
    "TOKEN_EXPIRED",
    "KERBEROS_UNAVAILABLE",
    "KERBEROS_LOGIN_FAILED",
}


def _kp_errors() -> Any:
    import kafka.errors as kerrors

    return kerrors


#: Where kafka-python's names differ from Kafka's own (org.apache.kafka.common.protocol.Errors).
_CANONICAL_NAMES = {
    6: "NOT_LEADER_OR_FOLLOWER",
    10: "MESSAGE_TOO_LARGE",  # kafka-python says MESSAGE_SIZE_TOO_LARGE
    17: "INVALID_TOPIC_EXCEPTION",
    39: "INVALID_REPLICA_ASSIGNMENT",
}


def from_code(code: int, message: str | None = None) -> KafkaOperationError | None:
    """Translate a Kafka protocol error code (from a response) into an error, or None for 0."""
    if not code:
        return None
    cls = _kp_errors().for_code(code)
    name = _CANONICAL_NAMES.get(code) or getattr(cls, "message", None) or f"UNKNOWN_ERROR_{code}"
    text = message or getattr(cls, "description", None) or name
    return KafkaOperationError(int(code), str(name), str(text), bool(getattr(cls, "retriable", False)))


def network_error(address: str, detail: str = "") -> KafkaOperationError:
    """A connection failure naming the address that could not be reached."""
    msg = f"cannot connect to {address}" + (f": {detail}" if detail else "")
    return KafkaOperationError(NETWORK_EXCEPTION, "NETWORK_EXCEPTION", msg, True)


def no_such_topic(name: str) -> KafkaOperationError:
    """A topic a Metadata answer does not list."""
    return KafkaOperationError(3, "UNKNOWN_TOPIC_OR_PARTITION", f"topic '{name}' does not exist")


def topic_error(code: int, name: str) -> KafkaOperationError | None:
    """A Metadata answer's error code for one topic as the error naming that topic (None: no error)."""
    err = from_code(code)
    return None if err is None else err.with_message(f"{err.message} (topic '{name}')")


def timeout_error(what: str, timeout_s: float) -> KafkaOperationError:
    """A client-side timeout (the operation may still complete on the cluster)."""
    return KafkaOperationError(
        REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT", f"{what} did not answer within {timeout_s:g} s", True
    )


# librdkafka local errors (negative codes) mapped onto Kafka's vocabulary.
_LOCAL_NETWORK = {"_TRANSPORT", "_ALL_BROKERS_DOWN", "_RESOLVE", "_DESTROY", "_SSL", "_NODE_UPDATE"}
_LOCAL_TIMEOUT = {"_TIMED_OUT", "_TIMED_OUT_QUEUE", "_WAIT_COORD"}


def from_confluent(err: Any, context: str = "") -> KafkaOperationError:
    """Translate a confluent-kafka ``KafkaError`` (or ``KafkaException`` wrapping one)."""
    if err.__class__.__name__ == "KafkaException" and err.args:
        err = err.args[0]
    if not hasattr(err, "code"):
        return KafkaOperationError(UNKNOWN_SERVER_ERROR, "UNKNOWN_SERVER_ERROR", str(err))
    code = int(err.code())
    name = str(err.name())
    message = str(err.str()) if hasattr(err, "str") else str(err)
    if context:
        message = f"{message} ({context})" if message else context
    retriable = bool(err.retriable()) if hasattr(err, "retriable") else False
    if code < 0:
        if name in _LOCAL_NETWORK:
            return KafkaOperationError(NETWORK_EXCEPTION, "NETWORK_EXCEPTION", message, True)
        if name in _LOCAL_TIMEOUT:
            return KafkaOperationError(REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT", message, True)
        if name == "_AUTHENTICATION":
            return KafkaOperationError(58, "SASL_AUTHENTICATION_FAILED", message, False)
        if name in ("_UNKNOWN_TOPIC", "_UNKNOWN_PARTITION"):
            return KafkaOperationError(3, "UNKNOWN_TOPIC_OR_PARTITION", message, False)
        if name in ("_INVALID_ARG", "_INVALID_TYPE"):
            return KafkaOperationError(INVALID_REQUEST, "INVALID_REQUEST", message, False)
        if name == "_UNSUPPORTED_FEATURE":
            return KafkaOperationError(UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION", message, False)
        return KafkaOperationError(code, name.lstrip("_"), message, retriable)
    # librdkafka abbreviates some names (UNKNOWN_TOPIC_OR_PART): use Kafka's own name
    canonical = from_code(code, message)
    return KafkaOperationError(code, canonical.name if canonical else name, message, retriable)


def from_kafka_python(exc: BaseException, context: str = "") -> KafkaOperationError:
    """Translate a kafka-python exception."""
    kerrors = _kp_errors()
    text = str(exc.args[0]) if getattr(exc, "args", None) else ""
    if context:
        text = f"{text} ({context})" if text else context
    errno = getattr(exc, "errno", None)
    # kafka-python prefixes some messages with the class name (SaslAuthenticationFailedError: ...)
    text = text.removeprefix(f"{type(exc).__name__}: ")
    if isinstance(exc, kerrors.BrokerResponseError) and errno is not None:
        name = _CANONICAL_NAMES.get(errno) or getattr(exc, "message", None) or exc.__class__.__name__
        return KafkaOperationError(
            int(errno), str(name), text or str(exc.description or name), bool(exc.retriable)
        )
    if isinstance(exc, kerrors.KafkaTimeoutError):
        return KafkaOperationError(REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT", text or "timed out", True)
    if isinstance(exc, kerrors.IncompatibleBrokerVersion | kerrors.UnsupportedVersionError):
        return KafkaOperationError(UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION", text or str(exc), False)
    # the client dropped the node from its metadata between choosing it and sending (it stopped)
    if isinstance(exc, kerrors.UnknownBrokerIdError):
        return KafkaOperationError(8, "BROKER_NOT_AVAILABLE", text or "broker is not live")
    # Cancelled: the connection closed with the request in flight (a node stopped): the network's fault
    network = (
        kerrors.KafkaConnectionError,
        kerrors.NodeNotReadyError,
        kerrors.Cancelled,
        ConnectionError,
        OSError,
    )
    if isinstance(exc, network):
        return KafkaOperationError(NETWORK_EXCEPTION, "NETWORK_EXCEPTION", text or str(exc), True)
    return KafkaOperationError(
        UNKNOWN_SERVER_ERROR, "UNKNOWN_SERVER_ERROR", f"{exc.__class__.__name__}: {text or exc}", False
    )


def translate(exc: BaseException, context: str = "") -> KafkaOperationError:
    """Translate any exception raised by either client (or already translated)."""
    if isinstance(exc, KafkaOperationError):
        return exc
    module = type(exc).__module__ or ""
    if (
        module.startswith("confluent_kafka")
        or module == "cimpl"
        or type(exc).__name__ in ("KafkaException", "KafkaError")
        and hasattr(exc, "args")
        and exc.args
        and hasattr(exc.args[0], "code")
    ):
        return from_confluent(exc, context)
    if isinstance(exc, TimeoutError):
        return KafkaOperationError(REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT", context or "timed out", True)
    if isinstance(exc, ValueError | TypeError | KeyError):
        text = f"{exc} ({context})" if context else str(exc)
        return KafkaOperationError(INVALID_REQUEST, "INVALID_REQUEST", text, False)
    return from_kafka_python(exc, context)
