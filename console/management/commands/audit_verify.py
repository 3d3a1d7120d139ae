"""Recompute the audit hash chain and name the first broken link."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from console.audit.store import verify_chain


class Command(BaseCommand):
    help = "Verify the audit trail's hash chain. Exit code 0 when intact, 1 when broken."

    def handle(self, *args, **options) -> None:
        status = verify_chain()
        if not status.ok:
            raise CommandError(
                f"Audit chain BROKEN at event {status.broken_at}: {status.reason}. "
                f"Verified up to event {status.verified_up_to}."
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"Audit chain intact: {status.count} events, up to event {status.verified_up_to}"
                + (f" (archived up to event {status.archived_up_to})." if status.archived_up_to else ".")
            )
        )
