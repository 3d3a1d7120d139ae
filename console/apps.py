"""App configuration."""

from __future__ import annotations

from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Kafka Operator Console"
    default_auto_field = "django.db.models.BigAutoField"
