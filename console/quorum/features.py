"""Finalized feature levels (``metadata.version``, ``kraft.version``, ``group.version``...): read them,
and change them the way ``kafka-features.sh upgrade|downgrade [--unsafe] [--dry-run]`` does.

The dry run is Kafka's own: UpdateFeatures with validate-only, whose answer (or refusal, word for
word) the page, API and CLI show first. A change is admin business (``cluster.admin``), held by change
control (``kraft.features``), audited "requested" before Kafka is called and with its outcome after,
and confirmed by reading the finalized levels again (ApiVersions). Kafka applies all the updates of
one request or none.

The console's own rule: a ``metadata.version`` downgrade must be asked for as ``unsafe-downgrade``
(records written for a newer version may be lost). Kafka 4.1 then still refuses a downgrade across a
version that changed the metadata ("Unsafe metadata downgrade is not supported in this version"),
and the console shows that answer.
"""

from __future__ import annotations

from django.conf import settings

from console import access
from console.audit import outcomes
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.quorum import audit_names, core

GATE = "kraft.features"  # the policy kind (declared in held.py)
TARGET = "features"


def finalized(cluster) -> dict[str, int]:
    """The finalized level of each feature (a feature not finalized reads 0)."""
    found = gateway_for(cluster).describe_features()
    return {f.name: int(f.finalized_max or 0) for f in found.values()}


def check(updates, upgrade_type: str, current: dict[str, int] | None) -> tuple[dict[str, int], str]:
    """The input checked (KraftInvalid) and the console's metadata.version rule (KraftRefused)."""
    wanted = core.feature_updates(updates)
    kind = core.upgrade_type(upgrade_type)
    mv = wanted.get(core.METADATA_VERSION)
    now = (current or {}).get(core.METADATA_VERSION)
    if mv is not None and now is not None and mv < now and kind != core.UNSAFE_DOWNGRADE:
        raise core.KraftRefused(
            [
                f"metadata.version {now} -> {mv} is a downgrade: records written for the newer version may "
                "be lost; choose unsafe-downgrade explicitly to ask Kafka (it refuses a downgrade across a "
                "version that changed the metadata)"
            ]
        )
    return wanted, kind


def _describe(updates: dict[str, int], kind: str, dry_run: bool) -> str:
    text = ", ".join(f"{n}={v}" for n, v in updates.items())
    return f"{'dry run: ' if dry_run else ''}{kind} {text}"


def _first_error(answer: dict[str, KafkaOperationError | None]) -> KafkaOperationError | None:
    return next((e for e in answer.values() if e is not None), None)


def first_error(
    cluster, updates: dict[str, int], kind: str, *, validate_only: bool = True
) -> KafkaOperationError | None:
    """Kafka's answer to UpdateFeatures (validate-only: the dry run): None when it accepts it."""
    try:
        return _first_error(gateway_for(cluster).update_features(updates, kind, validate_only=validate_only))
    except KafkaOperationError as exc:
        return exc


def _targets(kwargs) -> list[str]:
    return [TARGET]


@refused_as(audit_names.FEATURES_UPDATE, core.KraftInvalid, core.KraftRefused, targets=_targets)
def update_features(
    *,
    actor,
    cluster,
    updates,
    upgrade_type: str = core.UPGRADE,
    dry_run: bool = False,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> core.KraftResult:
    """Kafka's validate-only first; unless ``dry_run``, then the change, re-read until it shows.

    Raises KraftInvalid (bad input), KraftRefused (the console's metadata.version rule),
    PermissionDenied / ApprovalRequired (a change, not a dry run, where change control holds it)
    before anything reaches Kafka; Kafka's refusal is the result's ``error``."""
    access.require(actor, cluster, access.ADMINISTER)
    core.feature_updates(updates)  # bad input is refused before anything is read
    try:
        before: dict[str, int] | None = finalized(cluster)
    except KafkaOperationError:
        before = None
    wanted, kind = check(updates, upgrade_type, before)
    if not dry_run:
        gate.check(actor, cluster, GATE)
    params = {"updates": wanted, "upgrade_type": kind, "dry_run": dry_run}
    shown_before = {n: (before or {}).get(n, 0) for n in wanted} if before is not None else None
    error = first_error(cluster, wanted, kind)
    req = None
    after = None
    confirmed = False
    if error is None and not dry_run:
        req = outcomes.requested(
            actor=actor, action=audit_names.FEATURES_UPDATE, cluster=cluster, targets=[TARGET],
            params=params, source_ip=source_ip, on_behalf_of=on_behalf_of, request_id=request_id,
        )  # fmt: skip
        error = first_error(cluster, wanted, kind, validate_only=False)
        levels, confirmed = core.until(
            lambda: finalized(cluster),
            lambda now: all(now.get(n, 0) == v for n, v in wanted.items()),
            float(settings.CONFIG_CONFIRM_TIMEOUT_S) if error is None else 0,
        )
        after = {n: levels.get(n, 0) for n in wanted} if levels is not None else None
        if error is not None and error.name == "REQUEST_TIMED_OUT" and confirmed:
            error = None  # a timed-out request that did apply: believe the levels Kafka shows now
    outcome = outcomes.change_outcome(error, dry_run=dry_run)
    if error is not None:
        outcome["message"] = error.message
    event_id = outcomes.settle_or_record(
        req,
        actor=actor,
        action=audit_names.FEATURES_VALIDATE if dry_run else audit_names.FEATURES_UPDATE,
        cluster=cluster,
        targets=[TARGET],
        params=params,
        before={TARGET: shown_before},
        after={TARGET: after} if error is None and not dry_run else None,
        outcome="success" if error is None else "failed",
        outcomes={TARGET: outcome},
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    what = _describe(wanted, kind, dry_run)
    if error is not None:
        message = f"Kafka refused {what}: {error.name}: {error.message}"
    elif dry_run:
        message = f"Kafka would accept {what} (validate only: nothing changed)"
    else:
        message = f"{what}: done" + ("" if confirmed else " (the new levels did not show yet)")
    return core.KraftResult(
        "features.validate" if dry_run else "features.update", TARGET, dry_run, error, message,
        shown_before, after, confirmed, event_id,
    )  # fmt: skip


def describe(*, actor, cluster):
    """Every feature with its supported range and finalized level (ApiVersions), by name."""
    access.require(actor, cluster, access.VIEW)
    return gateway_for(cluster).describe_features()


def _reread(cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the finalized levels of the features the change named, now."""
    levels = finalized(cluster)
    return {TARGET: {name: levels.get(name, 0) for name in (params.get("updates") or {})}}


outcomes.register_reader(audit_names.FEATURES_UPDATE, _reread)
