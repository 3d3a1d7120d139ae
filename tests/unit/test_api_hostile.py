"""Hostile input to every API route: junk bodies, every field of a valid body replaced by junk, junk query
strings. Never a 500, always a JSON error body, and a refused request (4xx) changes nothing in Kafka."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from console.identity import tokens
from console.models import Cluster, Role, RoleBinding
from tests.unit.api_rows import ROWS, ApiRow
from tests.unit.hostile_api import (
    BodyRoute,
    body_routes,
    body_schema,
    cases,
    field_cases,
    problem,
    schema,
)
from tests.unit.matrix_world import World, cluster_admin, kafka_restored, kafka_state, uniq
from tests.unit.test_no_server_errors import JUNK

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(personas, kafka_cluster, frozen, tmp_path, monkeypatch):
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    people = {**personas, "clusteradmin": cluster_admin(kafka_cluster)}
    with kafka_restored(frozen):  # SCRAM credentials too: the SCRAM routes' accepted cases add users
        yield World(sandbox=frozen, cluster=kafka_cluster, people=people, lake=tmp_path / "lake")


def _url(row: ApiRow, w: World, kwargs: dict) -> str:
    return reverse(
        f"api:{row.route}", kwargs=kwargs if row.cluster_less else {"name": w.cluster.name, **kwargs}
    )


BODY_ROUTES = body_routes()  # from the URL resolver: every API route and method that takes a body


def _row(route: BodyRoute) -> ApiRow | None:
    """The route's first row in api_rows (its valid request)."""
    return next((r for r in ROWS if (r.route, r.method) == (route.name, route.method)), None)


def test_it_covers_every_api_route_and_method_that_takes_a_body():
    documented = {
        (path, method)
        for path, item in schema()["paths"].items()
        for method in item
        if method.upper() in {"POST", "PUT", "PATCH", "DELETE"}
    }
    assert documented == {(r.path, r.method) for r in BODY_ROUTES}, "the resolver and the schema differ"
    assert len(BODY_ROUTES) >= 39
    assert not [r.id for r in BODY_ROUTES if _row(r) is None], "routes with a body but no valid row"
    assert sum(body_schema(r) is not None for r in BODY_ROUTES) >= 29


@pytest.mark.parametrize("route", [pytest.param(r, id=r.id) for r in BODY_ROUTES])
def test_it_answers_every_hostile_body_below_500_in_json_and_a_refusal_changes_nothing(
    world, route: BodyRoute
):
    """As an admin (the request reaches the view): junk bodies, every field of a valid body
    replaced by junk or left out, extra fields, junk in the URL's names."""
    row = _row(route)
    problems = _hammer(world, route, row, row.build, lambda body: cases(route, body))
    assert not problems, f"{len(problems)} bad answers of {route.id}:\n" + "\n".join(problems[:40])


# A valid payload of each request kind (the payload is free-form in the schema: the kind says its shape).
PAYLOADS: dict[str, Callable[[World], dict]] = {
    "topic.create": lambda w: {"name": uniq("team-a.h"), "partitions": 1, "replication_factor": 1, "configs": {}},
    "topic.config": lambda w: {"topic": w.topic(), "changes": [{"name": "retention.ms", "op": "SET", "value": "9"}]},
    "topic.partitions": lambda w: {"topic": w.topic(), "total_count": 2},
    "topic.delete": lambda w: {"topic": w.topic()},
    "acl.create": lambda w: {"binding": w.acl()},
    "group.offsets.reset": lambda w: (
        lambda group, topic: {
            "group": group,
            "reset": {"mode": "to-offset", "scope": "partitions", "topic": topic, "partitions": [0], "value": 1},
        }
    )(*w.group()),
}  # fmt: skip
REQUEST_KINDS = schema()["components"]["schemas"]["RequestInKindEnum"]["enum"]


def test_it_has_a_valid_payload_of_every_request_kind_the_api_takes():
    assert sorted(PAYLOADS) == sorted(REQUEST_KINDS)


@pytest.mark.parametrize("kind", REQUEST_KINDS)
def test_it_answers_every_hostile_request_payload_below_500_in_json(world, kind: str):
    """Every member of each kind's payload replaced by junk or left out, and extra members."""
    route = next(r for r in BODY_ROUTES if (r.name, r.method) == ("requests", "post"))
    row = _row(route)
    problems = _hammer(
        world,
        route,
        row,
        lambda w: ({}, {"kind": kind, "payload": PAYLOADS[kind](w), "reason": "hostile"}),
        lambda body: list(field_cases(route, body)),
    )
    assert not problems, f"{len(problems)} bad answers of {kind}:\n" + "\n".join(problems[:40])


# The routes' other request shapes (a dry run, validate-only, a preview): their fields, junk by junk.
OTHER_SHAPES = [
    pytest.param(row, id=row.id)
    for route in BODY_ROUTES
    for row in ROWS
    if (row.route, row.method) == (route.name, route.method) and row is not _row(route)
]


@pytest.mark.parametrize("row", OTHER_SHAPES)
def test_it_answers_hostile_fields_of_every_other_request_shape_below_500_in_json(world, row: ApiRow):
    route = next(r for r in BODY_ROUTES if (r.name, r.method) == (row.route, row.method))
    problems = _hammer(world, route, row, row.build, lambda body: list(field_cases(route, body)))
    assert not problems, f"{len(problems)} bad answers of {row.id}:\n" + "\n".join(problems[:40])


def _hammer(world: World, route: BodyRoute, row: ApiRow, build, cases_of) -> list[str]:
    """Send every case as the admin; what is wrong with the answers (see hostile_api.problem)."""
    client = Client(raise_request_exception=False)
    secret = tokens.create_token(actor=world.people["admin"], name="h", scope="write", days=1).secret
    auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    kwargs, body = build(world)
    reads_body = body_schema(route) is not None
    problems: list[str] = []
    now = None  # Kafka as the last refused case left it (unchanged): this case's "before"
    for case in cases_of(body):
        url = _url(row, world, kwargs)
        before, now = (now if now is not None else kafka_state(world.sandbox)), None
        response = client.generic(
            route.method.upper(),
            url,
            case.make(body),
            content_type=case.content_type,
            **auth,
            **dict(case.headers),
        )
        found = problem(response)
        if found:
            problems.append(f"{case.label}: {found}")
        elif reads_body and case.expect and response.status_code != case.expect:
            problems.append(f"{case.label}: status {response.status_code}, not {case.expect}")
        if response.status_code >= 400:
            if (after := kafka_state(world.sandbox)) != before:
                problems.append(f"{case.label}: refused ({response.status_code}) but Kafka changed")
            else:
                now = after  # nothing runs on Kafka between two cases: one walk of the sandbox a case
        if response.status_code < 400:  # accepted: the next case gets fresh objects to act on
            kwargs, body = _rebuilt(build, world, kwargs, body)
    for key in ("topic", "group"):
        for bad in ("no-such-thing", "-", "%00", "x" * 300, "é<b>"):
            if key in kwargs:
                response = client.post(
                    _url(row, world, {**kwargs, key: bad}), body, content_type="application/json", **auth
                )
                if found := problem(response):
                    problems.append(f"{key}={bad[:20]}: {found}")
    return problems


def _rebuilt(build, world: World, kwargs: dict, body: dict) -> tuple[dict, dict]:
    """The request made again, after what the accepted case removed is put back."""
    _put_back(world)
    try:
        with transaction.atomic():
            return build(world)
    except IntegrityError:  # made once only (the controllers' cluster), and still there
        return kwargs, body


def _put_back(world: World) -> None:
    """What an accepted case removed and the next case's row needs: the cluster, the viewer's binding."""
    if not Cluster.objects.filter(pk=world.cluster.pk).exists():
        world.cluster.save(force_insert=True)
    RoleBinding.objects.get_or_create(cluster=world.cluster, user=world.people["viewer"], role=Role.VIEWER)


READS = [pytest.param(r, id=r.id) for r in ROWS if not r.mutating]


@pytest.mark.parametrize("row", READS)
def test_no_api_read_answers_junk_queries_with_a_500(client, world, row: ApiRow):
    auth = {
        "HTTP_AUTHORIZATION": "Bearer "
        + tokens.create_token(actor=world.people["admin"], name="h", scope="read", days=1).secret
    }
    kwargs, _query = row.build(world)
    url = _url(row, world, kwargs)
    for junk in [
        *JUNK,
        "?per_page=0&page=0",
        "?regex=1&q=%28%28",
        "?sort=partitions&desc=maybe",
        "?format=xml",
    ]:
        found = problem(client.get(url + junk, **auth))
        assert found is None, (url + junk[:60], found)
