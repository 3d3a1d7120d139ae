"""The area's mutations: ``produce`` one message (data.write, audited requested then settled: its key
and size, never its value), and managing data access: grants (who may read and write which topics'
messages) and masking rules.

A cluster's admins (``access.ADMINISTER``) manage them; each change saves the row and its audit event
together (``audit.recorded``), refusals are audited too (``refused_as``). A masking rule is checked
when it is added (a bad JSON path or regex is a ValidationError saying why), so a read never meets
one it cannot apply.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.http import Http404

from console import access
from console.audit import outcomes, recorded
from console.audit.refusals import refused_as
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, ProducedRecord
from console.messages import audit_names, grants, masking
from console.messages.store import describe_grant, describe_rule
from console.models import Cluster, DataGrant, MaskingRule

MAX_PREFIX = 249  # Kafka's longest topic name
KEY_SHOWN = 200  # characters of a produced message's key kept in the audit trail
MAX_HEADERS = 100


def _bytes(data, what: str) -> bytes | None:
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    raise ValidationError(f"The {what} is text, bytes or nothing.")


def _key_text(key: bytes | None) -> str | None:
    """A produced key as the audit trail keeps it: its text (hex when it is not UTF-8), cut to 200."""
    if key is None:
        return None
    try:
        text = key.decode("utf-8")
    except UnicodeDecodeError:
        text = "hex:" + key.hex()
    return text[:KEY_SHOWN]


def _produce_targets(kwargs: dict) -> list[str]:
    return [f"topic:{kwargs.get('topic')}"]


@refused_as(audit_names.MESSAGES_PRODUCE, ValidationError, targets=_produce_targets)
def produce(
    *,
    actor,
    cluster: Cluster,
    topic: str,
    partition: int | None,
    key,
    value,
    headers=(),
    source_ip: str | None = None,
) -> ProducedRecord:
    """Write one message (key, value: text, bytes or None; headers: (name, text/bytes/None) pairs;
    partition None: Kafka's default partitioner). Needs data.write on the topic; audited
    "requested" before Kafka is called and the outcome after, with the key and the value's size,
    never the value."""
    if not topic:
        raise ValidationError("Name the topic to write to.")
    grants.require(actor, cluster, topic, grants.DATA_WRITE)
    key_bytes, value_bytes = _bytes(key, "key"), _bytes(value, "value")
    pairs = [(name, _bytes(v, f"header {name!r}")) for name, v in headers]
    if len(pairs) > MAX_HEADERS or any(not isinstance(n, str) or not n for n, _ in pairs):
        raise ValidationError(f"Headers are named (a non-empty name each), at most {MAX_HEADERS} of them.")
    if partition is not None and (
        isinstance(partition, bool) or not isinstance(partition, int) or partition < 0
    ):
        raise ValidationError(
            f"partition {partition!r} is not a partition number (0 or more), or leave it empty."
        )
    target = f"topic:{topic}"
    params = {
        "partition": partition,
        "key": _key_text(key_bytes),
        "value_size": None if value_bytes is None else len(value_bytes),
        "headers": [n for n, _ in pairs],
    }
    asked = outcomes.requested(
        actor=actor,
        action=audit_names.MESSAGES_PRODUCE,
        cluster=cluster,
        targets=[target],
        params=params,
        source_ip=source_ip,
    )
    try:
        written = gateway_for(cluster).produce_record(
            topic, partition=partition, key=key_bytes, value=value_bytes, headers=pairs
        )
    except KafkaOperationError as exc:
        outcomes.settle(
            asked,
            targets=[target],
            params=params,
            outcome="failed",
            outcomes={target: {"ok": False, "error": exc.name, "message": exc.operator_text}},
        )
        raise
    outcomes.settle(
        asked,
        targets=[target],
        params={**params, "partition": written.partition, "offset": written.offset},
        outcome="success",
        outcomes={target: {"ok": True, "partition": written.partition, "offset": written.offset}},
    )
    return written


def _prefix_target(prefix: str) -> str:
    return f"topic:{prefix}*" if prefix else "topic:*"


def _subject(user, group) -> tuple:
    """The user and group objects named (objects or names; exactly one of them)."""
    if isinstance(user, str) and user:
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise ValidationError(f"There is no user '{user}'.")
        user = found
    if isinstance(group, str) and group:
        found = Group.objects.filter(name=group).first()
        if found is None:
            raise ValidationError(f"There is no group '{group}'.")
        group = found
    user, group = user or None, group or None
    if (user is None) == (group is None):
        raise ValidationError("A data grant names a user or a group, not both and not neither.")
    if user is not None and access.is_system(user):
        raise ValidationError("The system actor reads and writes no messages.")
    return user, group


def _check_prefix(prefix: str) -> str:
    prefix = prefix.strip()
    if len(prefix) > MAX_PREFIX:
        raise ValidationError(f"A topic prefix is at most {MAX_PREFIX} characters.")
    return prefix


def _grant_targets(kwargs: dict) -> list[str]:
    return [_prefix_target(str(kwargs.get("prefix") or ""))]


@refused_as(audit_names.DATA_GRANT, ValidationError, targets=_grant_targets)
def grant(
    *,
    actor,
    cluster: Cluster,
    user=None,
    group=None,
    prefix: str = "",
    read: bool = True,
    write: bool = False,
    unmasked: bool = False,
    source_ip: str | None = None,
) -> DataGrant:
    """Give a user or a group (objects or names) data.read / data.write on the cluster's topics that
    start with ``prefix`` ("" = every topic); ``unmasked``: may read unmasked, with a reason."""
    access.require(actor, cluster, access.ADMINISTER)
    prefix = _check_prefix(prefix)
    user, group = _subject(user, group)
    row = DataGrant(
        cluster=cluster,
        user=user,
        group=group,
        prefix=prefix,
        read=read,
        write=write,
        unmasked=unmasked,
        created_by_name=actor.get_username(),
    )
    row.full_clean()
    if DataGrant.objects.filter(cluster=cluster, user=user, group=group, prefix=prefix).exists():
        raise ValidationError(
            f"{describe_grant(row)['subject']} already has a data grant on prefix '{prefix}': revoke it first."
        )
    return recorded.save(
        row,
        actor=actor,
        action=audit_names.DATA_GRANT,
        cluster=cluster,
        targets=lambda g: [describe_grant(g)["subject"], _prefix_target(g.prefix)],
        after=describe_grant,
        source_ip=source_ip,
    )


def _remove(row, *, actor, cluster: Cluster, what: str, action: str, describe, source_ip) -> None:
    """Delete one of the cluster's rows (Http404 when it has none such) with its event: what it was."""
    access.require(actor, cluster, access.ADMINISTER)
    if row is None:
        raise Http404(f"There is no {what} on cluster '{cluster.name}'.")
    before = describe(row)
    targets = [before["subject"]] if "subject" in before else []
    recorded.delete(
        row,
        actor=actor,
        action=action,
        cluster=cluster,
        targets=[*targets, _prefix_target(row.prefix)],
        before=before,
        source_ip=source_ip,
    )


@refused_as(audit_names.DATA_REVOKE)
def revoke(*, actor, cluster: Cluster, grant_id: int, source_ip: str | None = None) -> None:
    """Remove a data grant of the cluster; its audit event keeps what it gave."""
    row = DataGrant.objects.filter(cluster=cluster, pk=grant_id).select_related("user", "group").first()
    _remove(
        row,
        actor=actor,
        cluster=cluster,
        what=f"data grant {grant_id}",
        action=audit_names.DATA_REVOKE,
        describe=describe_grant,
        source_ip=source_ip,
    )


@refused_as(audit_names.MASK_RULE_ADD, ValidationError, targets=_grant_targets)
def add_rule(
    *,
    actor,
    cluster: Cluster,
    kind: str,
    expression: str,
    prefix: str = "",
    note: str = "",
    source_ip: str | None = None,
) -> MaskingRule:
    """Add a masking rule on the cluster's topics that start with ``prefix``; ValidationError when it
    cannot apply (unknown kind, a JSON path or regex that does not parse)."""
    access.require(actor, cluster, access.ADMINISTER)
    prefix = _check_prefix(prefix)
    try:
        checked = masking.make_rule(kind, expression, prefix)
    except masking.RuleInvalid as exc:
        raise ValidationError(f"The masking rule cannot be used: {exc}.") from None
    if len(note) > 500:
        raise ValidationError("A rule's note is at most 500 characters.")
    row = MaskingRule(
        cluster=cluster,
        prefix=prefix,
        kind=kind,
        expression=checked.expression,
        note=note,
        created_by_name=actor.get_username(),
    )
    row.full_clean()
    return recorded.save(
        row,
        actor=actor,
        action=audit_names.MASK_RULE_ADD,
        cluster=cluster,
        targets=lambda r: [_prefix_target(r.prefix)],
        after=describe_rule,
        source_ip=source_ip,
    )


@refused_as(audit_names.MASK_RULE_REMOVE)
def remove_rule(*, actor, cluster: Cluster, rule_id: int, source_ip: str | None = None) -> None:
    """Remove a masking rule of the cluster; its audit event keeps what it masked."""
    _remove(
        MaskingRule.objects.filter(cluster=cluster, pk=rule_id).first(),
        actor=actor,
        cluster=cluster,
        what=f"masking rule {rule_id}",
        action=audit_names.MASK_RULE_REMOVE,
        describe=describe_rule,
        source_ip=source_ip,
    )
