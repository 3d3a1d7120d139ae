"""The SASL login settings a connection may carry: OAUTHBEARER's client credentials and GSSAPI's principal
and keytab, validated, with their secrets kept out of the repr. A leaf module: the token cache
(oauth.py) and the Kerberos login (kerberos.py) read these without importing the connection."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["KerberosSettings", "OAuthSettings"]


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class OAuthSettings:
    """SASL/OAUTHBEARER through the OIDC client-credentials grant (the secret never in the repr)."""

    token_endpoint: str
    client_id: str
    client_secret: str = field(default="", repr=False)
    scope: str = ""
    extensions: tuple[tuple[str, str], ...] = ()  # SASL extensions (KIP-342), sorted pairs

    def __post_init__(self) -> None:
        url = urlsplit(self.token_endpoint or "")
        if url.scheme not in ("https", "http") or not url.hostname:
            raise ValueError("the token endpoint must be an https:// URL")
        if url.scheme == "http" and not _is_loopback(url.hostname):
            raise ValueError(
                "the token endpoint must use https (plain http is allowed only for a loopback address)"
            )
        if url.username or url.password:
            raise ValueError("the token endpoint URL must not carry credentials")
        if not self.client_id:
            raise ValueError("an OAuth client id is required for OAUTHBEARER")
        ext = tuple(sorted((str(k), str(v)) for k, v in self.extensions))
        for k, v in ext:
            # RFC 7628 key = 1*(ALPHA); Kafka reserves "auth"
            if not re.fullmatch(r"[A-Za-z]+", k) or k == "auth":
                raise ValueError(f"SASL extension name '{k}' must be letters only and not 'auth'")
            if any(ord(c) < 32 for c in v):
                raise ValueError(f"SASL extension '{k}' has a control character in its value")
        object.__setattr__(self, "extensions", ext)


@dataclass(frozen=True)
class KerberosSettings:
    """SASL/GSSAPI: the console's principal and its keytab (never in the repr)."""

    principal: str
    keytab: bytes = field(default=b"", repr=False)
    service_name: str = "kafka"
    krb5_conf: str = ""  # optional krb5.conf text (realm and KDCs)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[^@\s]+@[^@\s]+", self.principal or ""):
            raise ValueError("the Kerberos principal must look like name@REALM (e.g. console@EXAMPLE.ORG)")
        if not self.keytab:
            raise ValueError("a keytab is required for GSSAPI")
        if self.keytab[:2] not in (b"\x05\x01", b"\x05\x02"):
            raise ValueError("the keytab is not a Kerberos keytab file (made by ktutil or kadmin ktadd)")
        if not re.fullmatch(r"[A-Za-z0-9._-]+", self.service_name or ""):
            raise ValueError("the Kerberos service name must be a plain name (Kafka's default is 'kafka')")
