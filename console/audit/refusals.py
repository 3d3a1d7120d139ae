"""Refused mutations are audited too: who tried what, on which cluster, and why it was refused.

An area's mutation is decorated with ``@refused_as("topic.create", PolicyViolation, ...)``: when
it raises one of those (or PermissionDenied) before anything reached Kafka, one event with
outcome "refused" and the reason is appended, and the exception goes on to the caller as before.
The web layer's own refusals (a POST to a page the user may not change) are recorded by
``RefusedPostsMiddleware`` in console/middleware.py through ``record_refusal``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction

from console.audit import audit_names
from console.audit import store as audit
from console.models import Cluster

log = logging.getLogger(__name__)
REASON_MAX = 2000


def _cluster_of(kwargs: dict[str, Any]):
    if kwargs.get("cluster") is not None:
        return kwargs["cluster"]
    for key in ("reassignment", "request", "binding", "op"):
        owner = kwargs.get(key)
        if owner is not None and getattr(owner, "cluster", None) is not None:
            return owner.cluster
    return None


def record_refusal(
    *,
    actor,
    action: str,
    cluster,
    exc: BaseException,
    targets: Iterable[str] = (),
    params: dict | None = None,
    source_ip: str | None = None,
) -> None:
    """Append the refused event (once per exception); a database that refuses it is logged, not raised."""
    if getattr(exc, "refusal_audited", False):
        return
    try:
        with transaction.atomic():
            audit.record(
                actor=actor,
                action=action,
                cluster=cluster,
                targets=list(targets),
                params={**(params or {}), "reason": str(exc)[:REASON_MAX]},
                outcome="refused",
                source_ip=source_ip,
            )
    except DatabaseError as err:  # the refusal stands either way; nothing reached Kafka
        log.warning("could not record the refusal of %s: %s", action, err)
    try:
        exc.refusal_audited = True  # type: ignore[attr-defined]
    except AttributeError:
        pass


def record_refused_request(request, exc: BaseException, *, door: str, source_ip: str | None) -> None:
    """A change a door refused before any area's action ran (a POST to a page the caller may not
    change): recorded as ``<door>.<url name>`` on the cluster the URL names, if any."""
    match = getattr(request, "resolver_match", None)
    name = (match.kwargs.get("name") if match else None) or ""
    record_refusal(
        actor=request.user,
        action=audit_names.refused_request(door, match.url_name if match else None),
        cluster=Cluster.objects.filter(name=name).first() if name else None,
        exc=exc,
        targets=[request.path[:300]],
        source_ip=source_ip,
    )


def refused_as(
    action: str, *refusals: type[BaseException], targets: Callable[[dict], Iterable[str]] | None = None
):
    """Decorate a keyword-only mutation: its refusals (and PermissionDenied) are recorded, then re-raised."""
    caught = (PermissionDenied, *refusals)

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except caught as exc:
                try:
                    named = list(targets(kwargs)) if targets else []
                except Exception:  # noqa: BLE001 - bad input may be why it was refused
                    named = []
                record_refusal(
                    actor=kwargs.get("actor"),
                    action=action,
                    cluster=_cluster_of(kwargs),
                    exc=exc,
                    targets=[str(t)[:300] for t in named[:50]],
                    source_ip=kwargs.get("source_ip"),
                )
                raise

        return wrapper

    return decorate
