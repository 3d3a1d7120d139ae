"""Where a stored secret may go: only with the settings it was saved with.

A cluster's stored secrets (the SASL password, the mTLS private key, the OAuth client secret, the
Kerberos keytab) are never shown again, so whoever edits the settings cannot read them; they could
still send them to a host they own by changing the address and pressing Test connection. So a test
or a save uses a stored secret only while the settings it is bound to are the saved ones; otherwise
the secret must be entered again (``PasswordRequired``, naming each secret and what changed), before
anything is sent or saved. Also here: ``connection_for``, the one place that decrypts
stored secrets into a ClusterConnection, and the audit snapshot, which shows "set" for a secret, never a value.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from console.clusters.core import PASSWORD_MECHANISMS, SECRETS, needs_secret
from console.clusters.credentials import certificate_facts, parse_extensions
from console.crypto import SecretUnreadable
from console.kafka import ClusterConnection, KerberosSettings, OAuthSettings
from console.models import Cluster
from console.models.clusters import canonical_endpoints

__all__ = [
    "SECRET_BOUND_FIELDS",
    "PasswordRequired",
    "audit_snapshot",
    "connection_for",
    "secrets_for",
]

LABELS = {
    "sasl_password": "SASL password",
    "client_key": "client private key",
    "oauth_client_secret": "OAuth client secret",
    "kerberos_keytab": "Kerberos keytab",
}
FIELD_LABELS = {
    "bootstrap_servers": "bootstrap servers",
    "bootstrap_controllers": "bootstrap controllers",
    "security_protocol": "security protocol",
    "sasl_mechanism": "SASL mechanism",
    "ca_certificate": "CA certificate",
    "ssl_check_hostname": "hostname verification",
    "tls_min_version": "minimum TLS version",
    "client_certificate": "client certificate",
    "oauth_token_endpoint": "token endpoint",
    "kerberos_principal": "Kerberos principal",
    "kerberos_service_name": "Kerberos service name",
    "kerberos_krb5_conf": "krb5.conf",
}
# Where and how a secret travels: the addresses, the protocol and everything that authenticates the
# server to the console (CA, hostname verification, TLS version). SASL secrets are bound to the
# mechanism too (PLAIN sends the password itself), the client secret to the token endpoint it is
# posted to, the keytab to the principal, service and KDCs (krb5.conf) it authenticates with, and the
# private key to its certificate.
_WHERE = (
    "bootstrap_servers",
    "bootstrap_controllers",
    "security_protocol",
    "ca_certificate",
    "ssl_check_hostname",
    "tls_min_version",
)
SECRET_BOUND_FIELDS: dict[str, tuple[str, ...]] = {
    "sasl_password": (*_WHERE, "sasl_mechanism"),
    "client_key": (*_WHERE, "client_certificate"),
    "oauth_client_secret": (*_WHERE, "sasl_mechanism", "oauth_token_endpoint"),
    "kerberos_keytab": (
        *_WHERE,
        "sasl_mechanism",
        "kerberos_principal",
        "kerberos_service_name",
        "kerberos_krb5_conf",
    ),
}


class PasswordRequired(ValueError):
    """A stored secret may not be used with changed settings (or cannot be decrypted): enter it again.

    ``secrets`` maps each such secret's name to why."""

    def __init__(self, secrets: dict[str, str]) -> None:
        self.secrets = secrets
        super().__init__(" ".join(secrets.values()))


def _norm(field: str, value: Any) -> str:
    if field in ("bootstrap_servers", "bootstrap_controllers"):
        return canonical_endpoints(str(value or ""))
    if isinstance(value, bool):
        return "on" if value else "off"
    if field == "kerberos_service_name":
        return str(value or "").strip() or "kafka"
    return str(value or "").strip().replace("\r\n", "\n")


def _changed(saved: Cluster, values: Mapping[str, Any], fields: tuple[str, ...]) -> list[str]:
    return [f for f in fields if _norm(f, getattr(saved, f)) != _norm(f, values.get(f, getattr(saved, f)))]


def _why(name: str, changed: list[str]) -> str:
    named = ", ".join(FIELD_LABELS.get(f, f.replace("_", " ")) for f in changed)
    verb = "has" if len(changed) == 1 else "have"
    return (
        f"Enter the {LABELS[name]} again: the stored one is only sent with the saved settings, "
        f"and {named} {verb} changed."
    )


def secrets_for(saved: Cluster | None, values: Mapping[str, Any], typed: Mapping[str, str]) -> dict[str, str]:
    """Every secret a test or a save of ``values`` may use: the typed one, else the stored one while
    its bound settings are unchanged; "" where the settings do not use it. PasswordRequired names
    every stored secret that would be needed but may not (or cannot) be used."""
    fresh = Cluster.objects.filter(pk=getattr(saved, "pk", None)).first()  # the saved row, not an edited one
    merged = {f: getattr(fresh, f) for f in _all_bound()} if fresh else {}
    merged.update(values)
    out: dict[str, str] = {}
    refused: dict[str, str] = {}
    for name in SECRETS:
        if typed.get(name):
            out[name] = typed[name]
            continue
        out[name] = ""
        if fresh is None or not fresh.has_secret(name) or not needs_secret(name, merged):
            continue
        changed = _changed(fresh, values, SECRET_BOUND_FIELDS[name])
        if changed:
            refused[name] = _why(name, changed)
            continue
        try:
            out[name] = fresh.secret(name)
        except SecretUnreadable:
            refused[name] = (
                f"Enter the {LABELS[name]} again: the stored one cannot be decrypted with the configured "
                "CONSOLE_ENCRYPTION_KEY (the key changed since it was saved)."
            )
    if refused:
        raise PasswordRequired(refused)
    return out


def _all_bound() -> set[str]:
    return {f for fields in SECRET_BOUND_FIELDS.values() for f in fields} | {"sasl_username"}


def _stored_secrets(cluster: Cluster) -> dict[str, str]:
    return {name: cluster.secret(name) for name in SECRETS}


def connection_for(cluster: Cluster, secrets: Mapping[str, str] | str | None = None) -> ClusterConnection:
    """Build the gateway's connection settings from a (possibly unsaved) cluster: its stored secrets,
    or the ones given (a string: the SASL password, the other secrets stored)."""
    if secrets is None or isinstance(secrets, str):
        given = {} if secrets is None else {"sasl_password": secrets}
        secrets = {**_stored_secrets(cluster), **given}
    mechanism = cluster.sasl_mechanism or None
    sasl = cluster.security_protocol.startswith("SASL")
    tls = cluster.security_protocol.endswith("SSL")
    oauth = kerberos = None
    if sasl and mechanism == "OAUTHBEARER":
        oauth = OAuthSettings(
            token_endpoint=cluster.oauth_token_endpoint.strip(),
            client_id=cluster.oauth_client_id.strip(),
            client_secret=secrets.get("oauth_client_secret", ""),
            scope=cluster.oauth_scope.strip(),
            extensions=parse_extensions(cluster.oauth_extensions),
        )
    if sasl and mechanism == "GSSAPI":
        kerberos = KerberosSettings(
            principal=cluster.kerberos_principal.strip(),
            keytab=base64.b64decode(secrets.get("kerberos_keytab", "") or ""),
            service_name=cluster.kerberos_service_name.strip() or "kafka",
            krb5_conf=cluster.kerberos_krb5_conf,
        )
    password_login = sasl and mechanism in PASSWORD_MECHANISMS
    client_key = secrets.get("client_key", "") if tls and cluster.client_certificate else ""
    return ClusterConnection(
        bootstrap_servers=canonical_endpoints(cluster.bootstrap_servers),
        bootstrap_controllers=canonical_endpoints(cluster.bootstrap_controllers),
        security_protocol=cluster.security_protocol,
        sasl_mechanism=mechanism if sasl else None,
        sasl_username=(cluster.sasl_username or None) if password_login else None,
        sasl_password=secrets.get("sasl_password", "") if password_login else None,
        # TLS settings only with a TLS protocol (a row keeps them while its protocol is another one)
        ca_cert_pem=(cluster.ca_certificate or None) if tls else None,
        client_cert_pem=(cluster.client_certificate or None) if client_key else None,
        client_key_pem=client_key or None,
        ssl_check_hostname=cluster.ssl_check_hostname if tls else True,
        tls_min_version=(cluster.tls_min_version or "TLSv1.2") if tls else "TLSv1.2",
        oauth=oauth,
        kerberos=kerberos,
        request_timeout_s=cluster.request_timeout_s,
        connect_timeout_s=min(cluster.request_timeout_s, settings.KAFKA_CONNECT_TIMEOUT_S),
    )


def audit_snapshot(cluster: Cluster, editable: tuple[str, ...]) -> dict[str, Any]:
    """The registry entry as the audit trail keeps it: which secrets are stored (by name), certificates
    by subject, expiry and fingerprint, never a secret's value."""
    pem_fields = ("ca_certificate", "client_certificate", "kerberos_krb5_conf")
    data = {f: getattr(cluster, f) for f in editable if f not in pem_fields}
    data["ca_certificate"] = "present" if cluster.ca_certificate else ""
    data["ca_certificates"] = [c.as_json() for c in certificate_facts(cluster.ca_certificate)]
    client = certificate_facts(cluster.client_certificate)
    data["client_certificate"] = client[0].as_json() if client else ""
    data["kerberos_krb5_conf"] = "present" if cluster.kerberos_krb5_conf else ""
    # Named in a list: the trail masks every value under a key that looks secret ("sasl_password").
    data["stored"] = [name for name in SECRETS if cluster.has_secret(name)]
    return data
