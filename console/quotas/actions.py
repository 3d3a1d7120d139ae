"""Changing client quotas: set or remove keys of one entity (AlterClientQuotas, KIP-546).

Kafka authorises quota changes as ALTER_CONFIGS on the cluster (``kafka-configs.sh --alter
--entity-type users|clients|ips``); the console asks ``config.manage`` of the actor, then change
control (``quota.alter``), checks the keys and values as Kafka does (``core.check_changes``), reads
the entity's quotas for the diff, asks Kafka's validate-only, and only then applies - audited
"requested" before and the outcome after, with the quotas before and after. A dry run
(``validate_only``) stops after Kafka's answer and is audited as ``quota.alter.validate``.

Brokers apply a change from the metadata log a moment after the controller accepted it: the outcome
re-reads (``CONFIG_CONFIRM_TIMEOUT_S`` at most) until the entity shows it. A cluster registered with
bootstrap controllers only can change quotas but not read them: the diff's "before" is unknown there
and the outcome is Kafka's answer, unconfirmed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings

from console import access
from console.audit import outcomes
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.kafka.quotas import QuotaAlteration
from console.models import Cluster
from console.quotas import audit_names, core, reads
from console.quotas.core import Entity, QuotaDiff, QuotaInvalid

GATE = "quota.alter"  # the policy kind (declared in held.py)


@dataclass(frozen=True)
class AlterResult:
    """What an alteration did: the diff, Kafka's answer (``error`` None: accepted), whether it was a
    dry run, and ``confirmed``: a re-read shows it (False: Kafka accepted it, not yet seen)."""

    entity: Entity
    diffs: tuple[QuotaDiff, ...]
    validate_only: bool
    error: KafkaOperationError | None
    before_known: bool
    confirmed: bool = True
    message: str = ""
    event_id: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def error_text(self) -> str:
        """Kafka's refusal in its own words (its message names the key and value), with what to do."""
        if self.error is None:
            return ""
        own = self.error.message
        advice = self.error.operator_text
        return f"{own} ({advice})" if own and own not in advice else advice

    def as_json(self) -> dict:
        return {
            "entity": self.entity.name,
            "ok": self.ok,
            "validate_only": self.validate_only,
            "confirmed": self.confirmed,
            "message": self.message,
            "error": None if self.error is None else {"name": self.error.name, "message": self.error_text},
            "diff": [
                {"key": d.key, "op": d.op, "before": d.before, "after": d.after, "changed": d.changed}
                for d in self.diffs
            ],
            "before_known": self.before_known,
        }


def before_of(cluster: Cluster, entity: Entity) -> dict[str, float] | None:
    """The entity's quotas now; None when the connection cannot read them (controllers only)."""
    if cluster.controller_mode:
        return None
    return reads.current(cluster, entity)


def _targets(kwargs) -> list[str]:
    entity = kwargs.get("entity")
    return [entity.target] if isinstance(entity, Entity) else []


def _ask(cluster: Cluster, entity: Entity, changes: Mapping[str, float | None], validate_only: bool):
    try:
        answer = gateway_for(cluster).alter_client_quotas(
            [QuotaAlteration(entity.parts, dict(changes))], validate_only=validate_only
        )
    except KafkaOperationError as exc:
        return exc
    return answer.get(entity.parts)


def dry_run(
    cluster: Cluster, entity: Entity, changes: Mapping[str, float | None]
) -> KafkaOperationError | None:
    """Kafka's validate-only answer (None: it would accept the change)."""
    return _ask(cluster, entity, changes, True)


def preview(*, actor, cluster: Cluster, entity: Entity, changes: Mapping[str, object]) -> AlterResult:
    """The diff of a change, nothing asked of Kafka but the entity's quotas (not audited)."""
    access.require(actor, cluster, access.MANAGE_CONFIGS)
    clean = core.check_changes(entity, changes)
    before = before_of(cluster, entity)
    return AlterResult(entity, tuple(core.diff(before, clean)), True, None, before is not None)


def _confirm(cluster: Cluster, entity: Entity, wanted: dict[str, float]) -> tuple[dict | None, bool]:
    """Re-read until the entity shows ``wanted`` (at most CONFIG_CONFIRM_TIMEOUT_S)."""
    if cluster.controller_mode:
        return None, False
    deadline = time.monotonic() + settings.CONFIG_CONFIRM_TIMEOUT_S
    while True:
        try:
            now = reads.current(cluster, entity)
        except KafkaOperationError:
            now = None
        if now == wanted:
            return now, True
        left = deadline - time.monotonic()
        if left <= 0:
            return now, False
        time.sleep(min(settings.CONFIG_CONFIRM_INTERVAL_S, left))


@refused_as(audit_names.QUOTA_ALTER, QuotaInvalid, targets=_targets)
def alter_quotas(
    *,
    actor,
    cluster: Cluster,
    entity: Entity,
    changes: Mapping[str, object],
    validate_only: bool = False,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> AlterResult:
    """Set (a value) or remove (None) quota keys of ``entity``. Raises QuotaInvalid before anything
    reaches Kafka, KafkaOperationError when the current quotas cannot be read."""
    access.require(actor, cluster, access.MANAGE_CONFIGS)
    clean = core.check_changes(entity, changes)
    if not validate_only:
        gate.check(actor, cluster, GATE)
    before = before_of(cluster, entity)
    diffs = tuple(core.diff(before, clean))
    params = {
        "entity": entity.name,
        "validate_only": validate_only,
        "set": {k: v for k, v in clean.items() if v is not None},
        "remove": sorted(k for k, v in clean.items() if v is None),
    }
    error = _ask(cluster, entity, clean, True)
    req = None
    confirmed, message, after = True, "", None
    if error is None and not validate_only:
        req = outcomes.requested(
            actor=actor,
            action=audit_names.QUOTA_ALTER,
            cluster=cluster,
            targets=[entity.target],
            params=params,
            source_ip=source_ip,
            on_behalf_of=on_behalf_of,
            request_id=request_id,
        )
        error = _ask(cluster, entity, clean, False)
        if error is None or error.retriable:
            wanted = core.applied(before or {}, clean)
            after, confirmed = _confirm(cluster, entity, wanted) if before is not None else (None, False)
            if error is not None and confirmed:
                error, message = None, "Kafka answered late; re-reading shows the change applied."
            elif error is not None:
                message = "Kafka did not answer in time and re-reading does not show the change (it may still apply)."
            elif before is None:
                message = "Kafka accepted the change (the controllers cannot describe quotas to confirm it)."
            elif not confirmed:
                message = (
                    f"Kafka accepted the change; the brokers did not show it within "
                    f"{settings.CONFIG_CONFIRM_TIMEOUT_S:g} s (they apply it from the metadata log)."
                )
    outcome = outcomes.change_outcome(error, dry_run=validate_only)
    if error is None and not validate_only:
        outcome["confirmed"] = confirmed
        if message:
            outcome["message"] = message
    event_id = outcomes.settle_or_record(
        req,
        actor=actor,
        action=audit_names.QUOTA_ALTER_VALIDATE if validate_only else audit_names.QUOTA_ALTER,
        cluster=cluster,
        targets=[entity.target],
        params=params,
        before={entity.target: before},
        after={entity.target: after if after is not None else core.applied(before or {}, clean)}
        if error is None and not validate_only
        else None,
        outcomes={entity.target: outcome},
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    return AlterResult(entity, diffs, validate_only, error, before is not None, confirmed, message, event_id)


def _reread(cluster: Cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the entity's quotas now."""
    entity = core.parse_entity(params["entity"])
    return {entity.target: reads.current(cluster, entity)}


outcomes.register_reader(audit_names.QUOTA_ALTER, _reread)
