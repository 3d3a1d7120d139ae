"""The REST API under /api/v1/: the same area actions as the pages, with tokens and OpenAPI.

``auth`` (bearer tokens, the session with CSRF, read-only scopes), ``tokens`` (create, revoke,
authenticate; audited), ``errors`` (every error as JSON with Kafka's name and code),
``idempotency`` (the Idempotency-Key of POSTs; ``schema`` documents it), ``base`` (the cluster
getter, paging, plain JSON), ``serializers`` (shapes only), the views by area (``views_topics``,
``views_configs``, ``views_acls_groups``, ``views_ops``, ``views_misc``, ``views_admin``) and
``urls``. See docs/api.md.
"""

__all__ = [
    "auth",
    "base",
    "errors",
    "idempotency",
    "schema",
    "serializers",
    "tokens",
    "urls",
    "views_acls_groups",
    "views_admin",
    "views_configs",
    "views_misc",
    "views_ops",
    "views_topics",
]
