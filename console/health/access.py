"""Who may read /readyz and /metrics: a client inside CONSOLE_METRICS_ALLOWED_NETWORKS, or one sending
``Authorization: Bearer <CONSOLE_METRICS_TOKEN>`` (compared in constant time). /healthz is open."""

from __future__ import annotations

import hmac
import ipaddress

from axes.helpers import get_client_ip_address
from django.conf import settings


def _networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(entry, strict=False) for entry in settings.CONSOLE_METRICS_ALLOWED_NETWORKS]


def token_matches(request) -> bool:
    """The request carries the metrics token (never true while no token is configured)."""
    expected = settings.CONSOLE_METRICS_TOKEN
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if not expected or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())


def from_allowed_network(request) -> bool:
    """The client's address (behind CONSOLE_BEHIND_PROXY: as the proxy reports it) is allowed."""
    address = get_client_ip_address(request)
    try:
        client = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    return any(client in network for network in _networks())


def allowed(request) -> bool:
    """May this request read the readiness details and the metrics?"""
    return token_matches(request) or from_allowed_network(request)
