"""The audit action names of the audit trail itself and of accounts (logins, Django's admin);
stored as written."""

from __future__ import annotations

LOGIN = "auth.login"
LOGOUT = "auth.logout"
LOGIN_FAILED = "auth.login_failed"
ADMIN_ADD = "admin.add"
ADMIN_CHANGE = "admin.change"
ADMIN_DELETE = "admin.delete"
EXPORT = "audit.export"
VERIFY = "audit.verify"
ARCHIVE = "audit.archive"
REKEY = "audit.rekey"  # the keyed cut-over after the legacy (unkeyed) events; see store.legacy_cutover


def refused_request(door: str, url_name: str | None) -> str:
    """A change a door (``http`` the pages, ``api`` the API) refused before any area's action ran,
    named by the URL it was sent to: ``http.topic_create``, ``api.topics``."""
    return f"{door}.{url_name or 'post'}"
