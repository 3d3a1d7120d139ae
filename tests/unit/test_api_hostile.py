"""Hostile input to every API route: junk bodies, every field of a valid body replaced by junk, junk query
strings. Never a 500, always a JSON error body, and a refused request (4xx) changes nothing in Kafka."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.api import tokens
from tests.unit.api_rows import ROWS, ApiRow
from tests.unit.matrix_world import World, cluster_admin, kafka_restored, kafka_state
from tests.unit.test_no_server_errors import JUNK

pytestmark = pytest.mark.django_db

VALUES = [
    None,
    "",
    "x" * 20_000,
    -1,
    2**70,
    1.5,
    True,
    [],
    {},
    ["a", {"b": None}],
    "\x00\ud800💥",
    "../../etc",
]
BODIES = ['{"unterminated": ', "[]", '"text"', "null", "12", "{}", '{"a": ' * 200 + "1" + "}" * 200]


@pytest.fixture
def world(personas, kafka_cluster, frozen, tmp_path, monkeypatch):
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    people = {**personas, "clusteradmin": cluster_admin(kafka_cluster)}
    with kafka_restored(frozen):
        yield World(sandbox=frozen, cluster=kafka_cluster, people=people, lake=tmp_path / "lake")


def _url(row: ApiRow, w: World, kwargs: dict) -> str:
    return reverse(
        f"api:{row.route}", kwargs=kwargs if row.cluster_less else {"name": w.cluster.name, **kwargs}
    )


def _check(response, where: str) -> None:
    assert response.status_code < 500, (where, response.status_code, response.content[:400])
    if response.status_code >= 400:
        assert response.json()["error"]["status"] == response.status_code, where


def _variants(body: dict):
    for key in body:
        for value in VALUES:
            yield f"{key}={value!r:.40}", {**body, key: value}
    yield "extra", {**body, "unexpected": "field"}


MUTATING = [pytest.param(r, id=r.id) for r in ROWS if r.mutating]


@pytest.mark.parametrize("row", MUTATING)
def test_no_api_post_answers_junk_with_a_500_or_changes_anything(client, world, row: ApiRow):
    auth = {
        "HTTP_AUTHORIZATION": "Bearer "
        + tokens.create_token(actor=world.people["admin"], name="h", scope="write", days=1).secret
    }
    kwargs, body = row.build(world)
    url = _url(row, world, kwargs)
    for text in BODIES:
        before = kafka_state(world.sandbox)
        response = client.generic("POST", url, text, content_type="application/json", **auth)
        _check(response, f"{url} {text[:40]}")
        if response.status_code >= 400:
            assert kafka_state(world.sandbox) == before, f"{url} {text[:40]} changed Kafka"
    for label, junk in _variants(body):
        before = kafka_state(world.sandbox)
        response = client.post(url, junk, content_type="application/json", **auth)
        _check(response, f"{url} {label}")
        if response.status_code >= 400:
            assert kafka_state(world.sandbox) == before, f"{url} {label} changed Kafka"
    for bad in ("no-such-topic", "-", "%00", "x" * 300):
        if "topic" in kwargs or "group" in kwargs:
            key = "topic" if "topic" in kwargs else "group"
            response = client.post(
                _url(row, world, {**kwargs, key: bad}), body, content_type="application/json", **auth
            )
            _check(response, f"{row.route} {key}={bad[:20]}")


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
        _check(client.get(url + junk, **auth), url + junk[:60])
