"""The append-only, hash-chained audit trail (DESIGN D6).

Each event's ``hash`` is HMAC-SHA256 under ``settings.AUDIT_HMAC_KEY`` (from the environment, or
var/audit_hmac_key for ``make run``; never stored in the database) over its canonical payload, which
includes its id and the previous event's hash. Without the key nobody can rewrite an event and re-hash
the events after it. Events written before the key existed ("legacy", plain SHA-256) verify under the
old rule only up to the keyed ``audit.rekey`` cut-over event that names the last of them (migration
0010); see ``console.audit.store.walk``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.db.models import Q


def canonical(payload: Any) -> bytes:
    """The bytes a hash covers: sorted keys, no spaces, anything else as its str()."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str).encode()


def audit_key(key: str | None = None) -> bytes:
    """The chain's HMAC key (settings.AUDIT_HMAC_KEY unless one is given); an empty key is refused."""
    key = settings.AUDIT_HMAC_KEY if key is None else key
    if not key:
        raise ImproperlyConfigured("AUDIT_HMAC_KEY is empty: the audit chain cannot be written or verified.")
    return key.encode()


def keyed_hash(payload: Any, key: str | None = None) -> str:
    """HMAC-SHA256 of the canonical payload under the audit key (hex, 64 characters)."""
    return hmac.new(audit_key(key), canonical(payload), hashlib.sha256).hexdigest()


def event_payload(event) -> dict:
    """The fields an event's hash covers, in a canonical form that survives a database round trip.

    A function of the attributes only, so migrations can hash their historical model instances too.
    """
    return {
        "id": event.pk,
        "created_at": event.created_at.isoformat(timespec="microseconds"),
        "actor_id": event.actor_id,
        "actor_name": event.actor_name,
        "on_behalf_of": event.on_behalf_of,
        "source_ip": event.source_ip,
        "cluster_id": event.cluster_id,
        "cluster_name": event.cluster_name,
        "action": event.action,
        "targets": event.targets,
        "params": event.params,
        "before": event.before,
        "after": event.after,
        "outcomes": event.outcomes,
        "outcome": event.outcome,
        "operation_id": event.operation_id,
        "request_id": event.request_id,
        "prev_hash": event.prev_hash,
    }


class AuditImmutableError(Exception):
    """Raised when code tries to change or remove an audit event."""


class AuditEventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AuditImmutableError("Audit events are append-only; they cannot be updated.")

    def delete(self):
        raise AuditImmutableError("Audit events are append-only; they cannot be deleted.")


class AuditEvent(models.Model):
    """One admin action (or one outcome of it). Written only by ``console.audit.store.record()``."""

    created_at = models.DateTimeField(db_index=True)
    actor_id = models.IntegerField(null=True, blank=True)  # no FK: deleting a user must not touch the trail
    actor_name = models.CharField(max_length=150, db_index=True)
    on_behalf_of = models.CharField(max_length=150, blank=True)
    source_ip = models.GenericIPAddressField(null=True, blank=True)
    cluster_id = models.IntegerField(null=True, blank=True)
    cluster_name = models.CharField(max_length=64, blank=True, db_index=True)
    action = models.CharField(max_length=64, db_index=True)
    targets = models.JSONField(default=list)
    params = models.JSONField(default=dict)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    outcomes = models.JSONField(default=dict)
    outcome = models.CharField(max_length=16, db_index=True)
    operation_id = models.IntegerField(null=True, blank=True, db_index=True)
    request_id = models.CharField(max_length=64, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["cluster_name", "-id"]),
            models.Index(fields=["action", "-id"]),
            # A cluster and an action together, newest first, also when nothing matches both.
            models.Index(fields=["cluster_name", "action", "-id"], name="audit_cluster_action"),
            # An actor in one cluster, likewise (the name alone walks the actor's other clusters).
            models.Index(fields=["actor_name", "cluster_name", "-id"], name="audit_actor_cluster"),
            # The actor filter's "on behalf of" branch (audit/review.py: page_query); partial, as
            # most events act for nobody else (and a full index would tell the planner so).
            models.Index(
                fields=["on_behalf_of"], name="audit_on_behalf_of", condition=Q(on_behalf_of__gt="")
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.action} by {self.actor_name}"

    def save(self, *args, **kwargs):
        if not kwargs.get("force_insert") or self._state.adding is False:
            raise AuditImmutableError("Audit events are append-only; they cannot be updated.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AuditImmutableError("Audit events are append-only; they cannot be deleted.")

    def payload(self) -> dict:
        """The fields the hash covers, in a canonical form that survives a database round trip."""
        return event_payload(self)

    def compute_hash(self, key: str | None = None) -> str:
        """The keyed hash (HMAC-SHA256 under AUDIT_HMAC_KEY) every event since the cut-over carries."""
        return keyed_hash(self.payload(), key)

    def legacy_hash(self) -> str:
        """The unkeyed SHA-256 of events written before the keyed chain (verified only up to the cut-over)."""
        return hashlib.sha256(canonical(self.payload())).hexdigest()


TARGET_MAX = 300  # longer target names are indexed by their first TARGET_MAX characters


class AuditTarget(models.Model):
    """One resource named by an event: the index behind the resource filter.

    A copy of AuditEvent.targets (which the event hash already covers), written by audit.record() in
    the same transaction. ``name`` is the target without its type ("orders" for "topic:orders"), so a
    bare name finds the resource whatever the event called it. The (target, event) and (name, event)
    indexes answer exact and prefix searches newest first.
    No database constraint on the event: the trail's own tamper checks (raw deletes) must still run,
    and archiving removes targets and events together.
    """

    event = models.ForeignKey(
        AuditEvent, on_delete=models.DO_NOTHING, db_constraint=False, related_name="target_rows"
    )
    target = models.CharField(max_length=TARGET_MAX)
    name = models.CharField(max_length=TARGET_MAX)

    class Meta:
        indexes = [
            models.Index(fields=["target", "event"], name="audit_target_event"),
            models.Index(fields=["name", "event"], name="audit_target_name_event"),
        ]

    def __str__(self) -> str:
        return f"{self.target} in event {self.event_id}"

    @staticmethod
    def name_of(target: str) -> str:
        """'orders' for 'topic:orders'; a target without a type is its own name."""
        return target.split(":", 1)[1] if ":" in target else target


class AuditChainHead(models.Model):
    """A single row naming the last event; locking it serialises appends to the chain.

    After `manage.py audit_archive`, anchor_id/anchor_hash name the last archived event: the first
    kept event must link to anchor_hash, so the chain verifies from there instead of the genesis hash.
    verified_marker/verified_mac: how far the whole chain was last verified, and a digest of every
    row it covered, signed with AUDIT_HMAC_KEY (console.audit.marker); a marker whose MAC does not
    verify is ignored. Nothing here is a secret: the key itself is never stored.
    """

    last_id = models.BigIntegerField(default=0)
    last_hash = models.CharField(max_length=64, default="0" * 64)
    anchor_id = models.BigIntegerField(default=0)
    anchor_hash = models.CharField(max_length=64, default="0" * 64)
    verified_marker = models.JSONField(default=dict, blank=True)
    verified_mac = models.CharField(max_length=64, blank=True, default="")

    def __str__(self) -> str:
        return f"audit chain head at event {self.last_id}"


GENESIS_HASH = "0" * 64  # the prev_hash of the first event ever written


def chain_start(head: AuditChainHead | None) -> tuple[int, str]:
    """Where verification begins: the archive anchor, or the genesis hash."""
    if head is None or not head.anchor_id:
        return 0, GENESIS_HASH
    return head.anchor_id, head.anchor_hash
