"""Retention: export the oldest audit events to JSON Lines, then prune them behind an anchor."""

from __future__ import annotations

from datetime import UTC, datetime, time

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_date, parse_datetime

from console.audit.archive import AuditArchiveError, archive_events


def _point(value: str) -> tuple[int | None, datetime | None]:
    """An event id (digits) or an ISO date / datetime (UTC when no offset is given)."""
    if value.isdigit():
        return int(value), None
    try:
        moment = parse_datetime(value)
        if moment is None:
            day = parse_date(value)
            moment = datetime.combine(day, time.min) if day else None
    except ValueError:
        moment = None
    if moment is None:
        raise CommandError(f"--before takes an event id or an ISO date/datetime, not {value!r}.")
    return None, moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Archive audit events older than an event id or a date: write them (with their hashes) to a "
        "JSON Lines file, then delete them in one transaction and anchor the chain at the last one."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--before", required=True, help="event id (exclusive) or ISO date/datetime (UTC)")
        parser.add_argument("--out", required=True, help="the JSON Lines file to write (never overwritten)")

    def handle(self, *args, **options) -> None:
        before_id, before_time = _point(options["before"])
        try:
            result = archive_events(out=options["out"], before_id=before_id, before_time=before_time)
        except (AuditArchiveError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Archived {result.count} events ({result.first_id} to {result.last_id}) to {result.path} "
                f"(sha256 {result.sha256}); the chain is anchored at event {result.last_id}, "
                f"recorded as event {result.event.pk}."
            )
        )
