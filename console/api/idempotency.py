"""``Idempotency-Key`` on POSTs: a retried request does not repeat a change.

The first request with a key stores (user, key, method and path, an HMAC-SHA256 of the canonical
JSON body keyed by the console's SECRET_KEY: a body may carry a password, e.g. a SCRAM credential,
which a plain hash would expose to a dictionary search) and, when it ends, its answer. A retry with the same key and body gets that answer again
(header ``Idempotent-Replayed: true``) without running anything; the same key with another body is
refused with 422; a retry while the first is still running gets 409. Answers of 500 and above are
not kept (nothing is known to have happened, so a retry runs again). Records live
API_IDEMPOTENCY_TTL_S seconds: each new key purges every expired one (created_at is indexed).

The kept answer is encrypted with the console's keys (console/crypto.py), as some carry a secret shown
once (a webhook's signing key): a retry by the same user with the same key and body gets it again (that
is what the key is for: the first answer may never have arrived), and nothing secret lies in the table
in clear. An answer no configured key opens any more (CONSOLE_ENCRYPTION_KEY changed) is answered 409
``idempotency_answer_unreadable``: the request was carried out, its answer is lost.
"""

from __future__ import annotations

import functools
import json
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac
from rest_framework.response import Response

from console import crypto
from console.api.errors import error_response
from console.models import IdempotencyRecord

HEADER = "Idempotency-Key"
KEY_MAX = 255


def body_hash(data) -> str:
    body = json.dumps(data, sort_keys=True, default=str)
    return salted_hmac("console.api.idempotency.body", body, algorithm="sha256").hexdigest()


def _claim(user_id: int, key: str, route: str, digest: str) -> tuple[IdempotencyRecord, bool]:
    cutoff = timezone.now() - timedelta(seconds=settings.API_IDEMPOTENCY_TTL_S)
    IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()  # every expired record, anyone's
    try:
        with transaction.atomic():
            return IdempotencyRecord.objects.create(
                user_id=user_id, key=key, route=route, body_hash=digest
            ), True
    except IntegrityError:
        return IdempotencyRecord.objects.get(user_id=user_id, key=key, route=route), False


def idempotent(handler):
    """Decorate an APIView's ``post``: honour the Idempotency-Key header when it is sent."""

    @functools.wraps(handler)
    def wrapper(view, request, *args, **kwargs):
        key = request.headers.get(HEADER)
        if key is None:
            return handler(view, request, *args, **kwargs)
        if not key or len(key) > KEY_MAX or not key.isprintable():
            return error_response(
                400, "invalid_idempotency_key", f"{HEADER} is 1 to {KEY_MAX} printable characters."
            )
        digest = body_hash(request.data)
        record, first = _claim(request.user.pk, key, f"{request.method} {request.path}"[:300], digest)
        if not first:
            if record.body_hash != digest:
                return error_response(
                    422, "idempotency_key_reused", f"This {HEADER} was used for a different request body."
                )
            if record.status == 0:
                return error_response(
                    409, "idempotency_in_progress", "The first request with this key is still running."
                )
            return _replay(record)
        try:
            response = handler(view, request, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - answered (or re-raised) by DRF's handler, then kept
            try:
                response = view.handle_exception(exc)
            except Exception:
                record.delete()
                raise
        if response.status_code >= 500:
            record.delete()
        else:
            record.status = response.status_code
            record.response_encrypted = crypto.encrypt(json.dumps(response.data, default=str))
            record.save(update_fields=["status", "response_encrypted"])
        return response

    return wrapper


def _replay(record: IdempotencyRecord) -> Response:
    try:
        answer = json.loads(crypto.decrypt(record.response_encrypted))
    except crypto.SecretUnreadable:
        return error_response(
            409,
            "idempotency_answer_unreadable",
            "The request with this key was carried out, but its stored answer can no longer be decrypted "
            "(CONSOLE_ENCRYPTION_KEY changed); read the result with a GET.",
        )
    response = Response(answer, status=record.status)
    response["Idempotent-Replayed"] = "true"
    return response
