"""Every API route × every role, with a token of that role, on two clusters (each on its own sandbox).

Allowed roles get the route's status and (for a mutating route) a real change; refused ones get 401
(no token), 403 (a role without the permission, audited once as "refused") or 404 (no role on the
cluster), and nothing changes: no console row, no Kafka change on either cluster, nothing queued,
no lake file. A read-only token of a superuser is refused every mutating route the same way.
"""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from console.clusters.actions import gateway_for
from console.identity import tokens
from console.models import ApiToken, Cluster
from sandbox.testing import running_sandbox
from tests.conftest import DISPATCHED
from tests.unit.api_rows import ANON, NOT_ROUTES, ROWS, ApiRow
from tests.unit.matrix_world import (
    ROLES,
    World,
    bind,
    cluster_admin,
    db_state,
    kafka_restored,
    kafka_state,
    refusals,
)

pytestmark = pytest.mark.django_db
B = "api-b"


@pytest.fixture(scope="module")
def b_sandbox():
    with running_sandbox(brokers=3, controllers=3, speed=0, seed="api-b") as sb:  # 3: a voter to remove
        yield sb
        gateway_for(Cluster(name=B, bootstrap_servers=sb.bootstrap_servers, request_timeout_s=5)).close()


@pytest.fixture
def worlds(personas, kafka_cluster, frozen, b_sandbox, tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(lake))
    people = {**personas, "clusteradmin": cluster_admin(kafka_cluster)}
    other = Cluster.objects.create(name=B, bootstrap_servers=b_sandbox.bootstrap_servers, request_timeout_s=5)
    bind(other, people)
    with kafka_restored(frozen), kafka_restored(b_sandbox):
        yield {
            "A": World(sandbox=frozen, cluster=kafka_cluster, people=people, lake=lake, other=b_sandbox),
            "B": World(sandbox=b_sandbox, cluster=other, people=people, lake=lake, other=frozen),
        }


def _state(w: World) -> dict:
    lake = sorted(str(p) for p in w.lake.rglob("*")) if w.lake.exists() else []
    return {
        "db": db_state(),
        "kafka": kafka_state(w.sandbox),
        "other": kafka_state(w.other),
        "lake": lake,
        "queued": list(DISPATCHED),
    }


def _changes(before: dict, after: dict) -> list[str]:
    out = [f"db.{t}" for t in before["db"] if before["db"][t] != after["db"][t]]
    return out + [k for k in before if k != "db" and before[k] != after[k]]


def _secret(user, scope: str) -> str:
    new = tokens.create_token(actor=user, name=f"matrix-{scope}", scope=scope, days=1)
    ApiToken.objects.filter(pk=new.token.pk).update(
        last_used_at=timezone.now()
    )  # its first use is not the test
    return new.secret


def _call(client, row: ApiRow, w: World, kwargs: dict, body: dict, secret: str | None):
    if not row.cluster_less:
        kwargs = {"name": w.cluster.name, **kwargs}
    url = reverse(f"api:{row.route}", kwargs=kwargs)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}"} if secret else {}
    if row.method == "get":
        return client.get(url, body, **headers)
    return getattr(client, row.method)(url, body, content_type="application/json", **headers)


CASES = [
    pytest.param(row, role, where, id=f"{row.id}-{role}-{where}")
    for row in ROWS
    for role in ROLES
    for where in ("A", "B")
    if where == "A" or not row.cluster_less
]


@pytest.mark.parametrize(("row", "role", "where"), CASES)
def test_api_matrix(client, worlds, row: ApiRow, role: str, where: str):
    w = worlds[where]
    secret = None if role == ANON else _secret(w.people[role], "write")
    kwargs, body = row.build(w)
    before, refused_before = _state(w), len(refusals())
    response = _call(client, row, w, kwargs, body, secret)
    expected = row.expected(role)
    assert response.status_code == expected, (response.status_code, response.content[:800])
    if expected >= 400:
        assert response.json()["error"]["status"] == expected
    changed = _changes(before, _state(w))
    if row.refused(role):
        assert changed == [], f"a refused request ({response.status_code}) changed {changed}"
        new = refusals()[refused_before:]
        if (row.mutating or row.audits_refusals) and response.status_code == 403:
            assert [who.split(" [token ")[0] for _, who in new] == [role], new
            assert all("[token " in who for _, who in new)
        elif not row.mutating:
            assert new == []
    elif row.mutating and row.changes:
        assert changed, "the allowed request changed nothing: the body is not a real one"
    elif row.mutating:
        assert [c for c in changed if c != "db.console_auditevent"] == []
    else:
        assert [c for c in changed if c in ("kafka", "other", "queued")] == []


MUTATING = [pytest.param(row, id=row.id) for row in ROWS if row.mutating]


@pytest.mark.parametrize("row", MUTATING)
def test_a_read_only_token_of_a_superuser_is_refused_every_change(client, worlds, row: ApiRow):
    w = worlds["A"]
    secret = _secret(w.people["admin"], "read")
    kwargs, body = row.build(w)
    before, refused_before = _state(w), len(refusals())
    response = _call(client, row, w, kwargs, body, secret)
    assert response.status_code == 403 and response.json()["error"]["code"] == "read_only_token"
    assert _changes(before, _state(w)) == []
    assert len(refusals()) == refused_before + 1


def _api_routes() -> set[str]:
    found: set[str] = set()

    def walk(patterns, inside: bool):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, inside or p.namespace == "api")
            elif isinstance(p, URLPattern) and inside:
                found.add(p.name)

    walk(get_resolver().url_patterns, False)
    return found


def _methods(name: str) -> set[str]:
    for p in get_resolver().url_patterns:
        if isinstance(p, URLResolver) and p.namespace == "api":
            for q in p.url_patterns:
                if q.name == name:
                    cls = q.callback.view_class
                    return {m for m in ("get", "post", "put", "patch", "delete") if hasattr(cls, m)}
    return set()


def test_every_api_route_and_method_has_rows():
    routes = _api_routes() - NOT_ROUTES
    assert len(routes) > 35
    have = {(r.route, r.method) for r in ROWS}
    want = {(name, m) for name in routes for m in _methods(name)}
    assert want - have == set(), f"API routes without matrix rows: {sorted(want - have)}"
    assert have - want == set(), f"rows for routes that do not exist: {sorted(have - want)}"
    assert {r.id for r in ROWS} == {r.id for r in set(ROWS)}
    assert set(ROLES) >= {role for r in ROWS for role in r.allowed}
