"""Share-group messages (KIP-932) kafka-python 3 has no classes for: ShareGroupHeartbeat (API 76, v1),
ShareGroupDescribe (77, v1), DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91) and
DeleteShareGroupOffsets (92), built from the JSON descriptions next to this file the way
``sandbox.protocol`` builds the KIP-848 messages (layouts as Kafka 4.1's message classes)."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage


class ShareGroupHeartbeatRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """Join (epoch 0), heartbeat, leave (epoch -1); the member id is the client's own."""


class ShareGroupHeartbeatResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """The member's epoch, heartbeat interval and assignment (topic ids and partitions)."""


class ShareGroupDescribeRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """Share groups by id."""


class ShareGroupDescribeResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """State, epochs, assignor and members with their assignments."""


class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """Groups and (or null: all) their topics' partitions."""


class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """Each share-partition's start offset and leader epoch."""


class AlterShareGroupOffsetsRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """New start offsets of an empty group's partitions."""


class AlterShareGroupOffsetsResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """A top-level error, then per-partition results."""


class DeleteShareGroupOffsetsRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """Whole topics whose share state goes."""


class DeleteShareGroupOffsetsResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """A top-level error, then per-topic results."""


__all__ = [
    "AlterShareGroupOffsetsRequest",
    "AlterShareGroupOffsetsResponse",
    "DeleteShareGroupOffsetsRequest",
    "DeleteShareGroupOffsetsResponse",
    "DescribeShareGroupOffsetsRequest",
    "DescribeShareGroupOffsetsResponse",
    "ShareGroupDescribeRequest",
    "ShareGroupDescribeResponse",
    "ShareGroupHeartbeatRequest",
    "ShareGroupHeartbeatResponse",
]
