"""The librdkafka calls of the gateway, over kafka-python, for connections librdkafka cannot make.

The PyPI confluent-kafka wheel is built without GSSAPI ("No provider for SASL mechanism GSSAPI"),
so a Kerberos connection sends DeleteTopics through kafka-python (with the same Kerberos login)
instead of the AdminClient. (The whole-cluster Metadata goes through kafka-python on every
connection: ``metadata_read.py``.)
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import DeleteTopicsRequest

from .errors import KafkaOperationError, from_code
from .types import OK, Ok

__all__ = ["delete_topics"]


def delete_topics(kp: Any, names: list[str], timeout_s: float) -> dict[str, Ok | KafkaOperationError]:
    """DeleteTopics in one request (sent to the controller through any broker); per-topic result."""
    request = DeleteTopicsRequest(
        topics=[DeleteTopicsRequest.DeleteTopicState(name=n) for n in names],
        topic_names=list(names),
        timeout_ms=int(timeout_s * 1000),
    )
    try:
        response = kp.send(request)
    except KafkaOperationError as err:
        return dict.fromkeys(names, err)
    out: dict[str, Ok | KafkaOperationError] = {}
    for r in response.responses:
        out[r.name] = from_code(r.error_code, getattr(r, "error_message", None)) or OK
    for name in names:
        out.setdefault(name, KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", "no answer for this topic"))
    return out
