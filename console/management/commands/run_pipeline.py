"""Run the capacity pipeline for one cluster over a window, as an Operation (inline or on a worker)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from console import operations
from console.models import Cluster, OperationState
from console.telemetry import capacity

_RELATIVE = re.compile(r"^(\d+)([hd])$")


def parse_when(text: str, now: datetime) -> datetime:
    """An ISO date/time (UTC when no offset), or a duration before now: "36h", "7d"."""
    m = _RELATIVE.match(text.strip())
    if m:
        amount, unit = int(m.group(1)), m.group(2)
        return now - (timedelta(hours=amount) if unit == "h" else timedelta(days=amount))
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise CommandError(f"cannot read {text!r}: use 2026-05-01, 2026-05-01T12:00 or 7d / 36h") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Turn a cluster's telemetry snapshots into capacity reports (an audited Operation): closed hours "
        "rolled up with pyarrow, a rebuild or a backfill of PIPELINE_SPARK_MIN_ROWS raw rows or more with Spark."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--cluster", required=True, help="registered cluster name")
        parser.add_argument(
            "--since", help="window start: ISO date/time or 7d / 36h ago (default: PIPELINE_WINDOW_DAYS)"
        )
        parser.add_argument("--until", help="window end (default: now)")
        parser.add_argument(
            "--rebuild", action="store_true", help="drop the window's hourly rollups and recompute them all"
        )
        parser.add_argument("--queue", action="store_true", help="leave the run to a Celery worker")

    def handle(self, *args, **options) -> None:
        cluster = Cluster.objects.filter(name=options["cluster"]).first()
        if cluster is None:
            raise CommandError(f"no cluster named {options['cluster']!r}")
        now = timezone.now()
        since = parse_when(options["since"], now) if options["since"] else None
        until = parse_when(options["until"], now) if options["until"] else None
        try:
            op = capacity.start_pipeline_run(
                actor=None, cluster=cluster, since=since, until=until, rebuild=options["rebuild"]
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"operation #{op.pk}: {op.params['since']} → {op.params['until']}")
        if options["queue"]:
            return
        done = operations.run(op.pk, worker="manage.py run_pipeline")
        if done is None:
            self.stdout.write("a worker took the operation; follow it on its page")
            return
        if done.state != OperationState.SUCCEEDED:
            raise CommandError(f"pipeline failed: {done.error}")
        rows = ", ".join(f"{k} {v}" for k, v in sorted(done.result["rows"].items()))
        engine = done.result.get("engine", "")
        self.stdout.write(
            self.style.SUCCESS(f"reports published ({done.result['seconds']} s, {engine}): {rows}")
        )
