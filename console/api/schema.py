"""OpenAPI post-processing: every POST documents the optional Idempotency-Key header."""

from __future__ import annotations

from console.api.idempotency import HEADER, KEY_MAX


def idempotency_header(result, generator, request, public):
    """drf-spectacular POSTPROCESSING_HOOKS entry."""
    for item in result.get("paths", {}).values():
        post = item.get("post")
        if post is None:
            continue
        post.setdefault("parameters", []).append(
            {
                "in": "header",
                "name": HEADER,
                "required": False,
                "schema": {"type": "string", "maxLength": KEY_MAX},
                "description": "A retry with the same key and body gets the first answer again, "
                "without repeating the change; the same key with another body is refused (422).",
            }
        )
    return result
