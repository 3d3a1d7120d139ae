"""Kafka messages kafka-python 3 has no classes for, defined for the sandbox.

Each class is built by kafka-python's own schema machinery (``ApiMessage`` reads the JSON
message description next to this file, the same way kafka-python describes its messages), so
encoding, decoding, flexible versions and tagged fields behave exactly like kafka-python's
built-in messages. The JSON files describe the wire layout of Kafka 4.1's messages (checked
field by field against the schemas of the 4.1 broker's message classes).
"""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """KIP-848 heartbeat: join (epoch 0), heartbeat, leave (epoch -1 / -2)."""


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """Member id and epoch, heartbeat interval, the assignment when it changed."""


class ConsumerGroupDescribeRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """Describe consumer-protocol groups."""


class ConsumerGroupDescribeResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """Groups with epochs, assignor and members (assignment and target assignment)."""


__all__ = [
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
]
