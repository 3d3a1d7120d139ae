"""Request notifications: in the app always, by email when REQUESTS_EMAIL_FROM is configured."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from console import access, notify
from console.changes.queue import label
from console.models.requests import ChangeRequest, Notification

EMAIL_FROM = settings.REQUESTS_EMAIL_FROM


def notify_requester(req: ChangeRequest, text: str) -> None:
    """In-app always; by email when REQUESTS_EMAIL_FROM is set and the requester has an address."""
    user = req.requested_by
    if user is None:
        return
    Notification.objects.create(user=user, request=req, text=text[:300])
    if EMAIL_FROM and user.email:
        transaction.on_commit(
            lambda: send_mail(
                f"[Kafka console] {text[:120]}", text, EMAIL_FROM, [user.email], fail_silently=True
            )
        )


def notify_approvers(req: ChangeRequest) -> None:
    """Tell everyone who may decide (except the requester) that a request is waiting."""
    from django.contrib.auth import get_user_model

    from console.models import Role

    roles = [Role.OPERATOR, Role.ADMIN]
    deciders = (
        get_user_model()
        .objects.filter(
            Q(is_superuser=True)
            | Q(bindings__cluster=req.cluster, bindings__role__in=roles)
            | Q(groups__bindings__cluster=req.cluster, groups__bindings__role__in=roles),
            is_active=True,
        )
        .exclude(pk=req.requested_by_id)
        .distinct()
    )
    text = f"Request #{req.pk} by {req.requested_by_name} waits for approval: {label(req)} {req.resource}"
    Notification.objects.bulk_create(Notification(user=u, request=req, text=text[:300]) for u in deciders)


def announce(req: ChangeRequest, event: str, text: str) -> None:
    """The cluster's notification channels subscribed to the event (console/notify; queued on commit)."""
    notify.emit(
        req.cluster,
        event,
        title=f"Request #{req.pk}: {label(req)} {req.resource} ({notify.events.label(event).lower()})",
        text=text,
        link=f"/c/{req.cluster.name}/requests/{req.pk}/",
        details={
            "request": req.pk,
            "kind": req.kind,
            "resource": req.resource,
            "requested_by": req.requested_by_name,
        },
    )


def unread_notifications(*, actor, limit: int = 20) -> list[Notification]:
    """Unread notifications about requests the actor may still see: roles change after the fact.

    As get_request: the requester sees their own, approvers and auditors every request of the cluster.
    """
    rows = (
        Notification.objects.filter(
            user=actor, read_at__isnull=True, request__cluster__in=access.visible_clusters(actor)
        )
        .select_related("request__cluster")
        .order_by("-id")
    )
    sees_all: dict[int, bool] = {}
    out = []
    for n in rows.iterator(chunk_size=limit):
        req = n.request
        if req.cluster_id not in sees_all:
            sees_all[req.cluster_id] = access.can(actor, req.cluster, access.APPROVE) or access.can(
                actor, req.cluster, access.VIEW_AUDIT
            )
        if req.requested_by_id == actor.pk or sees_all[req.cluster_id]:
            out.append(n)
            if len(out) == limit:
                break
    return out


def mark_read(*, actor, request: ChangeRequest | None = None) -> int:
    qs = Notification.objects.filter(user=actor, read_at__isnull=True)
    if request is not None:
        qs = qs.filter(Q(request=request))
    return qs.update(read_at=timezone.now())
