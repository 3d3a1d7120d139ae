"""The cluster registry: how the console reaches each Kafka cluster."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from console import crypto


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
    sasl_password_encrypted = models.TextField(blank=True, editable=False)
    ca_certificate = models.TextField(blank=True)
    request_timeout_s = models.FloatField(default=default_request_timeout)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def controller_mode(self) -> bool:
        return bool(self.bootstrap_controllers)

    @property
    def has_sasl_password(self) -> bool:
        return bool(self.sasl_password_encrypted)

    def set_sasl_password(self, password: str) -> None:
        self.sasl_password_encrypted = crypto.encrypt(password) if password else ""

    def sasl_password(self) -> str:
        return crypto.decrypt(self.sasl_password_encrypted) if self.sasl_password_encrypted else ""
