"""Removing a cluster from the console is confirmed by typing its name again (every door asks the same)."""

from __future__ import annotations

from django.core.exceptions import ValidationError


def check_removal(cluster, typed: str) -> None:
    """Refused (400) unless ``typed`` is the cluster's name."""
    if typed != cluster.name:
        raise ValidationError([f"Type the cluster name '{cluster.name}' to confirm removal."])
