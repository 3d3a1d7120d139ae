"""The registry's rules over plain data: which settings a security protocol and SASL mechanism need.

No Django, no I/O: the form, the API and the command line show these messages; the actions enforce them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["PASSWORD_MECHANISMS", "SECRETS", "needs_secret", "settings_errors", "uses_tls"]

PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_MECHANISMS = (*PASSWORD_MECHANISMS, "OAUTHBEARER", "GSSAPI")
TLS_VERSIONS = ("TLSv1.2", "TLSv1.3")
# The stored secrets, by name (each kept encrypted in the column <name>_encrypted).
SECRETS = ("sasl_password", "client_key", "oauth_client_secret", "kerberos_keytab")
_PRINCIPAL = re.compile(r"[^\s@/]+(/[^\s@/]+)?(@[^\s@/]+)?")
_SERVICE = re.compile(r"[A-Za-z0-9._-]{1,100}")
_TEXT_LIMITS = (
    ("kerberos_krb5_conf", "krb5.conf", 64 * 1024),
    ("oauth_extensions", "SASL extensions", 8 * 1024),
)
_TLS_ONLY = {
    "ca_certificate": "A CA bundle",
    "client_certificate": "A client certificate",
}


def _text(values: Mapping[str, Any], field: str) -> str:
    return str(values.get(field) or "").strip()


def uses_tls(values: Mapping[str, Any]) -> bool:
    return _text(values, "security_protocol") in ("SSL", "SASL_SSL")


def uses_sasl(values: Mapping[str, Any]) -> bool:
    return _text(values, "security_protocol").startswith("SASL")


def needs_secret(name: str, values: Mapping[str, Any]) -> bool:
    """Whether connecting with these settings uses the secret ``name``."""
    mechanism = _text(values, "sasl_mechanism")
    if name == "client_key":
        return uses_tls(values) and bool(_text(values, "client_certificate"))
    if not uses_sasl(values):
        return False
    return {
        "sasl_password": mechanism in PASSWORD_MECHANISMS,
        "oauth_client_secret": mechanism == "OAUTHBEARER",
        "kerberos_keytab": mechanism == "GSSAPI",
    }[name]


def token_endpoint_error(url: str) -> str:
    """Why a token endpoint is not acceptable ("" when it is): https, or http to a loopback address."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        return "Token endpoint: not a valid URL."
    if parts.scheme not in ("https", "http") or not host:
        return "Token endpoint: give the identity provider's https:// token URL."
    if parts.username or parts.password:
        return "Token endpoint: no user name or password in the URL; the client id and secret are separate fields."
    if parts.scheme == "http":
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            return "Token endpoint: use https:// (plain http is allowed only to a loopback address)."
    return ""


def settings_errors(
    values: Mapping[str, Any], has_secret: Mapping[str, bool], kerberos_available: bool = True
) -> dict[str, list[str]]:
    """Per field, what is missing or does not fit the security protocol and SASL mechanism.

    ``has_secret`` says, per secret name, whether one was entered or may be kept; ``kerberos_available``
    whether this console can log in with GSSAPI at all (the "kerberos" extra is installed)."""
    errors: dict[str, list[str]] = {}

    def add(field: str, message: str) -> None:
        errors.setdefault(field, []).append(message)

    protocol, mechanism = _text(values, "security_protocol"), _text(values, "sasl_mechanism")
    for field, label, limit in _TEXT_LIMITS:
        if len(_text(values, field)) > limit:
            add(field, f"{label}: at most {limit // 1024} KiB.")
    if _text(values, "tls_min_version") not in ("", *TLS_VERSIONS):
        add("tls_min_version", f"Minimum TLS version: one of {', '.join(TLS_VERSIONS)}.")
    if not uses_tls(values):
        for field, what in _TLS_ONLY.items():
            if _text(values, field):
                add(field, f"{what} is only used with SSL or SASL_SSL.")
    elif _text(values, "client_certificate") and not has_secret.get("client_key"):
        add("client_key", "A client certificate needs its private key (PEM or PKCS#12).")
    if not uses_sasl(values):
        if mechanism or _text(values, "sasl_username"):
            add("security_protocol", "SASL settings need a SASL_PLAINTEXT or SASL_SSL security protocol.")
        return errors
    if mechanism not in SASL_MECHANISMS:
        add("sasl_mechanism", f"{protocol} needs a SASL mechanism ({', '.join(SASL_MECHANISMS)}).")
    if mechanism in PASSWORD_MECHANISMS or not mechanism:
        if not _text(values, "sasl_username"):
            add("sasl_username", f"{protocol} needs a SASL user name.")
        if not has_secret.get("sasl_password"):
            add("sasl_password", f"{protocol} needs a SASL password.")
    elif mechanism == "OAUTHBEARER":
        endpoint = _text(values, "oauth_token_endpoint")
        if not endpoint:
            add("oauth_token_endpoint", "OAUTHBEARER needs the identity provider's token endpoint.")
        elif token_endpoint_error(endpoint):
            add("oauth_token_endpoint", token_endpoint_error(endpoint))
        if not _text(values, "oauth_client_id"):
            add("oauth_client_id", "OAUTHBEARER needs a client id.")
        if not has_secret.get("oauth_client_secret"):
            add("oauth_client_secret", "OAUTHBEARER needs the client secret.")
    elif mechanism == "GSSAPI":
        if not kerberos_available:
            add(
                "sasl_mechanism",
                'GSSAPI needs Kerberos support on this console: install the "kerberos" extra.',
            )
        principal = _text(values, "kerberos_principal")
        if not principal:
            add(
                "kerberos_principal",
                "GSSAPI needs the console's Kerberos principal (e.g. console@EXAMPLE.ORG).",
            )
        elif not _PRINCIPAL.fullmatch(principal):
            add("kerberos_principal", "Kerberos principal: write name@REALM or name/host@REALM.")
        if not has_secret.get("kerberos_keytab"):
            add("kerberos_keytab", "GSSAPI needs the principal's keytab file.")
        if not _SERVICE.fullmatch(_text(values, "kerberos_service_name") or "kafka"):
            add(
                "kerberos_service_name",
                "Kerberos service name: letters, digits, '.', '_' or '-' (usually kafka).",
            )
    if mechanism != "OAUTHBEARER" and _text(values, "oauth_token_endpoint"):
        add("oauth_token_endpoint", "OAuth settings are only used with the OAUTHBEARER mechanism.")
    if mechanism != "GSSAPI" and _text(values, "kerberos_principal"):
        add("kerberos_principal", "Kerberos settings are only used with the GSSAPI mechanism.")
    return errors
