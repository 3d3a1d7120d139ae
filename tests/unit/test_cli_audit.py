"""``manage.py kafka audit …`` and the audit search by actor (API tokens' events included)."""

from __future__ import annotations

import json
from functools import partial

import pytest
from django.db import connection, transaction

from console.audit import export as audit_export
from console.audit import review as audit_review
from console.audit import store as audit
from console.audit.review import AuditFilter
from console.models import AuditEvent
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db


run = partial(kafka, "audit")


class Named:
    """An actor as the audit store sees it: a name (a token's user is renamed this way, api/tokens.py)."""

    pk = None

    def __init__(self, name: str) -> None:
        self.name = name

    def get_username(self) -> str:
        return self.name


def _events(cluster) -> dict[str, int]:
    names = ("alice", "alice [token 1a2b3c4d5e6f 'ci']", "alice2", "alice2 [token 0f0f0f0f0f0f 'x']", "bob")
    ids = {}
    with transaction.atomic():
        for name in names:
            ids[name] = audit.record(
                actor=Named(name), action="topic.create", cluster=cluster, targets=["topic:t"]
            ).pk
    return ids


def test_it_finds_a_users_token_events_by_their_name_and_not_alice2s(personas, kafka_cluster):
    ids = _events(kafka_cluster)
    want = sorted([ids["alice"], ids["alice [token 1a2b3c4d5e6f 'ci']"]])
    auditor = personas["auditor"]
    page = audit_review.search_events(actor=auditor, audit_filter=AuditFilter(actor="alice"))
    assert sorted(e.pk for e in page.events) == want  # the list page's SQL
    qs = audit_review.filtered_events(actor=auditor, audit_filter=AuditFilter(actor="alice"))
    assert sorted(qs.values_list("pk", flat=True)) == want  # the export's ORM filter
    alice2 = audit_review.search_events(actor=auditor, audit_filter=AuditFilter(actor="alice2")).events
    assert sorted(e.pk for e in alice2) == sorted([ids["alice2"], ids["alice2 [token 0f0f0f0f0f0f 'x']"]])
    code, out = run("search", "--actor", "alice", "--output", "json", "--as", "auditor")
    assert code == 0 and sorted(r["id"] for r in json.loads(out)["items"]) == want


def test_search_json_filters_and_refusals(personas, kafka_cluster):
    _events(kafka_cluster)
    code, out = run("search", "--action", "topic", "--limit", "2", "--output", "json", "--as", "auditor")
    data = json.loads(out)
    assert code == 0 and [r["actor"] for r in data["items"]] == ["bob", "alice2 [token 0f0f0f0f0f0f 'x']"]
    assert data["older_than"] == data["items"][-1]["id"] and data["items"][0]["targets"] == ["topic:t"]
    code, out = run("search", "--since", "2026-01-02", "--until", "2026-01-01", "--as", "auditor")
    assert code == 2 and "until" in out
    code, out = run("search", "--as", "viewer")
    assert code == 3 and "audit.view" in out
    code, out = run("search", "--as", "nobody")
    assert code == 6


def test_export_is_the_pages_export_and_is_audited(personas, kafka_cluster):
    _events(kafka_cluster)
    code, out = run("export", "--actor", "bob", "--as", "auditor")
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [r["actor_name"] for r in lines] == ["bob"]
    last = AuditEvent.objects.order_by("-id").first()
    assert (last.action, last.actor_name, last.params["filter"]) == (
        "audit.export",
        "auditor",
        {"actor": "bob"},
    )
    code, out = run("export", "--output", "csv", "--as", "auditor")
    assert code == 0 and out.splitlines()[0].split(",")[:3] == list(audit_export.EXPORT_FIELDS[:3])
    code, out = run("export", "--as", "operator")
    assert code == 3
    refused = AuditEvent.objects.order_by("-id").first()
    assert (refused.action, refused.outcome, refused.actor_name) == ("audit.export", "refused", "operator")


def test_verify_reports_an_intact_then_a_broken_chain(personas, kafka_cluster):
    ids = _events(kafka_cluster)
    code, out = run("verify", "--output", "json", "--as", "auditor")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True and data["verified_up_to"] == max(ids.values())
    with connection.cursor() as cursor:  # tamper, as test_audit.py does (the model refuses updates)
        cursor.execute("UPDATE console_auditevent SET action = 'topic.delete' WHERE id = %s", [ids["bob"]])
    code, out = run("verify", "--as", "auditor")
    assert code == 1 and f"BROKEN at event {ids['bob']}" in out
    code, out = run("verify", "--anchor", "/nonexistent/anchor", "--as", "auditor")
    assert code == 2
