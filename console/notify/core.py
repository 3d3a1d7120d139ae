"""Pure parts of notifications: the webhook signature (sign and verify), the bodies, URL checks, backoff.

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
import json
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


def url_hint(url: str) -> str:
    """What pages show of a stored URL: scheme, host and port only (a path or query may carry a token)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    tail = "/…" if (parts.path not in ("", "/") or parts.query) else "/"
    return f"{parts.scheme}://{host}{port}{tail}"


def scrub(text: str, url: str) -> str:
    """An error text without the URL's path and query (client libraries quote the URL in errors)."""
    parts = urlsplit(url)
    out = text.replace(url, url_hint(url))
    for piece in (parts.path + ("?" + parts.query if parts.query else ""), parts.path, parts.query):
        if piece and piece != "/":
            out = out.replace(piece, "/…")
    return out


def backoff_s(attempt: int, base: float, cap: float) -> float:
    """Seconds before retry ``attempt`` (1-based): base, 2·base, 4·base … at most cap."""
    if attempt < 1:
        return 0.0
    return min(cap, base * 2 ** min(attempt - 1, 30))
