"""Pure parts of notifications: the webhook signature (sign and verify), the bodies, URL checks, which
addresses and e-mail domains a notification may go to, backoff.

The generic webhook's signature (docs/architecture.md "Notifications"): the body is sent as UTF-8 JSON
and the request carries

    X-Console-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>
    X-Console-Event: <event name>            X-Console-Delivery: <delivery id>

A receiver recomputes the HMAC over the timestamp, a dot and the raw body bytes with the channel's
secret, compares in constant time, and rejects a timestamp older than its tolerance (replays). The
delivery id repeats on every retry of one delivery, so a receiver can drop duplicates.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

SIGNATURE_HEADER = "X-Console-Signature"
EVENT_HEADER = "X-Console-Event"
DELIVERY_HEADER = "X-Console-Delivery"
SCHEME = "v1"
DEFAULT_TOLERANCE_S = 300
URL_MAX = 2000


def _mac(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    """The X-Console-Signature value for body sent at timestamp (unix seconds)."""
    return f"t={timestamp},{SCHEME}={_mac(secret, timestamp, body)}"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""


def verify_signature(
    secret: str, header: str, body: bytes, *, now: float, tolerance_s: float = DEFAULT_TOLERANCE_S
) -> Verdict:
    """What a receiver does: parse the header, check the timestamp's age, compare the HMAC in constant time."""
    parts: dict[str, list[str]] = {}
    for item in (header or "").split(","):
        key, sep, value = item.strip().partition("=")
        if sep:
            parts.setdefault(key, []).append(value)
    try:
        timestamp = int(parts.get("t", [""])[0])
    except ValueError:
        return Verdict(False, "no timestamp")
    if abs(now - timestamp) > tolerance_s:
        return Verdict(False, "timestamp outside the tolerance (a replay?)")
    expected = _mac(secret, timestamp, body)
    if not any(hmac.compare_digest(expected, given) for given in parts.get(SCHEME, [])):
        return Verdict(False, "signature mismatch")
    return Verdict(True)


def webhook_body(payload: dict[str, Any]) -> bytes:
    """The exact bytes signed and sent (compact, keys sorted, so receivers can log them verbatim)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str).encode()


def slack_body(*, title: str, text: str, link: str | None, cluster: str) -> dict[str, str]:
    """Slack's incoming-webhook shape (also understood by Mattermost, Rocket.Chat and others)."""
    lines = [f"*[{cluster}] {title}*"]
    if text:
        lines.append(text)
    if link:
        lines.append(f"<{link}|Open in the console>")
    return {"text": "\n".join(lines)}


def email_body(*, title: str, text: str, link: str | None, cluster: str, event_label: str) -> str:
    lines = [f"{event_label} on cluster {cluster}", "", title, "", text]
    if link:
        lines += ["", link]
    return "\n".join(lines).strip() + "\n"


def url_problem(url: str) -> str:
    """Why a webhook URL is unusable ("" when it is fine): http(s) only, a host, no user:password part."""
    if not url or len(url) > URL_MAX:
        return f"give an http:// or https:// URL of at most {URL_MAX} characters"
    if any(c.isspace() or ord(c) < 32 for c in url):
        return "the URL must not contain spaces or control characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return "the URL could not be parsed"
    if parts.scheme not in ("http", "https"):
        return "only http:// and https:// URLs are allowed"
    if not parts.hostname:
        return "the URL names no host"
    if parts.username or parts.password:
        return "put no user:password in the URL (the webhook's signature authenticates the console)"
    return ""


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Ranges Python 3.11's ``is_global`` still calls global but that are special-purpose, or that carry an
# IPv4 address inside (a NAT64 or 6to4 gateway would forward to it): refused like the rest.
_ALSO_REFUSED: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "192.0.0.0/24",  # IETF protocol assignments
        "192.88.99.0/24",  # 6to4 relay anycast
        "::/96",  # IPv4-compatible IPv6 (deprecated): ::127.0.0.1
        "64:ff9b::/96",  # NAT64
        "64:ff9b:1::/48",  # local-use NAT64
        "2001::/32",  # Teredo
        "2002::/16",  # 6to4
        "fec0::/10",  # site-local (deprecated)
        "3fff::/20",  # documentation
        "5f00::/16",  # segment routing
    )
)


def parse_networks(entries: Iterable[str]) -> tuple[IPNetwork, ...]:
    """The operator's allow-list (NOTIFY_ALLOWED_NETWORKS): CIDRs or single addresses."""
    out = []
    for entry in entries:
        try:
            out.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError as exc:
            raise ValueError(f"NOTIFY_ALLOWED_NETWORKS: {entry!r} is not a network ({exc})") from None
    return tuple(out)


def address_refusal(ip: IPAddress, allowed: Sequence[IPNetwork]) -> str:
    """Why a notification may not be sent to ip ("" when it may): only public unicast addresses, or
    those in a network the operator allowed. An IPv4-mapped IPv6 address is judged as its IPv4 one."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in net for net in allowed):
        return ""
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private and not ip.is_reserved:
        return "private"
    if not ip.is_global or any(ip in net for net in _ALSO_REFUSED):
        return "reserved"
    return ""


def domain_allowed(domain: str, patterns: Iterable[str]) -> bool:
    """Django's ALLOWED_HOSTS syntax: "example.com" names that domain, ".example.com" it and its
    subdomains, "*" any domain."""
    domain = domain.lower().rstrip(".")
    for pattern in patterns:
        pattern = pattern.strip().lower().rstrip(".")
        if pattern == "*" or pattern == domain:
            return True
        if pattern.startswith(".") and (domain.endswith(pattern) or domain == pattern[1:]):
            return True
    return False


def recipients_refused(recipients: Iterable[str], patterns: Sequence[str]) -> list[str]:
    """The recipients whose domain NOTIFY_EMAIL_DOMAINS does not allow."""
    return [r for r in recipients if not domain_allowed(r.rpartition("@")[2], patterns)]


def url_hint(url: str) -> str:
    """What pages show of a stored URL: scheme, host and port only (a path or query may carry a token)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    tail = "/…" if (parts.path not in ("", "/") or parts.query) else "/"
    return f"{parts.scheme}://{host}{port}{tail}"


def backoff_s(attempt: int, base: float, cap: float) -> float:
    """Seconds before retry ``attempt`` (1-based): base, 2·base, 4·base … at most cap."""
    if attempt < 1:
        return 0.0
    return min(cap, base * 2 ** min(attempt - 1, 30))
