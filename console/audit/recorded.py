"""A row saved (or deleted) and its audit event, in one transaction.

The settings an area keeps in the console's database (a cluster's registration, a notification
channel, a role binding, a policy) change the same way: the row is saved and its "success" event,
with what it was before and what it is now, is appended in the same transaction, so neither stands
without the other. Changes that reach Kafka go through ``outcomes`` (requested, then the outcome).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from django.db import models, transaction

from console.audit import store

Row = TypeVar("Row", bound=models.Model)


def fields_of(row: models.Model, fields: Sequence[str]) -> dict[str, Any]:
    """The named fields of a row, as its before/after snapshot."""
    return {f: getattr(row, f) for f in fields}


def save(
    row: Row,
    *,
    actor,
    action: str,
    after: Callable[[Row], Any],
    targets: Callable[[Row], Iterable[str]] | Iterable[str],
    cluster=None,
    before: Any = None,
    params: Mapping[str, Any] | None = None,
    source_ip: str | None = None,
) -> Row:
    """Save ``row`` and append its event; ``after`` and a callable ``targets`` see the saved row
    (a new row has its id by then)."""
    with transaction.atomic():
        row.save()
        store.record(
            actor=actor,
            action=action,
            cluster=cluster,
            targets=list(targets(row) if callable(targets) else targets),
            params=params,
            before=before,
            after=after(row),
            outcome="success",
            source_ip=source_ip,
        )
    return row


def set_fields(
    row: Row,
    values: Mapping[str, Any],
    fields: Sequence[str],
    *,
    actor,
    action: str,
    targets: Iterable[str],
    cluster=None,
    clean: bool = False,
    source_ip: str | None = None,
) -> Row:
    """Set ``row``'s ``fields`` found in ``values`` (``full_clean`` first when ``clean``), save it and
    append its event; before and after are those fields (before is None for a row not saved yet)."""
    before = fields_of(row, fields) if row.pk else None
    for field in fields:
        if field in values:
            setattr(row, field, values[field])
    if clean:
        row.full_clean()
    return save(
        row,
        actor=actor,
        action=action,
        cluster=cluster,
        targets=targets,
        before=before,
        after=lambda saved: fields_of(saved, fields),
        source_ip=source_ip,
    )


def delete(
    row: models.Model,
    *,
    actor,
    action: str,
    before: Any,
    targets: Iterable[str],
    cluster=None,
    source_ip: str | None = None,
) -> None:
    """Append the event (``before``: what the row was) and delete ``row``, in one transaction; the
    event is written first, while the row (it may be the event's cluster) still exists."""
    with transaction.atomic():
        store.record(
            actor=actor,
            action=action,
            cluster=cluster,
            targets=list(targets),
            before=before,
            outcome="success",
            source_ip=source_ip,
        )
        row.delete()
