"""The audit action names of single sign-on accounts and API tokens; stored as written."""

from __future__ import annotations

USER_CREATE = "auth.user.create"  # a console user made at a first single sign-on login
GROUPS_CHANGE = "auth.groups.change"  # the identity provider's groups applied at login
TOKEN_CREATE = "api.token.create"
TOKEN_REVOKE = "api.token.revoke"
TOKEN_REFUSED = "api.token.refused"  # a live token its user may not use now (a login rule)
TOKEN_USE = "api.token.use"  # a token's first use
