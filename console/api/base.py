"""What every API view shares: the bounded JSON body parser, the cluster getter (as the pages'), the
validated body and query, the OpenAPI entry of an endpoint (``reads``/``writes``, with the error answers
every endpoint shares), paging, plain JSON of area results."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Mapping, Sequence
from enum import Enum

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.views import APIView

from console import access, uploads
from console.api.auth import client_ip
from console.api.errors import kafka_error
from console.api.idempotency import idempotent
from console.api.serializers import ErrorBody, HeldOut
from console.clusters import capabilities, lookup
from console.kafka import KafkaOperationError
from console.models import Cluster


class JsonBody(JSONParser):
    """A request body: strict JSON read by the console's one bounded reader (console.uploads), never by
    a parser that recurses as deep as the text is nested (json.load reached Python's recursion limit
    on ``[[[…``: a 500). At most DATA_UPLOAD_MAX_MEMORY_SIZE bytes (413, as Django's own check of the
    body's length), nesting pre-scanned to ``uploads.MAX_DEPTH`` levels, no NaN or Infinity, no lone
    surrogate, text in the request's charset (a charset that is no text encoding is refused): 400."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        try:
            text = stream.read().decode(encoding)
        except (LookupError, UnicodeError) as exc:  # bytes.decode refuses codecs that are not text
            raise ParseError(f"The body is not {encoding} text: {str(exc)[:200]}") from None
        try:
            return uploads.load_json(text, limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE, allow_nan=False)
        except uploads.UploadError as exc:
            if exc.kind == "size":
                raise RequestDataTooBig(exc.message) from None  # 413, as console.api.errors answers it
            raise ParseError(f"JSON parse error - {exc}") from None


class ApiView(APIView):
    """An API view: JSON in and out, errors as console.api.errors shapes them."""

    parser_classes = [JsonBody]

    def cluster(self, name: str, perm: str = access.VIEW, *, needs: str = "") -> Cluster:
        """404 when the caller cannot see the cluster, 403 when they see it but lack perm (as the pages);
        400 with the reason when the connection does not offer ``needs`` (a capability, KIP-919)."""
        cluster = lookup.cluster_for(self.request.user, name, perm)
        reason = capabilities.unavailable_reason(cluster, needs) if needs else None
        if reason:
            raise ValidationError([reason])
        return cluster

    def body(self, shape: type[serializers.Serializer]) -> dict:
        """The JSON body as ``shape`` validates it (400 with the fields' errors otherwise)."""
        return _validated(shape, self.request.data)

    @property
    def ip(self) -> str | None:
        return client_ip(self.request)


# What any request may be answered (docs/api.md): invalid input (400), no or a bad token (401), not allowed
# (403), not found (404), an area's refusal (422), too many bad tokens (429), a bug (500, logged; still
# JSON), Kafka failed (502) or could not be asked, or the audit trail could not be written (503).
ERRORS = dict.fromkeys((400, 401, 403, 404, 422, 429, 500, 502, 503), ErrorBody)
# A POST also: a conflict (409: Kafka's, a change window closed, the same Idempotency-Key still running),
# a body over DATA_UPLOAD_MAX_MEMORY_SIZE (413), a body that is no JSON (415).
WRITE_ERRORS = {**ERRORS, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody}
# An action change control may hold (console/api/held.py): submitted for review (202), or run now with
# ``break_glass`` (200, 207 when it failed).
HELD = {202: HeldOut, 207: HeldOut}


def _answers(answers: int | tuple[int, ...] | dict, errors: dict) -> dict:
    if isinstance(answers, int | tuple):
        answers = dict.fromkeys(answers if isinstance(answers, tuple) else (answers,), OpenApiTypes.OBJECT)
    return {**answers, **{code: shape for code, shape in errors.items() if code not in answers}}


def reads(operation_id: str, answers: int | tuple[int, ...] | dict = 200, **schema):
    """A GET's OpenAPI entry: its answers (statuses with any JSON object, or {status: shape}) and the
    error answers every endpoint shares; ``schema``: more of extend_schema (parameters)."""
    return extend_schema(operation_id=operation_id, responses=_answers(answers, ERRORS), **schema)


def writes(
    operation_id: str,
    answers: int | tuple[int, ...] | dict = 200,
    *,
    request=None,
    held: bool = False,
    **schema,
):
    """A POST: documented as ``reads`` with its ``request`` body (None: no body) and a POST's own errors,
    and idempotent (the Idempotency-Key header, console.api.idempotency). ``held``: change control may
    hold it (the answers of ``HELD``)."""

    def decorate(post):
        errors = {**HELD, **WRITE_ERRORS} if held else WRITE_ERRORS
        entry = extend_schema(
            operation_id=operation_id, request=request, responses=_answers(answers, errors), **schema
        )
        return entry(idempotent(post))

    return decorate


def form_data(form) -> dict:
    """The page's own form validates the API's input too: same rules, same messages."""
    if not form.is_valid():
        raise ValidationError(
            [f"{k}: {' '.join(v)}" if k != "__all__" else " ".join(v) for k, v in form.errors.items()]
        )
    return form.cleaned_data


class PageQuery(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, default=1)
    per_page = serializers.IntegerField(min_value=1, required=False)

    def validate_per_page(self, value: int) -> int:
        return min(value, settings.API_MAX_PAGE_SIZE)


def _validated(shape: type[serializers.Serializer], data) -> dict:
    s = shape(data=data)
    s.is_valid(raise_exception=True)
    return s.validated_data


def query(shape: type[serializers.Serializer], request) -> dict:
    """The query string validated by a serializer (400 with the fields' errors otherwise)."""
    return _validated(shape, request.query_params)


def page_json(page, results: list, **more) -> dict:
    """One page of a list the area pages itself (topics, groups, ACLs), as every list answers:
    ``{count, page, pages[, per_page], …more, results}``."""
    body = {"count": page.total, "page": page.page, "pages": page.pages}
    if hasattr(page, "per_page"):
        body["per_page"] = page.per_page
    return {**body, **more, "results": results}


def paged(items: Sequence, request, to_json=None) -> dict:
    """A list the area does not page itself, as one page: ``{count, page, pages, per_page, results}``."""
    q = query(PageQuery, request)
    per_page = q.get("per_page") or settings.API_PAGE_SIZE
    page = q["page"]
    chunk = items[(page - 1) * per_page : page * per_page]
    return {
        "count": len(items),
        "page": page,
        "pages": max(1, math.ceil(len(items) / per_page)),
        "per_page": per_page,
        "results": [to_json(i) for i in chunk] if to_json else [plain(i) for i in chunk],
    }


def plain(value):
    """An area's result (dataclasses, named tuples, Kafka errors, dates) as JSON-ready data."""
    if isinstance(value, KafkaOperationError):
        return kafka_error(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, Mapping):
        return {_key(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _key(k) -> str:
    if isinstance(k, tuple):
        return "-".join(str(x) for x in k)
    return str(k)
