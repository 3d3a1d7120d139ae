"""KRaft lifecycle requests: UpdateFeatures (API 57), UnregisterBroker (64), AddRaftVoter (80) and
RemoveRaftVoter (81, KIP-853), and the quorum's members with their directory ids.

kafka-python 3.0 has UpdateFeatures and DescribeQuorum but no classes for APIs 64, 80 and 81; their
version 0 is described here as Kafka 4.1's message definitions lay it out (``*Request.json`` /
``*Response.json``) and built by kafka-python's own schema machinery. Every request goes to the active
controller: through the controllers (KIP-919) directly, through brokers by forwarding (Kafka's brokers
accept all four and forward them, as ``kafka-metadata-quorum.sh --bootstrap-server`` relies on).

A directory id is shown as Kafka's tools show it: the UUID's 16 bytes in URL-safe base64 without
padding (``BZLiKWf0RmWKOadrPBi8Og``).
"""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import UpdateFeaturesRequest

from .base import GatewayBase
from .cluster import quorum_partition, replica_stamps
from .errors import KafkaOperationError, from_code
from .inline_messages import field, message_pair, nullable

__all__ = [
    "UPGRADE_TYPES",
    "KraftMixin",
    "QuorumMember",
    "QuorumMembers",
    "directory_id_text",
    "parse_directory_id",
]

#: UpdateFeatures' upgrade types (FeatureUpdate.UpgradeType), by the console's names.
UPGRADE_TYPES = {"upgrade": 1, "safe-downgrade": 2, "unsafe-downgrade": 3}
INVALID_REQUEST = 42
#: How long Kafka may take to add a voter (AddRaftVoter's TimeoutMs; the tool's default is 30 s).
ADD_VOTER_TIMEOUT_MS = 30_000


def directory_id_text(value: uuid.UUID | None) -> str:
    """Kafka's text form of a directory id (``Uuid.toString``: URL-safe base64, no padding)."""
    if value is None:
        return ""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def parse_directory_id(text: str) -> uuid.UUID:
    """A directory id from Kafka's text form (or a dashed UUID); ValueError when it is neither."""
    text = (text or "").strip()
    if len(text) == 36 and text.count("-") == 4:
        return uuid.UUID(text)
    if len(text) != 22:
        raise ValueError(
            f"{text!r} is not a directory id (22 characters, as kafka-metadata-quorum.sh shows it)"
        )
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError):
        raise ValueError(f"{text!r} is not a directory id") from None
    if len(raw) != 16:
        raise ValueError(f"{text!r} is not a directory id")
    return uuid.UUID(bytes=raw)


@dataclass(frozen=True)
class QuorumMember:
    """A voter or observer of the metadata log, with its replica key (id and directory id)."""

    id: int
    directory_id: str  # Kafka's text form ("" when Kafka did not say)
    log_end_offset: int
    last_fetch_ms: int | None
    last_caught_up_ms: int | None


@dataclass(frozen=True)
class QuorumMembers:
    """DescribeQuorum with what a voter change needs: replica keys and each controller's listeners."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[QuorumMember, ...]
    observers: tuple[QuorumMember, ...]
    #: node id -> ((listener name, host, port), ...) from DescribeQuorum v2's Nodes
    listeners: tuple[tuple[int, tuple[tuple[str, str, int], ...]], ...] = ()

    def voter(self, node_id: int) -> QuorumMember | None:
        return next((v for v in self.voters if v.id == node_id), None)

    def observer(self, node_id: int) -> QuorumMember | None:
        return next((o for o in self.observers if o.id == node_id), None)

    def listeners_of(self, node_id: int) -> tuple[tuple[str, str, int], ...]:
        return dict(self.listeners).get(node_id, ())


def _schema_classes() -> dict[str, Any]:
    """Version 0 of UnregisterBroker, AddRaftVoter and RemoveRaftVoter (kafka-python 3.0 lacks them)."""
    f, null = field, nullable()
    answer = [f("ThrottleTimeMs", "int32"), f("ErrorCode", "int16"), f("ErrorMessage", "string", **null)]
    listener = [f("Name", "string"), f("Host", "string"), f("Port", "uint16")]
    requests = {
        "UnregisterBroker": (64, [f("BrokerId", "int32")]),
        "AddRaftVoter": (80, [
            f("ClusterId", "string", **null), f("TimeoutMs", "int32"), f("VoterId", "int32"),
            f("VoterDirectoryId", "uuid"), f("Listeners", "[]Listener", fields=listener),
        ]),
        "RemoveRaftVoter": (81, [
            f("ClusterId", "string", **null), f("VoterId", "int32"), f("VoterDirectoryId", "uuid"),
        ]),
    }  # fmt: skip
    out: dict[str, Any] = {}
    for name, (key, fields) in requests.items():
        out[f"{name}Request"], out[f"{name}Response"] = message_pair(key, 0, name, fields, answer)
    return out


_CLASSES: dict[str, Any] = {}


def message_class(name: str) -> Any:
    """``UnregisterBrokerRequest``, ``AddRaftVoterRequest``, ... (built once per process)."""
    if not _CLASSES:
        _CLASSES.update(_schema_classes())
    return _CLASSES[name]


def _raise_top(response: Any) -> None:
    err = from_code(response.error_code, getattr(response, "error_message", None))
    if err is not None:
        raise err


class KraftMixin(GatewayBase):
    """Feature levels, broker registrations and the controller quorum's voter set."""

    def _kraft_send(self, request: Any) -> Any:
        return self._kp.send_to_controller(request)

    def quorum_members(self) -> QuorumMembers:
        """DescribeQuorum with replica keys and listeners (the quorum page's read has neither)."""
        response, part = quorum_partition(self._kp)

        def member(r: Any) -> QuorumMember:
            directory = directory_id_text(getattr(r, "replica_directory_id", None))
            return QuorumMember(r.replica_id, directory, r.log_end_offset, *replica_stamps(r))

        listeners = tuple(
            (n.node_id, tuple((li.name, li.host, int(li.port)) for li in n.listeners))
            for n in (getattr(response, "nodes", None) or ())
        )
        return QuorumMembers(
            part.leader_id,
            part.leader_epoch,
            part.high_watermark,
            tuple(member(r) for r in part.current_voters),
            tuple(member(r) for r in part.observers),
            listeners,
        )

    def broker_registrations(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(live, fenced) broker ids as the controller registers them (DescribeCluster v2 with the
        fenced brokers, KIP-1073); brokers only."""
        self._require_brokers("reading the brokers' registrations")
        info, fenced = self._kp.describe_brokers()
        return tuple(b.id for b in info.brokers), tuple(b.id for b in fenced)

    def replicas_hosted(self, broker_id: int) -> tuple[str, ...]:
        """``topic-partition`` of every replica placed on ``broker_id`` (a fresh Metadata read)."""
        from .deferred import hosted_by

        meta = self.list_topics_metadata()
        return tuple(f"{t.name}-{p.id}" for t in meta.topics for p in hosted_by(t, int(broker_id)))

    def update_features(
        self, updates: dict[str, int], upgrade_type: str, *, validate_only: bool
    ) -> dict[str, KafkaOperationError | None]:
        """Finalize feature levels (``upgrade_type``: upgrade, safe-downgrade, unsafe-downgrade).

        Kafka applies all or none. Version 2 answers one top-level error naming the feature that
        failed ("The update failed for all features since the following feature had an error: ...");
        that error is given to every feature of the request (the one it names carries it first)."""
        kind = UPGRADE_TYPES.get(upgrade_type)
        if kind is None:
            raise KafkaOperationError(
                INVALID_REQUEST, "INVALID_REQUEST", f"unknown upgrade type {upgrade_type!r}"
            )
        K = UpdateFeaturesRequest.FeatureUpdateKey
        request = UpdateFeaturesRequest(
            timeout_ms=int(self.conn.request_timeout_s * 1000),
            feature_updates=[
                K(feature=name, max_version_level=int(level), allow_downgrade=kind != 1, upgrade_type=kind)
                for name, level in updates.items()
            ],
            validate_only=validate_only,
        )
        response = self._kraft_send(request)
        top = from_code(response.error_code, getattr(response, "error_message", None))
        results: dict[str, KafkaOperationError | None] = dict.fromkeys(updates)
        for r in getattr(response, "results", None) or ():
            if r.feature in results:
                results[r.feature] = from_code(r.error_code, r.error_message)
        if top is not None:
            results = {name: results[name] or top for name in results}
        return results

    def unregister_broker(self, broker_id: int) -> None:
        """Remove a broker's registration (BROKER_ID_NOT_REGISTERED when there is none)."""
        request = message_class("UnregisterBrokerRequest")(broker_id=int(broker_id))
        _raise_top(self._kraft_send(request))

    def add_raft_voter(
        self,
        voter_id: int,
        directory_id: str,
        listeners: tuple[tuple[str, str, int], ...],
        *,
        cluster_id: str | None = None,
    ) -> None:
        """Add a controller to the voter set (it must be a caught-up observer); raises KafkaOperationError."""
        Req = message_class("AddRaftVoterRequest")
        request = Req(
            cluster_id=cluster_id,
            timeout_ms=ADD_VOTER_TIMEOUT_MS,
            voter_id=int(voter_id),
            voter_directory_id=parse_directory_id(directory_id),
            listeners=[Req.Listener(name=n, host=h, port=int(p)) for n, h, p in listeners],
        )
        _raise_top(self._kraft_send(request))

    def remove_raft_voter(self, voter_id: int, directory_id: str, *, cluster_id: str | None = None) -> None:
        """Remove a controller from the voter set; raises KafkaOperationError (VOTER_NOT_FOUND...)."""
        request = message_class("RemoveRaftVoterRequest")(
            cluster_id=cluster_id,
            voter_id=int(voter_id),
            voter_directory_id=parse_directory_id(directory_id),
        )
        _raise_top(self._kraft_send(request))
