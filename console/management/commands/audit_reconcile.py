"""Settle audit outcomes that could not be written when their change ran (beat does this too)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from console.audit import outcomes
from console.models.outcomes import OwedOutcome


class Command(BaseCommand):
    help = (
        "Record owed audit outcomes (a change reached Kafka but its outcome event could not be written): "
        "first as 'unknown', then with the state re-read from Kafka."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--grace",
            type=float,
            default=None,
            help="only outcomes owed this many seconds (default: setting)",
        )

    def handle(self, *args, grace: float | None = None, **options) -> None:
        settled = outcomes.reconcile(grace_s=grace, limit=10_000)
        left = OwedOutcome.objects.count()
        self.stdout.write(f"settled {settled} owed outcome(s); {left} still owed")
