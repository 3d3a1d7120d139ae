"""The cluster registry: how the console reaches each Kafka cluster."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from console import crypto

_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)$")
_SEPARATORS = re.compile(r"[,\r\n]+")
MAX_ENDPOINTS = 50


def _split(value: str) -> list[str]:
    return [e.strip() for e in _SEPARATORS.split(value or "") if e.strip()]


def parse_endpoints(value: str, label: str) -> list[str]:
    """Split a 'host:port,host:port' list (commas or line breaks between entries) and check every
    entry: a host name, an IPv4 address or an IPv6 address in brackets, and a port 1-65535. The
    error names the bad entry."""
    entries = _split(value)
    if len(entries) > MAX_ENDPOINTS:
        raise ValidationError(f"{label}: at most {MAX_ENDPOINTS} addresses.")
    for entry in entries:
        host, sep, port = entry.rpartition(":")
        if not sep or not host:
            raise ValidationError(
                f"{label}: '{entry}' is not host:port (for example broker1.example.com:9092)."
            )
        if not _HOST.match(host):
            ipv6 = ":" in host and re.fullmatch(r"[0-9A-Fa-f:.]+", host)
            hint = " (write an IPv6 address in brackets: [::1]:9092)" if ipv6 else ""
            raise ValidationError(
                f"{label}: '{host}' in '{entry}' is not a valid host name or address{hint}."
            )
        if not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ValidationError(f"{label}: port '{port}' in '{entry}' must be a number from 1 to 65535.")
    return entries


def canonical_endpoints(value: str) -> str:
    """The address list as the Kafka clients take it ("a:1,b:2"), whatever separators it was saved with."""
    return ",".join(_split(value))


class SecurityProtocol(models.TextChoices):
    PLAINTEXT = "PLAINTEXT", "PLAINTEXT"
    SSL = "SSL", "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT", "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL", "SASL_SSL"


class SaslMechanism(models.TextChoices):
    NONE = "", "—"
    PLAIN = "PLAIN", "PLAIN"
    SCRAM_SHA_256 = "SCRAM-SHA-256", "SCRAM-SHA-256"
    SCRAM_SHA_512 = "SCRAM-SHA-512", "SCRAM-SHA-512"
    OAUTHBEARER = "OAUTHBEARER", "OAUTHBEARER (OIDC client credentials)"
    GSSAPI = "GSSAPI", "GSSAPI (Kerberos)"


class TlsVersion(models.TextChoices):
    TLS_1_2 = "TLSv1.2", "TLS 1.2"
    TLS_1_3 = "TLSv1.3", "TLS 1.3"


def default_request_timeout() -> float:
    return settings.KAFKA_REQUEST_TIMEOUT_S


class Cluster(models.Model):
    """A registered Kafka cluster, reached through brokers or (KIP-919) through its controllers."""

    name = models.SlugField(max_length=64, unique=True)
    description = models.CharField(max_length=200, blank=True)
    bootstrap_servers = models.CharField(max_length=1000, blank=True)
    bootstrap_controllers = models.CharField(max_length=1000, blank=True)
    security_protocol = models.CharField(
        max_length=16, choices=SecurityProtocol.choices, default=SecurityProtocol.PLAINTEXT
    )
    sasl_mechanism = models.CharField(max_length=16, choices=SaslMechanism.choices, blank=True, default="")
    sasl_username = models.CharField(max_length=200, blank=True)
    sasl_password_encrypted = crypto.EncryptedTextField(blank=True, editable=False)
    ca_certificate = models.TextField(blank=True)  # CA bundle: one or more PEM certificates
    # mTLS: the client certificate chain (PEM, public) and its key (unencrypted PKCS#8 PEM, encrypted
    # at rest; a passphrase or PKCS#12 password is used at upload only and never stored).
    client_certificate = models.TextField(blank=True)
    client_key_encrypted = crypto.EncryptedTextField(blank=True, editable=False)
    ssl_check_hostname = models.BooleanField(default=True)
    tls_min_version = models.CharField(max_length=8, choices=TlsVersion.choices, default=TlsVersion.TLS_1_2)
    # SASL/OAUTHBEARER: OIDC client-credentials grant.
    oauth_token_endpoint = models.CharField(max_length=500, blank=True)
    oauth_client_id = models.CharField(max_length=200, blank=True)
    oauth_client_secret_encrypted = crypto.EncryptedTextField(blank=True, editable=False)
    oauth_scope = models.CharField(max_length=500, blank=True)
    oauth_extensions = models.TextField(blank=True)  # SASL extensions (KIP-342), one key=value a line
    # SASL/GSSAPI: the keytab is kept base64-encoded, then encrypted.
    kerberos_principal = models.CharField(max_length=255, blank=True)
    kerberos_keytab_encrypted = crypto.EncryptedTextField(blank=True, editable=False)
    kerberos_service_name = models.CharField(max_length=100, blank=True, default="kafka")
    kerberos_krb5_conf = models.TextField(blank=True)
    request_timeout_s = models.FloatField(default=default_request_timeout)
    # What the brokers' authorizer is configured with, where Kafka hides it from DescribeConfigs
    # (super.users and allow.everyone.if.no.acl.found are reported without a value): stated by the
    # cluster's admins so effective access can answer; blank/"" means unknown.
    acl_super_users = models.TextField(blank=True, default="")
    acl_allow_if_no_acl = models.CharField(
        max_length=5, blank=True, default="", choices=[("", "unknown"), ("true", "true"), ("false", "false")]
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """Every save path (form, command, service) stores checked, canonical address lists."""
        errors = {}
        for field, label in (
            ("bootstrap_servers", "Bootstrap servers"),
            ("bootstrap_controllers", "Bootstrap controllers"),
        ):
            try:
                setattr(self, field, ",".join(parse_endpoints(getattr(self, field), label)))
            except ValidationError as exc:
                errors[field] = exc.messages
        if errors:
            raise ValidationError(errors)

    @property
    def controller_mode(self) -> bool:
        return bool(self.bootstrap_controllers)

    @property
    def has_sasl_password(self) -> bool:
        return bool(self.sasl_password_encrypted)

    def set_sasl_password(self, password: str) -> None:
        self.set_secret("sasl_password", password)

    def sasl_password(self) -> str:
        return self.secret("sasl_password")

    # The stored secrets by name: sasl_password, client_key, oauth_client_secret, kerberos_keytab
    # (the keytab as base64 text). Each lives encrypted in the column <name>_encrypted.

    def has_secret(self, name: str) -> bool:
        return bool(getattr(self, f"{name}_encrypted"))

    def set_secret(self, name: str, value: str) -> None:
        setattr(self, f"{name}_encrypted", crypto.encrypt(value) if value else "")

    def secret(self, name: str) -> str:
        """The decrypted secret ("" when unset); SecretUnreadable when no configured key opens it."""
        token = getattr(self, f"{name}_encrypted")
        return crypto.decrypt(token) if token else ""
