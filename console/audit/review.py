"""Audit review: search and detail, scoped to what the reader may see.

Writing and the chain walk live in ``audit/store.py``, the chain status in ``integrity/chain.py``.
Auditors and admins see the events of the clusters where they hold ``audit.view``; events without
a cluster (or of a removed cluster) are for superusers only."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from console import access
from console.models import AuditEvent, AuditTarget
from console.models.audit import TARGET_MAX

PAGE_SIZE = settings.AUDIT_PAGE_SIZE
OUTCOMES = (
    "requested",
    "success",
    "partial",
    "failure",
    "cancelled",
    "errored",
    "refused",
    "rejected",
    "approved",
    "unknown",  # the outcome could not be written when the change ran (audit/outcomes.py)
    "reconciled",  # ... and was later recorded from Kafka's re-read state
)
# A resource search matching more index rows than this walks events newest first instead (_by_resource).
DENSE_MATCHES = 10_000


@dataclass(frozen=True)
class AuditFilter:
    """The reviewer's filter; empty fields match everything."""

    actor: str = ""
    action: str = ""
    cluster: str = ""
    resource: str = ""
    outcome: str = ""
    since: datetime | None = None
    until: datetime | None = None

    def as_params(self) -> dict[str, str]:
        """The filter as query-string values (for export links and pagination)."""
        out = {k: v for k, v in vars(self).items() if v and not isinstance(v, datetime)}
        for key in ("since", "until"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value.isoformat(timespec="minutes")
        return out


def token_actor_prefix(username: str) -> str:
    """How the actor of an event written with one of the user's API tokens begins
    (``alice [token 1a2b3c4d5e6f 'ci']``, console/api/tokens.py): a search for ``alice`` finds
    those events too, and never ``alice2``'s."""
    return f"{username} [token "


def auditable_cluster_ids(user) -> list[int] | None:
    """Cluster ids whose events the user may read; None means every event (superusers)."""
    if getattr(user, "is_superuser", False) and user.is_active:
        return None
    return [c.pk for c in access.visible_clusters(user) if access.can(user, c, access.VIEW_AUDIT)]


def may_review(user) -> bool:
    ids = auditable_cluster_ids(user)
    return ids is None or bool(ids)


def require_reviewer(user) -> list[int] | None:
    ids = auditable_cluster_ids(user)
    if ids is not None and not ids:
        raise PermissionDenied(f"You need the '{access.VIEW_AUDIT}' permission on at least one cluster.")
    return ids


def _scoped(user) -> QuerySet:
    ids = require_reviewer(user)
    qs = AuditEvent.objects.all()
    return qs if ids is None else qs.filter(cluster_id__in=ids)


def _filtered(qs: QuerySet, f: AuditFilter) -> QuerySet:
    if f.actor:
        # Approved requests run as the approver on behalf of the requester: either name finds them;
        # so do the events written with one of the person's API tokens (token_actor_prefix).
        token = token_actor_prefix(f.actor)
        qs = qs.filter(
            Q(actor_name=f.actor)
            | Q(actor_name__gte=token, actor_name__lt=token + _TOP)
            | Q(on_behalf_of=f.actor)
        )
    if f.action:
        # "topic" finds topic.create, topic.delete...; a full name matches exactly.
        if "." in f.action:
            qs = qs.filter(action=f.action)
        else:
            qs = qs.filter(action__gte=f.action + ".", action__lt=f.action + "." + _TOP)
    if f.cluster:
        qs = qs.filter(cluster_name=f.cluster)
    if f.resource:
        qs = _by_resource(qs, f.resource)
    if f.outcome:
        qs = qs.filter(outcome=f.outcome)
    if f.since:
        qs = qs.filter(created_at__gte=f.since)
    if f.until:
        qs = qs.filter(created_at__lt=f.until)
    return qs


def resource_pattern(value: str) -> tuple[str, str, bool]:
    """(column, text, prefix?) for a resource search.

    "topic:orders" is that exact target; a bare "orders" is any target named orders (topic:orders,
    group:orders, a request's bare name); a trailing * means "starts with" ("topic:ord*", "team-a.*").
    """
    value = value.strip()
    prefix = value.endswith("*")
    text = value.rstrip("*")[:TARGET_MAX]
    return ("target" if ":" in text else "name"), text, prefix


_TOP = "\U0010ffff"  # above every character: "text <= x < text + _TOP" is "x starts with text"


def _target_matches(value: str) -> QuerySet:
    """Index rows for a resource search: an equality or a range scan of a (column, event) index.

    A prefix is the range text <= column < text + U+10FFFF: case-sensitive like Kafka names and, unlike
    SQLite's LIKE, always answered by the index.
    """
    column, text, prefix = resource_pattern(value)
    if not prefix:
        return AuditTarget.objects.filter(**{column: text})
    return AuditTarget.objects.filter(**{f"{column}__gte": text, f"{column}__lt": text + _TOP})


def _match_sql(value: str, alias: str) -> tuple[str, list[str]]:
    """The same index condition as _target_matches, as SQL on the AuditTarget table ``alias``."""
    column, text, prefix = resource_pattern(value)
    if prefix:
        return f"{alias}.{column} >= %s AND {alias}.{column} < %s", [text, text + _TOP]
    return f"{alias}.{column} = %s", [text]


def _qn(name: str) -> str:
    return connection.ops.quote_name(name)


def _dense(value: str) -> bool:
    """Does the resource match at least DENSE_MATCHES index rows? (one row fetched, no COUNT)"""
    match, params = _match_sql(value, "t")
    sql = f"SELECT 1 FROM {_qn(AuditTarget._meta.db_table)} t WHERE {match} LIMIT 1 OFFSET %s"
    with connection.cursor() as cur:
        cur.execute(sql, [*params, DENSE_MATCHES - 1])
        return cur.fetchone() is not None


def _by_resource(qs: QuerySet, value: str) -> QuerySet:
    """Events naming the resource, each once, in a plan that suits how many events match.

    Up to DENSE_MATCHES index rows: the matching ids are collected from the index (small, then sorted).
    More: the events are walked newest first and each is probed through the target index, so a page
    needs about PAGE_SIZE x (events / matches) probes. Matches crowded into old events with many newer
    ones between are the slow case of that walk.
    """
    matches = _target_matches(value)
    if not _dense(value):
        return qs.filter(id__in=matches.values("event_id"))
    return qs.filter(Exists(matches.filter(event_id=OuterRef("pk"))))


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One line of the audit list: the columns it shows, read straight from the cursor."""

    id: int
    created_at: datetime
    actor_name: str
    on_behalf_of: str
    cluster_name: str
    action: str
    targets: list[str]
    outcome: str

    @property
    def pk(self) -> int:
        return self.id


@dataclass(frozen=True)
class AuditPage:
    events: list[AuditRow]
    newer_than: int | None  # pass as ?after= to go one page towards the newest
    older_than: int | None  # pass as ?before= for the next (older) page


def filtered_events(*, actor, audit_filter: AuditFilter) -> QuerySet:
    """Every event the actor may see that matches the filter (unordered, unsliced: for export)."""
    return _filtered(_scoped(actor), audit_filter)


LIST_FIELDS = (
    "id",
    "created_at",
    "actor_name",
    "on_behalf_of",
    "cluster_name",
    "action",
    "targets",
    "outcome",
)


def page_query(
    *, actor, audit_filter: AuditFilter, before: int | None = None, after: int | None = None
) -> tuple[str, list]:
    """The list page's SELECT and parameters: the rows _filtered() selects, newest first (oldest
    first past ``after``), one more than a page, only the columns the list shows.

    Written out rather than built through the ORM: a page is answered by an index in well under a
    millisecond on a million events, and assembling and compiling the equivalent queryset cost
    more than that. The export and detail views keep the ORM (_filtered); tests hold the two to the
    same rows for every filter field.

    An actor filter is three conditions (the name, the person's API tokens, on behalf of). As one OR
    no index answers it, and the database walks every event newest first for a page that may never
    fill (an actor with no events read the whole trail); so each condition is its own newest-first
    page through its own index, with every other condition, and the page is taken from their union.
    """
    ids = require_reviewer(actor)
    f = audit_filter
    where: list[str] = []
    params: list[Any] = []

    def add(condition: str, *values: Any) -> None:
        where.append(condition)
        params.extend(values)

    if ids is not None:
        add(f"e.cluster_id IN ({', '.join(['%s'] * len(ids))})", *ids)
    if f.action:
        if "." in f.action:
            add("e.action = %s", f.action)
        else:
            add("e.action >= %s AND e.action < %s", f.action + ".", f.action + "." + _TOP)
    if f.cluster:
        add("e.cluster_name = %s", f.cluster)
    if f.resource:
        target = _qn(AuditTarget._meta.db_table)
        match, values = _match_sql(f.resource, "t")
        if _dense(f.resource):
            add(f"EXISTS (SELECT 1 FROM {target} t WHERE t.event_id = e.id AND {match})", *values)
        else:
            add(f"e.id IN (SELECT t.event_id FROM {target} t WHERE {match})", *values)
    if f.outcome:
        add("e.outcome = %s", f.outcome)
    adapt = connection.ops.adapt_datetimefield_value
    if f.since:
        add("e.created_at >= %s", adapt(f.since))
    if f.until:
        add("e.created_at < %s", adapt(f.until))
    if before is not None:
        add("e.id < %s", before)
    if after is not None:
        add("e.id > %s", after)
    events = _qn(AuditEvent._meta.db_table)
    columns = ", ".join(f"e.{c}" for c in LIST_FIELDS)
    page = f"ORDER BY e.id {'ASC' if after is not None else 'DESC'} LIMIT %s"
    if not f.actor:
        sql = f"SELECT {columns} FROM {events} e WHERE {' AND '.join(where) or '1 = 1'} {page}"
        return sql, [*params, PAGE_SIZE + 1]
    token = token_actor_prefix(f.actor)
    # (condition, its page order, values). The token range comes out of the actor index in name
    # order and is sorted whatever happens; ordering it by the expression e.id + 0 keeps the
    # planner from walking another filter's index in id order instead. "on behalf of" reads a
    # partial index (non-empty values only), which the index's own condition > '' lets the planner use.
    branches = (
        ("e.actor_name = %s", page, [f.actor]),
        ("e.actor_name >= %s AND e.actor_name < %s", page.replace("e.id", "e.id + 0"), [token, token + _TOP]),
        ("e.on_behalf_of = %s AND e.on_behalf_of > ''", page, [f.actor]),
    )
    union, union_params = [], []
    for i, (condition, order, values) in enumerate(branches):
        where_all = " AND ".join([condition, *where])
        union.append(f"SELECT id FROM (SELECT e.id FROM {events} e WHERE {where_all} {order}) a{i}")
        union_params += [*values, *params, PAGE_SIZE + 1]
    sql = f"SELECT {columns} FROM {events} e WHERE e.id IN ({' UNION '.join(union)}) {page}"
    return sql, [*union_params, PAGE_SIZE + 1]


def _utc(value) -> datetime:
    """created_at as the ORM would give it: aware, in UTC (SQLite hands back naive UTC or text)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


_decode = json.JSONDecoder().decode


def _json(value):
    return _decode(value) if isinstance(value, str) else value  # PostgreSQL may hand back decoded JSON


def _fetch_rows(sql: str, params: list) -> list[AuditRow]:
    """The page's rows straight from the cursor, decoded here rather than as model instances."""
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return [
            AuditRow(i, _utc(c), a, b, n, act, _json(t), o) for i, c, a, b, n, act, t, o in cur.fetchall()
        ]


def search_events(
    *, actor, audit_filter: AuditFilter, before: int | None = None, after: int | None = None
) -> AuditPage:
    """One page of matching events, newest first, paged by id (no COUNT over millions of rows)."""
    if after is not None:
        rows = _fetch_rows(*page_query(actor=actor, audit_filter=audit_filter, after=after))
        events = list(reversed(rows[:PAGE_SIZE]))
        newer = events[0].pk if len(rows) > PAGE_SIZE else None
        return AuditPage(events, newer, events[-1].pk if events else after + 1)
    rows = _fetch_rows(*page_query(actor=actor, audit_filter=audit_filter, before=before))
    events = rows[:PAGE_SIZE]
    newer = events[0].pk if (events and before is not None) else None
    older = events[-1].pk if len(rows) > PAGE_SIZE else None
    return AuditPage(events, newer, older)


def get_event(*, actor, event_id: int) -> AuditEvent | None:
    """The event, or None when it does not exist or the reader may not see it."""
    return _scoped(actor).filter(pk=event_id).first()


def diff(before: Any, after: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Changed leaves between two JSON values as rows of {path, change, before, after}."""
    if isinstance(before, dict) and isinstance(after, dict):
        rows: list[dict[str, Any]] = []
        for key in sorted(set(before) | set(after), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in before:
                rows.append({"path": path, "change": "added", "before": None, "after": after[key]})
            elif key not in after:
                rows.append({"path": path, "change": "removed", "before": before[key], "after": None})
            else:
                rows.extend(diff(before[key], after[key], path))
        return rows
    if before == after:
        return []
    change = "added" if before is None else "removed" if after is None else "changed"
    return [{"path": prefix or "(value)", "change": change, "before": before, "after": after}]
