"""The OpenAPI schema lists every status the API answers: the codes the API tests observed in this
session (tests/api_codes.py records them) are each in the schema's responses of their operation."""

from __future__ import annotations

import functools

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests.api_codes import OBSERVED, undeclared


@functools.cache
def _schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


SCHEMA = {
    "paths": {
        "/api/v1/clusters/{name}/topics/": {
            "get": {"responses": {"200": {}, "404": {}}},
            "post": {"responses": {"201": {}, "202": {}, "409": {}}},
        }
    }
}
TOPICS = "/api/v1/clusters/{name}/topics/"


def test_api_schema_codes_finds_a_status_the_schema_does_not_list():
    observed = {(TOPICS, "POST"): {201: "t::a", 409: "t::b", 503: "t::c"}, (TOPICS, "GET"): {200: "t::d"}}
    assert undeclared(observed, SCHEMA) == [
        f"POST {TOPICS}: 503 not in the schema's [201, 202, 409] (seen in t::c)"
    ]


def test_api_schema_codes_allows_only_refusals_for_a_method_the_path_does_not_document():
    observed = {(TOPICS, "DELETE"): {405: "t::a", 401: "t::b", 204: "t::c"}}
    assert undeclared(observed, SCHEMA) == [
        f"DELETE {TOPICS}: 204 not in the schema's [401, 403, 405, 429] (seen in t::c)"
    ]


def test_api_schema_codes_finds_a_path_the_schema_lacks():
    observed = {("/api/v1/nowhere/", "GET"): {200: "t::a"}}
    assert undeclared(observed, SCHEMA) == [
        "GET /api/v1/nowhere/: 200 (no such path in the schema; seen in t::a)"
    ]


def test_api_schema_codes_of_the_real_schema_list_what_the_api_answers_to_errors():
    """Every operation lists the answers any request can get (no token, a body too large, Kafka down)."""
    missing = [
        f"{method.upper()} {path}: {code}"
        for path, item in _schema()["paths"].items()
        for method, operation in item.items()
        for code in ("400", "401", "403", "404", "429", "500", "503")
        + (("409", "413", "415") if method != "get" else ())
        if code not in operation["responses"]
    ]
    assert not missing, "\n".join(missing)


@pytest.mark.django_db
def test_api_schema_codes_observed():
    """Runs after every other test of the session (tests/api_codes.py): what they saw, the schema lists."""
    if not OBSERVED:
        pytest.fail(
            "No API answer was recorded in this session: run this test together with the API tests "
            "(e.g. pytest tests/unit/test_api_*.py tests/api), or in the whole suite."
        )
    problems = undeclared(OBSERVED, _schema())
    assert not problems, "The schema does not list:\n" + "\n".join(problems)
