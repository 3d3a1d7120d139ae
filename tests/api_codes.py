"""The status codes the API answered during this test session, per route and method (a pytest plugin,
loaded by tests/conftest.py), so tests/unit/test_api_schema_codes.py can hold them against the OpenAPI
schema: a generated client must never meet a status the schema does not list.

Every answer Django's handler gives (test client or live server, the same process) to a path under
/api/v1/ is recorded as (the route as the schema writes it, the method, the status): one dict update
per request. The check runs last in the session (``pytest_collection_modifyitems`` moves it there) and
fails when nothing was recorded, so it can never pass without the API tests having run.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
from django.conf import settings
from django.core.handlers.base import BaseHandler
from django.urls import Resolver404, resolve

PREFIX = "/api/v1/"
CHECK = "test_api_schema_codes_observed"  # the check's name: it runs after every other test

#: {(schema path, METHOD): {status: the first test that saw it}}
OBSERVED: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
_current = {"test": "", "urlconf": ""}


def schema_path(route: str) -> str:
    """A Django route (``api/v1/clusters/<slug:name>/``) as the OpenAPI schema writes its path."""
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def record(request, response) -> None:
    path = request.path_info
    if not path.startswith(PREFIX) or settings.ROOT_URLCONF != _current["urlconf"]:
        return  # not the API, or a test's own route table (tests/toy_area): not what the schema describes
    try:
        match = resolve(path)
    except Resolver404:
        return  # no endpoint there (the API's JSON 404): nothing for the schema to list
    key = (schema_path(match.route), "GET" if request.method == "HEAD" else request.method)
    OBSERVED[key].setdefault(response.status_code, _current["test"])


@pytest.fixture(scope="session", autouse=True)
def _record_api_answers():
    original = BaseHandler.get_response
    _current["urlconf"] = settings.ROOT_URLCONF

    def get_response(self, request):
        response = original(self, request)
        record(request, response)
        return response

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BaseHandler, "get_response", get_response)
        yield OBSERVED


def pytest_runtest_logstart(nodeid: str, location) -> None:
    _current["test"] = nodeid


#: A method the endpoint does not have may still be answered: refused (405), or the caller refused first.
REFUSING = frozenset({401, 403, 405, 429})


def undeclared(observed: dict[tuple[str, str], dict[int, str]], schema: dict) -> list[str]:
    """Each observed answer the schema does not list: for a documented operation, a status missing from
    its ``responses``; for a method the path does not document, any status but a refusal; a path
    the schema lacks altogether. One line each, naming the first test that saw it."""
    paths = schema.get("paths", {})
    problems = []
    for (path, method), statuses in sorted(observed.items()):
        if path not in paths:
            problems += [
                f"{method} {path}: {s} (no such path in the schema; seen in {t})" for s, t in statuses.items()
            ]
            continue
        operation = paths[path].get(method.lower())
        if operation is None:
            listed = REFUSING
        else:
            listed = {int(code) for code in operation.get("responses", {}) if code.isdigit()}
        problems += [
            f"{method} {path}: {s} not in the schema's {sorted(listed)} (seen in {t})"
            for s, t in sorted(statuses.items())
            if s not in listed
        ]
    return problems


def pytest_sessionfinish(session) -> None:
    """What was seen, kept for a look (var/api-status-codes.json; CI keeps var/ as artifacts)."""
    if OBSERVED:
        out = Path(str(session.config.rootpath)) / "var" / "api-status-codes.json"
        out.parent.mkdir(exist_ok=True)
        rows = [{"path": p, "method": m, "statuses": s} for (p, m), s in sorted(OBSERVED.items())]
        out.write_text(json.dumps(rows, indent=1))


def pytest_collection_modifyitems(items) -> None:
    """The check goes last: it reads what every test before it recorded."""
    items.sort(key=lambda item: item.name.startswith(CHECK))
