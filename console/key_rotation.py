"""Key rotation (`manage.py rotate_secrets`): every stored token re-encrypted under the first key.

The columns are the ones declared with console/crypto.py's field classes, found through the app
registry (`crypto.encrypted_columns`). Everything runs in one transaction: when any value opens with
no configured key the rotation is refused naming each such row, and nothing is re-encrypted, so the
operator never drops the old key on the strength of a half-done rotation. One audit event names the
columns and counts; a refused rotation is audited with its reason.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils.module_loading import import_string

from console import crypto
from console.audit import store as audit
from console.audit.refusals import record_refusal

ROTATE_ACTION = "secrets.rotate"  # its audit action name (a success, or the refusal of unreadable secrets)
ROWS_NAMED = 20  # unreadable rows listed by name in the refusal; the rest are counted


class SecretsUnreadable(Exception):
    """Stored values no configured key opens: the rotation changed nothing."""

    def __init__(self, rows: list[str], columns: list[str]) -> None:
        self.rows, self.columns = rows, columns
        named = "; ".join(rows[:ROWS_NAMED]) + (
            f"; and {len(rows) - ROWS_NAMED} more" if len(rows) > ROWS_NAMED else ""
        )
        super().__init__(
            f"{len(rows)} stored secret(s) open with no key in CONSOLE_ENCRYPTION_KEY: {named}. "
            "Rotation refused, nothing was re-encrypted. Add the key they were saved with to "
            "CONSOLE_ENCRYPTION_KEY (after the current one) and run this again, or replace those secrets "
            "(enter the cluster's password or the channel's URL or secret again, reject and resubmit the "
            "held change, delete the idempotency record)."
        )


@dataclass
class Rotation:
    """What a rotation did (or, dry, would do): per column label, values re-encrypted and values already
    under the first key; digests moved by the columns' `on_rotate` functions."""

    dry_run: bool
    re_encrypted: dict[str, int] = field(default_factory=dict)
    already_current: dict[str, int] = field(default_factory=dict)
    repinned: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.re_encrypted.values())


def rotate_secrets(*, actor, dry_run: bool = False) -> Rotation:
    """Re-encrypt every stored token under the first CONSOLE_ENCRYPTION_KEY, in one transaction.

    Raises SecretsUnreadable (audited unless dry) when any value opens with no configured key."""
    columns = crypto.encrypted_columns()
    rotation = Rotation(dry_run, {c.label: 0 for c in columns}, {c.label: 0 for c in columns})
    by_model: dict[type, list[crypto.EncryptedColumn]] = defaultdict(list)
    for column in columns:
        by_model[column.model].append(column)
    try:
        with transaction.atomic():
            unreadable: list[tuple[str, str]] = []
            for model, model_columns in by_model.items():
                unreadable += _rotate_model(model, model_columns, rotation)
            if unreadable:
                raise SecretsUnreadable([row for row, _ in unreadable], sorted({c for _, c in unreadable}))
            if rotation.total and not dry_run:
                audit.record(
                    actor=actor,
                    action=ROTATE_ACTION,
                    targets=sorted(label for label, n in rotation.re_encrypted.items() if n),
                    params={  # column labels are values: the trail masks keys that look secret
                        "columns": [
                            {
                                "column": label,
                                "rotated": n,
                                "already_current": rotation.already_current[label],
                            }
                            for label, n in sorted(rotation.re_encrypted.items())
                        ],
                        "repinned": rotation.repinned,
                    },
                    outcome="success",
                )
            if dry_run:
                transaction.set_rollback(True)
    except SecretsUnreadable as exc:
        if not dry_run:
            record_refusal(actor=actor, action=ROTATE_ACTION, cluster=None, exc=exc, targets=exc.columns)
        raise
    return rotation


def _rotate_model(model, columns: list[crypto.EncryptedColumn], rotation: Rotation) -> list[tuple[str, str]]:
    """Re-encrypt one model's columns (locked rows); the (row, column) pairs no key opens."""
    names = [c.field.attname for c in columns]
    rows = model._default_manager.select_for_update().only(model._meta.pk.attname, *names).order_by("pk")
    unreadable, updates = [], []
    for row in rows:
        changed: dict[crypto.EncryptedColumn, tuple[Any, Any]] = {}
        for column in columns:
            value = getattr(row, column.field.attname)
            new: dict[str, str] = {}
            for token in column.tokens(value):
                if crypto.current(token):
                    rotation.already_current[column.label] += 1
                    continue
                try:
                    new[token] = crypto.rotate(token)
                except crypto.SecretUnreadable:
                    unreadable.append((f"{column.label} of #{row.pk} ({_name(row)})", column.label))
                    continue
                rotation.re_encrypted[column.label] += 1
            if new:
                changed[column] = (value, column.replaced(value, new))
        if changed:
            updates.append((row, changed))
    if unreadable or rotation.dry_run:
        return unreadable
    for row, changed in updates:  # written after the read, not under the open cursor
        model._default_manager.filter(pk=row.pk).update(
            **{c.field.attname: after for c, (_, after) in changed.items()}
        )
        for column, (before, after) in changed.items():
            if column.on_rotate:
                rotation.repinned.update(import_string(column.on_rotate)(row, before, after) or {})
    return unreadable


def _name(row) -> str:
    """How the refusal names a row (its own str); never fails the refusal."""
    try:
        return str(row)[:200]
    except Exception:  # noqa: BLE001 - a broken __str__ must not hide which row is unreadable
        return row._meta.label
