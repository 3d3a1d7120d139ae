"""Setting (create or rotate) and deleting a user's SCRAM credential (AlterUserScramCredentials).

Credentials are admin business: every action asks ``cluster.admin`` of the actor, then change
control (``scram.alter``), checks the input as Kafka would (``core``), reads what the user has now
(so the audit says "create" or "rotate"), is audited "requested" before Kafka is called and with
its outcome after. The console salts and hashes the password itself (``console.kafka.scram``, as
Kafka's AdminClient does); the password is in no audit event, log line, answer or error text.

Kafka applies a change on the controller; brokers see it from the metadata log a moment later, so
a read right after may not show it yet (the outcome is Kafka's answer).
"""

from __future__ import annotations

from dataclasses import dataclass

from console import access
from console.audit import outcomes
from console.audit.refusals import refused_as
from console.changes import gate
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.kafka.scram import ScramUser
from console.models import Cluster
from console.scram import audit_names, core, reads

GATE = "scram.alter"  # the policy kind (declared in held.py)


@dataclass(frozen=True)
class ScramResult:
    """What one action did: ``op`` is create, rotate or delete; ``error`` None when Kafka accepted it."""

    user: str
    mechanism: str
    op: str
    iterations: int | None
    error: KafkaOperationError | None
    message: str
    event_id: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_json(self) -> dict:
        return {
            "user": self.user,
            "mechanism": self.mechanism,
            "op": self.op,
            "iterations": self.iterations,
            "ok": self.ok,
            "message": self.message,
            "error": None if self.error is None else self.error.as_json(),
        }


def _targets(kwargs) -> list[str]:
    user = kwargs.get("user")
    return [core.target(user)] if isinstance(user, str) and user else []


def _shown(user: ScramUser | None) -> dict[str, int]:
    """A user's credentials as the audit keeps them: mechanism -> iterations."""
    return {c.mechanism: c.iterations for c in user.credentials} if user is not None else {}


def _before(cluster: Cluster, user: str) -> dict[str, int] | None:
    """The user's credentials now; None when Kafka could not be read."""
    try:
        return _shown(reads.current(cluster, user))
    except KafkaOperationError:
        return None


@refused_as(audit_names.SCRAM_SET, ChangeInvalid, targets=_targets)
def set_credential(
    *,
    actor,
    cluster: Cluster,
    user: str,
    mechanism: str,
    iterations: int,
    password: str,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> ScramResult:
    """Create or rotate ``user``'s credential for ``mechanism``. Raises ChangeInvalid (bad input),
    PermissionDenied, ApprovalRequired before anything reaches Kafka."""
    access.require(actor, cluster, access.ADMINISTER)
    change = core.check_set(user, mechanism, iterations, password)
    gate.check(actor, cluster, GATE)
    before = _before(cluster, change.user)
    op = "rotate" if before and change.mechanism in before else ("create" if before is not None else "set")
    params = {
        "user": change.user,
        "mechanism": change.mechanism,
        "iterations": change.iterations,
        "op": op,
        "password": core.PASSWORD_SHOWN,
    }
    req = outcomes.requested(
        actor=actor,
        action=audit_names.SCRAM_SET,
        cluster=cluster,
        targets=[change.target],
        params=params,
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    error = None
    try:
        gateway_for(cluster).upsert_scram_credential(
            change.user, change.mechanism, change.password, change.iterations
        )
    except KafkaOperationError as exc:
        error = exc
    after = {**before, change.mechanism: change.iterations} if before is not None else None  # None: unknown
    event_id = outcomes.settle_change(
        req, target=change.target, params=params, before=before, after=after, error=error
    )
    verb = {"create": "created", "rotate": "rotated"}.get(op, "set")
    message = (
        f"{change.mechanism} credential of {change.user} {verb} ({change.iterations} iterations)"
        if error is None
        else f"Kafka refused it: {error.name}: {error.operator_text}"
    )
    return ScramResult(change.user, change.mechanism, op, change.iterations, error, message, event_id)


@refused_as(audit_names.SCRAM_DELETE, ChangeInvalid, targets=_targets)
def delete_credential(
    *,
    actor,
    cluster: Cluster,
    user: str,
    mechanism: str,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> ScramResult:
    """Delete ``user``'s credential for ``mechanism`` (Kafka: RESOURCE_NOT_FOUND when there is none)."""
    access.require(actor, cluster, access.ADMINISTER)
    name, mech = core.check_delete(user, mechanism)
    gate.check(actor, cluster, GATE)
    change_target = core.target(name)
    before = _before(cluster, name)
    params = {"user": name, "mechanism": mech, "op": "delete"}
    req = outcomes.requested(
        actor=actor,
        action=audit_names.SCRAM_DELETE,
        cluster=cluster,
        targets=[change_target],
        params=params,
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    error = None
    try:
        gateway_for(cluster).delete_scram_credential(name, mech)
    except KafkaOperationError as exc:
        error = exc
    after = {m: i for m, i in before.items() if m != mech} if before is not None else None  # None: unknown
    event_id = outcomes.settle_change(
        req, target=change_target, params=params, before=before, after=after, error=error
    )
    message = (
        f"{mech} credential of {name} deleted"
        if error is None
        else f"Kafka refused it: {error.name}: {error.operator_text}"
    )
    return ScramResult(name, mech, "delete", None, error, message, event_id)


def _reread(cluster: Cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the user's credentials now (mechanism -> iterations, the shape of the
    outcome's "after"): a set shows its mechanism with its iterations, a delete shows it gone."""
    user = params["user"]
    return {core.target(user): _shown(reads.current(cluster, user))}


outcomes.register_reader(audit_names.SCRAM_SET, _reread)
outcomes.register_reader(audit_names.SCRAM_DELETE, _reread)
