"""Adding and removing a controller voter (KIP-853), as ``kafka-metadata-quorum.sh add-controller`` /
``remove-controller`` do, on a dynamic quorum (kraft.version 1).

The console refuses before Kafka is asked when the change is unsafe (``core.removal_problems``,
``core.addition_problems``): a removal that would leave fewer caught-up voters than a majority of
the new set, the last voter, the active controller unless asked on purpose; an addition of a node
that is a broker, not a caught-up observer, or named with another directory id. Each change needs
``cluster.admin``, passes the ``kraft.voter`` gate, is audited requested/outcome with the voter set
before and after, and is confirmed by reading DescribeQuorum again.
"""

from __future__ import annotations

from console import access
from console.audit import outcomes
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.quorum import audit_names, core
from console.quorum.actions import lag_limits

GATE = "kraft.voter"  # the policy kind (declared in held.py)
#: How long a voter change may take to show in DescribeQuorum (a removed leader's successor is elected).
CONFIRM_S = 15.0


def target(node: int) -> str:
    return f"controller:{node}"


def members(cluster):
    """(QuorumMembers, voters, observers) with each member's caught-up verdict, from DescribeQuorum."""
    info = gateway_for(cluster).quorum_members()
    lag_records, caught_up_ms = lag_limits()
    stamps = [v.last_caught_up_ms for v in info.voters if v.last_caught_up_ms is not None]
    freshest = max(stamps) if stamps else None

    def member(m, is_leader: bool) -> core.Member:
        if is_leader:
            return core.Member(m.id, m.directory_id, True)
        ok, why = core.caught_up(
            max(0, info.high_watermark - m.log_end_offset),
            m.last_caught_up_ms,
            freshest,
            lag_records,
            caught_up_ms,
        )
        return core.Member(m.id, m.directory_id, ok, why)

    voters = [member(v, v.id == info.leader_id) for v in sorted(info.voters, key=lambda m: m.id)]
    observers = [member(o, False) for o in sorted(info.observers, key=lambda m: m.id)]
    return info, voters, observers


def _voter_set(info) -> list[dict]:
    return [{"id": v.id, "directory_id": v.directory_id} for v in sorted(info.voters, key=lambda v: v.id)]


def _change(kind, action, words, info, node, params, call, done, *, actor, cluster, who) -> core.KraftResult:
    """One voter change: audit "requested", ask Kafka, confirm with DescribeQuorum, audit the outcome.

    A request Kafka timed out may still have been committed: when DescribeQuorum then shows the
    change, it is believed. Any other refusal is not confirmed (nothing to wait for)."""
    before = _voter_set(info)
    req = outcomes.requested(
        actor=actor, action=action, cluster=cluster, targets=[target(node)], params=params, **who
    )
    error = None
    try:
        call()
    except KafkaOperationError as exc:
        error = exc
    after, confirmed = None, False
    if error is None or error.name == "REQUEST_TIMED_OUT":
        after, confirmed = _confirm(cluster, done)
        if error is not None and confirmed:
            error = None  # Kafka committed it after answering: believe DescribeQuorum
    event_id = outcomes.settle_change(
        req, target=target(node), params=params, before=before, after=after, error=error, key="voters"
    )
    done_words, doing_words = words
    message = (
        f"controller {node} {done_words} the voters"
        + ("" if confirmed else " (DescribeQuorum does not show it yet)")
        if error is None
        else f"Kafka refused {doing_words} voter {node}: {error.name}: {error.message}"
    )
    return core.KraftResult(kind, target(node), False, error, message, before, after, confirmed, event_id)


def _confirm(cluster, done):
    info, confirmed = core.until(lambda: gateway_for(cluster).quorum_members(), done, CONFIRM_S, 0.5)
    return (_voter_set(info) if info is not None else None), confirmed


def _node_target(kwargs) -> list[str]:
    node = kwargs.get("node_id")
    return [target(node)] if isinstance(node, int) else []


def check_remove(cluster, node: int, directory: str | None, allow_leader: bool):
    """The removal's refusals (KraftInvalid, KraftRefused); the quorum read and the voter's directory id."""
    info, voters, _ = members(cluster)
    invalid, unsafe = core.removal_problems(
        voters, info.leader_id, node, directory, allow_leader=allow_leader
    )
    if invalid:
        raise core.KraftInvalid(invalid)
    if unsafe:
        raise core.KraftRefused(unsafe)
    return info, info.voter(node).directory_id


@refused_as(audit_names.VOTER_REMOVE, core.KraftInvalid, core.KraftRefused, targets=_node_target)
def remove_voter(
    *,
    actor,
    cluster,
    node_id,
    directory_id: str = "",
    allow_leader: bool = False,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> core.KraftResult:
    """Remove ``node_id`` from the voter set (RemoveRaftVoter); it fetches on as an observer."""
    access.require(actor, cluster, access.ADMINISTER)
    node = core.node_id(node_id, "the voter's node id")
    directory = core.directory_id(directory_id) if directory_id else None
    gate.check(actor, cluster, GATE)
    info, directory = check_remove(cluster, node, directory, allow_leader)
    params = {
        "node_id": node,
        "directory_id": directory,
        "leader": info.leader_id,
        "allow_leader": allow_leader,
    }
    return _change(
        "voter.remove", audit_names.VOTER_REMOVE, ("removed from", "removing"), info, node, params,
        lambda: gateway_for(cluster).remove_raft_voter(node, directory),
        lambda now: now.voter(node) is None and now.leader_id >= 0,
        actor=actor, cluster=cluster,
        who={"source_ip": source_ip, "on_behalf_of": on_behalf_of, "request_id": request_id},
    )  # fmt: skip


def _registered_elsewhere(cluster, gw, node: int) -> tuple[set[int], tuple[str, str, int] | None]:
    """Broker ids (broker connections) and, through the controllers, the node's registered endpoint."""
    if cluster.controller_mode:
        info = gw.describe_cluster()
        found = next((c for c in info.brokers if c.id == node), None)
        return set(), ((core.DEFAULT_LISTENER, found.host, found.port) if found is not None else None)
    live, fenced = gw.broker_registrations()
    return set(live) | set(fenced), None


def check_add(cluster, node: int, directory: str | None, endpoint: str):
    """The addition's refusals; (quorum read, directory id, listener endpoint)."""
    gw = gateway_for(cluster)
    info, voters, observers = members(cluster)
    brokers, registered = _registered_elsewhere(cluster, gw, node)
    observer = info.observer(node)
    directory = directory or (observer.directory_id if observer is not None else "")
    problems = core.addition_problems(voters, observers, brokers, node, directory or "?")
    if problems:
        raise core.KraftRefused(problems)
    if endpoint:
        where = core.endpoint(endpoint)
        if registered is not None and where[1:] != registered[1:]:
            # Kafka 4.1 does not check it: the voter set would name a wrong address until the voter corrects it
            raise core.KraftRefused(
                [
                    f"controller {node} is registered at {registered[1]}:{registered[2]}, not "
                    f"{where[1]}:{where[2]}: name its own endpoint"
                ]
            )
    elif registered is not None:
        where = registered
    else:
        raise core.KraftInvalid(
            [f"give controller {node}'s endpoint (CONTROLLER://host:port): the brokers do not know it"]
        )
    return info, directory, where


@refused_as(audit_names.VOTER_ADD, core.KraftInvalid, core.KraftRefused, targets=_node_target)
def add_voter(
    *,
    actor,
    cluster,
    node_id,
    directory_id: str = "",
    endpoint: str = "",
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> core.KraftResult:
    """Add controller ``node_id`` (a caught-up observer) to the voter set (AddRaftVoter)."""
    access.require(actor, cluster, access.ADMINISTER)
    node = core.node_id(node_id, "the controller's node id")
    directory = core.directory_id(directory_id) if directory_id else None
    if endpoint:
        core.endpoint(endpoint)
    gate.check(actor, cluster, GATE)
    info, directory, where = check_add(cluster, node, directory, endpoint)
    params = {"node_id": node, "directory_id": directory, "endpoint": core.endpoint_text(*where)}
    return _change(
        "voter.add", audit_names.VOTER_ADD, ("added to", "adding"), info, node, params,
        lambda: gateway_for(cluster).add_raft_voter(node, directory, (where,)),
        lambda now: now.voter(node) is not None,
        actor=actor, cluster=cluster,
        who={"source_ip": source_ip, "on_behalf_of": on_behalf_of, "request_id": request_id},
    )  # fmt: skip


def _reread(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the voter set now (an added voter in it, a removed one not)."""
    return {"voters": _voter_set(gateway_for(cluster).quorum_members())}


outcomes.register_reader(audit_names.VOTER_ADD, _reread)
outcomes.register_reader(audit_names.VOTER_REMOVE, _reread)
