"""The client's address, as the lock-out, the audit trail and every door see it.

Behind the documented proxy (``CONSOLE_BEHIND_PROXY``) django-ipware reads it from X-Forwarded-For as
the ``CONSOLE_PROXY_COUNT`` proxies append it (the ``AXES_IPWARE_*`` settings); otherwise it is
REMOTE_ADDR. One function, so a login event, a page's change and an API call from the same client
name the same address, and that address is the one django-axes locks out.
"""

from __future__ import annotations

from axes.helpers import get_client_ip_address


def client_ip(request) -> str | None:
    """The client's address, or None (no request, or none known). DRF requests are unwrapped."""
    if request is None:
        return None
    return get_client_ip_address(getattr(request, "_request", request)) or None
