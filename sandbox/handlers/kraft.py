"""The KRaft lifecycle as Kafka 4.1's controller answers it: UpdateFeatures (API 57, KIP-584/KIP-778's
upgrade types, ``FeatureControlManager``'s checks and words), UnregisterBroker (64,
``ReplicationControlManager.unregisterBroker``) and AddRaftVoter / RemoveRaftVoter (80 / 81, KIP-853:
``KafkaRaftClient``, ``AddVoterHandler``, ``RemoveVoterHandler``, ``VoterSet``).

The voter set is the controllers minus ``state.removed_voters``; a removed controller keeps fetching
as an observer. A broker unregistered while it is stopped leaves DescribeCluster until it starts
again (a live broker registers again at its next heartbeat, so unregistering it changes nothing that
lasts). What the sandbox leaves out: the API_VERSIONS round trip to a new voter (a controller that is
up and fetching is taken to support kraft.version 1; the listener it names is not checked, as a real
4.1 leader did not: the voter corrects it itself with UpdateRaftVoter), the wait for the new voter set to commit (a
removal that would leave fewer live voters than a majority of the new set answers REQUEST_TIMED_OUT
and changes nothing), and feature dependencies between features.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from kafka.protocol.admin import UpdateFeaturesRequest, UpdateFeaturesResponse

from sandbox.apis import RequestContext, api
from sandbox.handlers.meta import FEATURE_RANGES
from sandbox.protocol.kraft import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UnregisterBrokerRequest,
    UnregisterBrokerResponse,
)
from sandbox.state import ClusterState, Node

NONE, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, UNSUPPORTED_VERSION = 0, 6, 7, 35
NOT_CONTROLLER, INVALID_REQUEST, INVALID_UPDATE_VERSION, BROKER_ID_NOT_REGISTERED = 41, 42, 95, 102
INCONSISTENT_CLUSTER_ID, DUPLICATE_VOTER, VOTER_NOT_FOUND = 104, 126, 127
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
#: The lowest metadata.version a downgrade to keeps every record (4.1-IV0: nothing changed in 4.1-IV1).
LOSSLESS_MV_FLOOR = 26
ALL_FAILED = "The update failed for all features since the following feature had an error: "
CONTROLLER_LISTENER = "CONTROLLER"


def directory_id(node_id: int) -> uuid.UUID:
    """A node's metadata log directory id (stable per node id, as DescribeQuorum shows it)."""
    return uuid.uuid5(uuid.NAMESPACE_OID, f"sandbox-dir-{node_id}")


def _uuid_text(value: uuid.UUID | None) -> str:
    """Kafka's Uuid.toString (kafka-python decodes the zero uuid as None)."""
    raw = value.bytes if value is not None else bytes(16)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _key(node_id: int, dir_id: uuid.UUID) -> str:
    return f"ReplicaKey(id={node_id}, directoryId={_uuid_text(dir_id)})"


def voter_ids(st: ClusterState) -> list[int]:
    """The controllers in the voter set, by id."""
    return sorted(c for c in st.controllers if c not in st.removed_voters)


def registered(st: ClusterState, node: Node) -> bool:
    """Whether a broker has a registration: a live one always has (it registers again at once)."""
    if node.up:
        st.unregistered_brokers.discard(node.node_id)
        return True
    return node.node_id not in st.unregistered_brokers


def _not_active(ctx: RequestContext) -> bool:
    return ctx.node.is_controller and ctx.node.node_id != ctx.state.active_controller


# -- UpdateFeatures ------------------------------------------------------------------------------


def _feature_error(st: ClusterState, name: str, level: int, kind: int, controller: int) -> str | None:
    """FeatureControlManager.updateFeature's refusal of one update (None: it would be applied)."""

    def invalid(why: str) -> str:
        return f"Invalid update version {level} for feature {name}. {why}"

    if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return invalid("The controller does not support the given upgrade type.")
    current = st.features.get(name, 0)
    if level < 0:
        return invalid("A feature version cannot be less than 0.")
    supported = FEATURE_RANGES.get(name)
    if supported is None:
        return invalid(f"Local controller {controller} does not support this feature.")
    if not supported[0] <= level <= supported[1]:
        return invalid(f"Local controller {controller} only supports versions {supported[0]}-{supported[1]}")
    if level < current:
        if kind == UPGRADE:
            return invalid(
                "Can't downgrade the version of this feature without setting the upgrade type to "
                "either safe or unsafe downgrade."
            )
        if name == "kraft.version":
            return invalid("Can't downgrade the version of this feature.")
    elif level > current and kind != UPGRADE:
        return invalid("Can't downgrade to a newer version.")
    if name == "metadata.version" and level < current and level < LOSSLESS_MV_FLOOR:
        why = (
            "Unsafe metadata downgrade is not supported in this version."
            if kind == UNSAFE_DOWNGRADE
            else "Refusing to perform the requested downgrade because it might delete metadata information."
        )
        return f"Invalid metadata.version {level}. {why}"
    return None


@api(UpdateFeaturesRequest, 0, 2, controller=True)
def update_features(ctx: RequestContext, req: Any) -> Any:
    """All or nothing: the first refused update fails the request with one top-level error."""
    st, v = ctx.state, ctx.version
    controller = st.active_controller
    error = None
    changes: dict[str, int] = {}
    for u in req.feature_updates:
        kind = u.upgrade_type if v >= 1 else (SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE)
        why = _feature_error(st, u.feature, u.max_version_level, kind, controller)
        if why is not None:
            error = ALL_FAILED + why
            break
        changes[u.feature] = u.max_version_level
    validate_only = v >= 1 and req.validate_only
    if error is None and changes and not validate_only:
        for name, level in changes.items():
            if level == 0 and name != "metadata.version":
                st.features.pop(name, None)
            else:
                st.features[name] = level
        st.features_epoch += 1
        st.record()
    uf = UpdateFeaturesResponse
    results = (
        [
            uf.UpdatableFeatureResult(feature=u.feature, error_code=NONE, error_message=None)
            for u in req.feature_updates
        ]
        if v < 2
        else []
    )
    return uf(
        version=v,
        throttle_time_ms=0,
        error_code=NONE if error is None else INVALID_UPDATE_VERSION,
        error_message=error,
        results=results,
    )


# -- UnregisterBroker ----------------------------------------------------------------------------


@api(UnregisterBrokerRequest, 0, 0, controller=True)
def unregister_broker(ctx: RequestContext, req: Any) -> Any:
    """BROKER_ID_NOT_REGISTERED for a broker without a registration; a stopped broker's goes."""
    st = ctx.state

    def answer(code: int, message: str | None) -> Any:
        return UnregisterBrokerResponse(
            version=ctx.version, throttle_time_ms=0, error_code=code, error_message=message
        )

    if _not_active(ctx):
        return answer(NOT_CONTROLLER, None)
    node = st.brokers.get(req.broker_id)
    if node is None or not registered(st, node):
        return answer(BROKER_ID_NOT_REGISTERED, f"Broker ID {req.broker_id} is not currently registered")
    if not node.up:
        st.unregistered_brokers.add(node.node_id)
    st.record()
    return answer(NONE, None)


# -- AddRaftVoter / RemoveRaftVoter --------------------------------------------------------------


def _voter_set(st: ClusterState) -> str:
    return "[" + ", ".join(_key(i, directory_id(i)) for i in voter_ids(st)) + "]"


def _refusal(ctx: RequestContext, req: Any, verb: str) -> tuple[int, str | None] | None:
    """KafkaRaftClient's checks common to both requests, in its order."""
    st = ctx.state
    if _not_active(ctx):
        return NOT_LEADER_OR_FOLLOWER, None
    if req.cluster_id is not None and req.cluster_id != st.cluster_id:
        return INCONSISTENT_CLUSTER_ID, None
    if req.voter_id < 0 or req.voter_directory_id in (None, uuid.UUID(int=0)):
        return INVALID_REQUEST, f"{verb.title()} voter request didn't include a valid voter"
    return None


def _kraft_v0(st: ClusterState, verb: str) -> tuple[int, str] | None:
    level = st.features.get("kraft.version", 0)
    if level < 1:
        return (
            UNSUPPORTED_VERSION,
            f"Cluster doesn't support {verb} voter because the kraft.version feature is {level}",
        )
    return None


@api(AddRaftVoterRequest, 0, 0, controller=True)
def add_raft_voter(ctx: RequestContext, req: Any) -> Any:
    """Add a controller that fetches as an observer, caught up, with the same directory id."""
    st = ctx.state

    def answer(code: int, message: str | None) -> Any:
        return AddRaftVoterResponse(
            version=ctx.version, throttle_time_ms=0, error_code=code, error_message=message
        )

    refused = _refusal(ctx, req, "add")
    if refused is None and not any(li.name == CONTROLLER_LISTENER for li in req.listeners):
        shown = ", ".join(f"{li.name}://{li.host}:{li.port}" for li in req.listeners)
        refused = (
            INVALID_REQUEST,
            f"Add voter request didn't include the endpoint (Endpoints([{shown}])) for the default "
            f"listener ListenerName({CONTROLLER_LISTENER})",
        )
    refused = refused or _kraft_v0(st, "adding")
    key = _key(req.voter_id, req.voter_directory_id)
    if refused is None and req.voter_id in voter_ids(st):
        refused = (
            DUPLICATE_VOTER,
            f"The voter id for {key} is already part of the set of voters {_voter_set(st)}.",
        )
    if refused is None:
        # Kafka 4.1 asks API_VERSIONS of the voter by its id, and the voter corrects an endpoint that
        # differs from its own (UpdateRaftVoter): a real 4.1 leader took a wrong port. What it does
        # check is that the replica key fetches as an observer and is caught up.
        candidate = st.controllers.get(req.voter_id)
        if candidate is None or not candidate.up or directory_id(req.voter_id) != req.voter_directory_id:
            refused = REQUEST_TIMED_OUT, f"Aborted add voter operation for {key} since it is lagging behind"
    if refused is not None:
        return answer(*refused)
    st.removed_voters.discard(req.voter_id)
    st.record()
    return answer(NONE, None)


@api(RemoveRaftVoterRequest, 0, 0, controller=True)
def remove_raft_voter(ctx: RequestContext, req: Any) -> Any:
    """Remove a voter (id and directory id must match; never the last one); the leader resigns."""
    st = ctx.state

    def answer(code: int, message: str | None) -> Any:
        return RemoveRaftVoterResponse(
            version=ctx.version, throttle_time_ms=0, error_code=code, error_message=message
        )

    refused = _refusal(ctx, req, "remove") or _kraft_v0(st, "removing")
    voters = voter_ids(st)
    key = _key(req.voter_id, req.voter_directory_id)
    if refused is None and (
        req.voter_id not in voters or directory_id(req.voter_id) != req.voter_directory_id or len(voters) <= 1
    ):
        refused = VOTER_NOT_FOUND, f"Cannot remove voter {key} from the set of voters {_voter_set(st)}"
    if refused is None:
        left = [c for c in voters if c != req.voter_id]
        if sum(1 for c in left if st.controllers[c].up) <= len(left) // 2:
            refused = REQUEST_TIMED_OUT, None  # the new voter set cannot commit the change
    if refused is not None:
        return answer(*refused)
    st.removed_voters.add(req.voter_id)
    if st.active_controller == req.voter_id:  # not in the committed voter set: resign
        live = [c for c in voter_ids(st) if st.controllers[c].up]
        st.active_controller = live[0] if live else -1
        st.quorum_epoch += 1
    st.record()
    return answer(NONE, None)
