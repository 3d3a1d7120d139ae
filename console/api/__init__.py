"""The REST API under /api/v1/: the same area actions as the pages, with tokens and OpenAPI.

``auth`` (bearer tokens from console/identity/tokens.py, the session with CSRF, read-only scopes),
``errors`` (every error as JSON with Kafka's name and code), ``idempotency`` (the Idempotency-Key of
POSTs; ``schema`` documents it), ``base`` (the view base: cluster getter, validated body, the OpenAPI
entry of an endpoint, paging, plain JSON), ``serializers`` and ``serializers_clusters`` (shapes only),
``held`` (submitting a held action for review), one module of views per area (``clusters``,
``bindings``, ``topics``, ``configs``, ``brokers``, ``acls``, ``groups``, ``reassignment``,
``elections``, ``requests``, ``changes``, ``notify``, ``audit``, ``capacity``, ``quorum``,
``operations``) and ``urls``, the one route table. See docs/api.md.
"""

__all__ = [
    "acls",
    "audit",
    "auth",
    "base",
    "bindings",
    "brokers",
    "capacity",
    "changes",
    "clusters",
    "configs",
    "elections",
    "errors",
    "groups",
    "held",
    "idempotency",
    "notify",
    "operations",
    "quorum",
    "reassignment",
    "requests",
    "schema",
    "serializers",
    "serializers_clusters",
    "urls",
]
