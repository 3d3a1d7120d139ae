"""Recompute the audit hash chain (keyed) and name the first broken link; optionally check an anchor."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from console.audit.anchor import AnchorError, anchor_problem, parse_anchor
from console.audit.store import verify_chain
from console.integrity.chain import failure_text


class Command(BaseCommand):
    help = (
        "Verify the audit trail's keyed hash chain (every kept event, with AUDIT_HMAC_KEY) and that it still "
        "holds the latest anchor in CONSOLE_AUDIT_ANCHOR_DIR (detects truncation; a missing anchor file is "
        "a warning). With --anchor, also check heads saved by audit_anchor. "
        "Exit code 0 when intact, 1 when broken."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--anchor",
            action="append",
            default=[],
            metavar="FILE",
            help="an anchor written by audit_anchor (repeatable)",
        )

    def handle(self, *args, **options) -> None:
        anchors = []
        for name in options["anchor"]:
            try:
                anchors.append((name, parse_anchor(Path(name).read_text())))
            except (OSError, UnicodeDecodeError, AnchorError) as exc:
                raise CommandError(f"Cannot read the anchor {name}: {exc}") from exc
        status = verify_chain()
        if status.note:
            self.stderr.write(f"Note: {status.note}.")
        latest = status.anchor_check
        if latest is not None and latest.level == "warning":
            self.stderr.write(f"Warning: {latest.message}.")
        if not status.ok:
            raise CommandError(f"{failure_text(status)}. Verified up to event {status.verified_up_to}.")
        if latest is not None and latest.level == "ok":
            self.stdout.write(f"Latest anchor: {latest.message}.")
        for name, (anchor_id, anchor_hash) in anchors:
            problem, note = anchor_problem(anchor_id, anchor_hash)
            if problem:
                raise CommandError(
                    f"Audit chain does NOT match the anchor {name} (event {anchor_id}): {problem}."
                )
            self.stdout.write(
                f"Anchor {name}: event {anchor_id} " + (f"not checked: {note}." if note else "holds.")
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"Audit chain intact: {status.count} events, up to event {status.verified_up_to}"
                + (f" (archived up to event {status.archived_up_to})." if status.archived_up_to else ".")
            )
        )
