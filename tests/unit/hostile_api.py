"""The hostile-input harness of the REST API: which routes take a body, and what to send them.

The routes come from the URL resolver (every route of the ``api`` namespace and every method its
view answers besides GET, HEAD and OPTIONS), the fields from the generated OpenAPI schema (every
property of a request body, nested objects and list items included) merged with the valid body of
the route's row in tests/unit/api_rows.py (which also reaches free-form members such as a plan).
Nothing here is a hand list of routes or fields, so a new route or field is covered on its own;
a route that takes a body without a row to build a valid one fails the coverage test.

``cases(body)`` is every hostile request of one route: body-level junk (nested past any limit, over
DATA_UPLOAD_MAX_MEMORY_SIZE, not JSON, the wrong content type, JSON that is not an object) and,
field by field, every junk value in place of the field, the field left out, and an extra field.
``problem(response)`` says what is wrong with an answer: a status of 500 or more, a body that is
not JSON, or an error body not in the API's shape.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver

from console.uploads import MAX_DEPTH

SAFE = {"GET", "HEAD", "OPTIONS"}
JSON = "application/json"


# -- the routes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BodyRoute:
    name: str  # the route's name in the ``api`` namespace
    method: str  # lower case, as in api_rows
    path: str  # as the OpenAPI schema writes it: /api/v1/clusters/{name}/topics/

    @property
    def id(self) -> str:
        return f"{self.name}-{self.method}"


def _methods(callback) -> set[str]:
    cls = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if cls is None:
        return set()
    return {m.upper() for m in cls.http_method_names if hasattr(cls, m)} - SAFE


def body_routes() -> list[BodyRoute]:
    """Every (route, method) of the API namespace whose method may carry a body, from the resolver."""
    found: list[BodyRoute] = []
    for p in get_resolver().url_patterns:
        if isinstance(p, URLResolver) and p.namespace == "api":
            prefix = "/" + str(p.pattern)
            for q in p.url_patterns:
                if isinstance(q, URLPattern) and q.name:
                    path = prefix + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(q.pattern))
                    for method in sorted(_methods(q.callback)):
                        found.append(BodyRoute(q.name, method.lower(), path))
    return sorted(found, key=lambda r: r.id)


@functools.cache
def schema() -> dict:
    """The OpenAPI document drf-spectacular generates for the API (as /api/schema/ serves it)."""
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def body_schema(route: BodyRoute) -> dict | None:
    """The JSON request body's schema of the route's operation (None when it documents none)."""
    operation = schema()["paths"].get(route.path, {}).get(route.method)
    assert operation is not None, f"{route.path} {route.method.upper()} is not in the OpenAPI schema"
    content = (operation.get("requestBody") or {}).get("content") or {}
    return _resolve(content[JSON]["schema"]) if JSON in content else None


def _resolve(node: dict) -> dict:
    """A schema node with its $ref (and a single allOf / oneOf member, as enums are written) followed."""
    while True:
        if "$ref" in node:
            node = schema()["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
        elif len(node.get("allOf", ())) == 1:
            node = node["allOf"][0]
        else:
            return node


# -- the fields ------------------------------------------------------------------------------------

Path = tuple[str | int, ...]


def schema_paths(node: dict | None, at: Path = ()) -> Iterator[Path]:
    """Every field the schema describes: object properties, list items (index 0), map values."""
    if node is None:
        return
    node = _resolve(node)
    for key, child in (node.get("properties") or {}).items():
        yield (*at, key)
        yield from schema_paths(child, (*at, key))
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and extra:
        yield (*at, "k")
        yield from schema_paths(extra, (*at, "k"))
    if node.get("type") == "array" and isinstance(node.get("items"), dict):
        yield (*at, 0)
        yield from schema_paths(node["items"], (*at, 0))


def body_paths(value: object, at: Path = ()) -> Iterator[Path]:
    """Every member of a valid body (first item of each list), free-form members included."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*at, key)
            yield from body_paths(child, (*at, key))
    elif isinstance(value, list) and value:
        yield (*at, 0)
        yield from body_paths(value[0], (*at, 0))


def fields(route: BodyRoute, body: dict) -> list[Path]:
    """The schema's fields and the valid body's, in the order met (no repeats)."""
    return list(dict.fromkeys([*schema_paths(body_schema(route)), *body_paths(body)]))


def put(body: dict, path: Path, value: object) -> dict:
    """A copy of the body with the member at path set to value (containers made on the way)."""
    out = copy.deepcopy(body)
    node: list | dict = out
    for i, step in enumerate(path):
        if i == len(path) - 1:
            child = value
        else:
            current = (node[0] if node else None) if isinstance(node, list) else node.get(step)
            kind = list if isinstance(path[i + 1], int) else dict
            child = current if isinstance(current, kind) else kind()
        if isinstance(node, list):
            node[:1] = [child]  # a list's member is its first item (made when the list is empty)
        else:
            node[step] = child
        node = child
    return out


def drop(body: dict, path: Path) -> dict | None:
    """A copy of the body without the member at path (None when the body has no such member)."""
    out = copy.deepcopy(body)
    node: object = out
    for step in path[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    if isinstance(node, dict) and path[-1] in node:
        del node[path[-1]]
        return out
    if isinstance(node, list) and node and path[-1] == 0:
        node.pop(0)
        return out
    return None


# -- the junk --------------------------------------------------------------------------------------


def nested(levels: int, leaf: object = 1) -> object:
    value = leaf
    for i in range(levels):
        value = [value] if i % 2 else {"a": value}
    return value


# What goes in place of each field: every JSON type, and values that trip converters and databases.
VALUES: list[object] = [
    None,
    "",
    " ",
    "x" * 20_000,
    "12",
    "-1",
    "NaN",
    "Infinity",
    "1e999",
    "0x10",
    "true",
    "\x00",
    "\ud800",  # a lone surrogate (json.dumps writes the \\ud800 escape)
    "é<script>alert(1)</script>💥",
    "../../etc/passwd",
    "%s%n{0}",
    -1,
    0,
    2**31,
    2**63,
    2**70,
    -(2**70),
    10**4000,  # 4,001 digits: Python reads it (its limit is 4,300)
    1.5,
    -0.0,
    1e308,
    True,
    False,
    [],
    {},
    [None],
    ["a", 1, {"b": None}],
    {"a": {"b": [1]}},
    nested(MAX_DEPTH - 6),  # deep, but inside the parser's limit: the view gets it
]


def _deep_text(levels: int) -> str:
    return "[" * levels + "]" * levels


DEEP = 100_000  # far past Python's recursion limit and any parser's nesting limit


@functools.cache
def oversize() -> bytes:
    """A well-formed JSON object one byte over DATA_UPLOAD_MAX_MEMORY_SIZE."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    head, tail = b'{"name": "', b'"}'
    return head + b"x" * (limit + 1 - len(head) - len(tail)) + tail


@dataclass(frozen=True)
class Case:
    """One hostile request: its label, its body made from the route's valid body, its headers."""

    label: str
    make: Callable[[dict], bytes]
    content_type: str = JSON
    headers: tuple[tuple[str, str], ...] = ()
    expect: int | None = None  # the status a route that reads its body must answer (None: any below 500)


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def _with_member(body: dict, key: str, raw: bytes) -> bytes:
    """The body's JSON with one more member whose value is the raw text (maybe not JSON at all)."""
    head = _json(body)[:-1]
    return head + (b", " if body else b"") + _json(key) + b": " + raw + b"}"


def _const(data: bytes) -> Callable[[dict], bytes]:
    return lambda body: data


def body_cases() -> Iterator[Case]:
    """Junk as a whole body: deep, oversize, not JSON, not an object, the wrong content type."""
    deep = _deep_text(DEEP).encode()
    for label, make in (
        ("deep arrays", _const(deep)),
        ("deep objects", _const(('{"a":' * DEEP + "1" + "}" * DEEP).encode())),
        ("deep mixed", _const(('{"a":[' * (DEEP // 2) + "]}" * (DEEP // 2)).encode())),
        ("deep unclosed", _const(("[" * DEEP).encode())),
        ("one level past the limit", _const(_deep_text(MAX_DEPTH + 1).encode())),
        ("deep member", lambda body: _with_member(body, "deep", deep)),
    ):
        yield Case(label, make, expect=400)
    yield Case("deep, with a key", _const(deep), headers=(("HTTP_IDEMPOTENCY_KEY", "deep"),), expect=400)
    yield Case("deep text in a string", lambda body: _json({**body, "x": _deep_text(DEEP)}))
    yield Case("oversize", lambda body: oversize(), expect=413)
    yield Case(
        "oversize, with a key",
        lambda body: oversize(),
        headers=(("HTTP_IDEMPOTENCY_KEY", "big"),),
        expect=413,
    )
    for label, text in (
        ("blank", b"  \n"),
        ("not json", b"hello"),
        ("unterminated", b'{"name": '),
        ("two commas", b'{"a": 1,,}'),
        ("NaN literal", b'{"x": NaN}'),
        ("Infinity literal", b'{"x": -Infinity}'),
        ("5000 digits", b'{"x": ' + b"9" * 5000 + b"}"),
        ("latin-1 bytes", b'{"name": "\xff\xfe"}'),
        ("lone surrogate escape", b'{"name": "\\ud800"}'),
        ("single quotes", b"{'name': 'x'}"),
        ("array", b"[]"),
        ("string", b'"text"'),
        ("null", b"null"),
        ("number", b"12"),
        ("true", b"true"),
    ):
        yield Case(label, _const(text), expect=400)
    yield Case("trailing text", lambda body: _json(body) + b" trailing", expect=400)
    yield Case("a BOM", lambda body: "\ufeff".encode() + _json(body), expect=400)
    yield Case("empty", _const(b""))
    yield Case("empty object", _const(b"{}"))
    yield Case("duplicate keys", lambda body: _with_member(body, next(iter(body), "a"), b"null"))
    for content_type in (
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=xyz",
        "application/xml",
        "application/vnd.api+json",
        "application/octet-stream",
        "",
    ):
        yield Case(f"content type {content_type!r}", _json, content_type, expect=415)
    for charset in ("utf-16", "rot13", "zlib", "base64"):  # not UTF-16 text; not text encodings at all
        yield Case(f"charset {charset}", _json, f"{JSON}; charset={charset}", expect=400)
    yield Case("an unknown charset", _json, f"{JSON}; charset=bogus")  # ignored: read as UTF-8


def field_cases(route: BodyRoute, body: dict) -> Iterator[Case]:
    """Field by field: each junk value in its place, the field left out; then extra fields."""
    for path in fields(route, body):
        where = ".".join(map(str, path))
        for value in VALUES:
            yield Case(f"{where}={value!r:.30}", functools.partial(_put_json, path=path, value=value))
        if drop(body, path) is not None:
            yield Case(f"{where} left out", lambda b, path=path: _json(drop(b, path) or b))
    yield Case("extra field", lambda b: _json({**b, "unexpected": "field"}))
    for path in body_paths(body):
        if isinstance(_get(body, path), dict):
            yield Case(
                f"extra field in {'.'.join(map(str, path))}",
                functools.partial(_put_json, path=(*path, "unexpected"), value=1),
            )


def cases(route: BodyRoute, body: dict) -> list[Case]:
    """Every hostile request of the route, made from its valid body (made again after an accepted one)."""
    return [*body_cases(), *field_cases(route, body)]


def _put_json(body: dict, *, path: Path, value: object) -> bytes:
    return _json(put(body, path, value))


def _get(body: dict, path: Path) -> object:
    node: object = body
    for step in path:
        node = node[step]
    return node


# -- the answers -----------------------------------------------------------------------------------


def problem(response) -> str | None:
    """What is wrong with an answer of the API (None: nothing)."""
    status = response.status_code
    if getattr(response, "streaming", False):  # an export: its rows are written while it streams
        content = b"".join(response.streaming_content)
        return None if status < 400 else f"status {status}, streamed: {content[:200]!r}"
    if status >= 500:
        return f"status {status}: {response.content[:300]!r}"
    if status == 204:
        return None
    if status < 400 and response.get("Content-Disposition", "").startswith("attachment"):
        return None  # a file the endpoint declares (an ACL export's YAML or script)
    if not response.get("Content-Type", "").startswith(JSON):
        return f"status {status}, not JSON ({response.get('Content-Type')}): {response.content[:200]!r}"
    try:
        answer = json.loads(response.content)
    except ValueError:
        return f"status {status}, a body that does not parse: {response.content[:200]!r}"
    if status < 400:
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    if not (
        isinstance(error, dict)
        and error.get("status") == status
        and isinstance(error.get("code"), str)
        and error["code"]
        and isinstance(error.get("message"), str)
    ):
        return f"status {status}, not the API's error shape: {response.content[:300]!r}"
    return None
