"""KRaft lifecycle messages kafka-python 3 has no classes for: UnregisterBroker (API 64), AddRaftVoter
(80) and RemoveRaftVoter (81, KIP-853), built from the JSON descriptions next to this file the way
``sandbox.protocol`` builds the KIP-848 messages."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage


class UnregisterBrokerRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """The broker id whose registration goes."""


class UnregisterBrokerResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """A top-level error and message."""


class AddRaftVoterRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """The new voter's id, directory id and listeners."""


class AddRaftVoterResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """A top-level error and message."""


class RemoveRaftVoterRequest(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """The voter's id and directory id."""


class RemoveRaftVoterResponse(ApiMessage, load_json=__package__):  # type: ignore[call-arg]
    """A top-level error and message."""


__all__ = [
    "AddRaftVoterRequest",
    "AddRaftVoterResponse",
    "RemoveRaftVoterRequest",
    "RemoveRaftVoterResponse",
    "UnregisterBrokerRequest",
    "UnregisterBrokerResponse",
]
