"""The only way out for a notification's HTTP request: to public addresses, and to exactly the one checked.

A channel's URL is typed by a cluster admin, and the worker that POSTs to it sits inside the operator's
network, so the URL must not reach what only the worker can: loopback, private ranges, link-local (cloud
metadata at 169.254.169.254 or fd00:ec2::254), multicast, reserved or unspecified addresses, in IPv4 or
IPv6, an IPv4 address carried inside an IPv6 one included (``core.address_refusal``). The operator allows
an internal network explicitly with NOTIFY_ALLOWED_NETWORKS (empty by default).

``post`` resolves the host when it sends, refuses the send if any address the name resolves to is refused
(nothing is connected to), and connects to the address it checked (urllib3 given that IP; the Host header,
the TLS SNI and the certificate check keep the URL's name), so a name that resolves to a public address
for the check and to an internal one a moment later (DNS rebinding) gains nothing. It follows no redirect,
uses no proxy from the environment, and reads no answer body: a failure is recorded only as a class
("address not allowed (…)", "the host name does not resolve", "connection failed (…)", "TLS failed (…)",
"HTTP <status>"), so the delivery log cannot be used to read internal services. ``url_refusal`` is the
same check when a channel is saved, for a clear error then; a name that does not resolve yet is accepted
(the send decides on what it resolves to at that moment).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

import certifi
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool, Timeout
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError, SSLError

from console.notify import core

NOT_RESOLVED = "the host name does not resolve"
CONNECTION_FAILED = "connection failed (refused, reset or timed out)"
TLS_FAILED = "TLS failed (handshake or certificate verification)"
ALLOW_HINT = "notifications go to public addresses only; NOTIFY_ALLOWED_NETWORKS can allow a network"
# Addresses tried in turn when connecting fails: three connects and a read stay within the time after
# which worker.stale_after_s() lets another worker retake the delivery (6 timeouts).
ADDRESSES_TRIED = 3


class AddressRefused(Exception):
    """The host is, or resolves to, an address notifications may not go to."""

    def __init__(self, kind: str):
        self.kind = kind
        super().__init__(f"address not allowed ({kind}): {ALLOW_HINT}")


@dataclass(frozen=True)
class Answer:
    """The receiver's HTTP status, or why there is none (a class of failure, never the answer's body)."""

    status: int | None
    error: str = ""


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[core.IPNetwork, ...]:
    try:
        return core.parse_networks(entries)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from None


def allowed_networks() -> tuple[core.IPNetwork, ...]:
    return _networks(tuple(settings.NOTIFY_ALLOWED_NETWORKS))


def checked_addresses(host: str, port: int) -> list[core.IPAddress]:
    """Every address host resolves to now, in the resolver's order; AddressRefused if any is refused
    (a name with one internal record among public ones is refused whole); socket.gaierror if none."""
    found: list[core.IPAddress] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in found:
            found.append(ip)
    allowed = allowed_networks()
    for ip in found:
        if kind := core.address_refusal(ip, allowed):
            raise AddressRefused(kind)
    return found


def _port(parts) -> int:
    return parts.port or (443 if parts.scheme == "https" else 80)


def url_refusal(url: str) -> str:
    """At save time: why url's host may not be notified ("" when it may, or when it does not resolve)."""
    parts = urlsplit(url)
    try:
        checked_addresses(parts.hostname or "", _port(parts))
    except ImproperlyConfigured as exc:  # the operator's setting, said where an admin sees it
        return f"the console's setting is wrong, ask its operator: {exc}"
    except AddressRefused as exc:
        return (
            f"{parts.hostname} is a {exc.kind} address or resolves to one, which is not allowed: {ALLOW_HINT}"
        )
    except (OSError, UnicodeError, ValueError):
        return ""
    return ""


def _pool(parts, ip: core.IPAddress, timeout: float) -> HTTPConnectionPool:
    common = {
        "host": str(ip),
        "port": _port(parts),
        "timeout": Timeout(connect=timeout, read=timeout),
        "maxsize": 1,
        "retries": False,
    }
    if parts.scheme == "https":
        name = parts.hostname
        return HTTPSConnectionPool(
            **common, server_hostname=name, assert_hostname=name, cert_reqs="CERT_REQUIRED",
            ca_certs=certifi.where(),
        )  # fmt: skip
    return HTTPConnectionPool(**common)


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> Answer:
    """POST body to url through the checks above; the answer's status, or the class of failure."""
    parts = urlsplit(url)
    try:
        addresses = checked_addresses(parts.hostname or "", _port(parts))
    except AddressRefused as exc:
        return Answer(None, str(exc))
    except (OSError, UnicodeError, ValueError):
        return Answer(None, NOT_RESOLVED)
    host = parts.hostname or ""
    host_header = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    for ip in addresses[:ADDRESSES_TRIED]:  # the next one only when this one took no request
        with _pool(parts, ip, timeout) as pool:
            try:
                response = pool.urlopen(
                    "POST", target, body=body, headers={**headers, "Host": host_header},
                    redirect=False, preload_content=False, assert_same_host=False,
                )  # fmt: skip
            except (NewConnectionError, ConnectTimeoutError):
                continue
            except SSLError:
                return Answer(None, TLS_FAILED)
            except (HTTPError, OSError):
                return Answer(None, CONNECTION_FAILED)
            status = response.status
            response.close()  # the body is never read
            return Answer(status)
    return Answer(None, CONNECTION_FAILED)
