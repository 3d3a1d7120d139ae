"""Write the audit chain's head (id, hash, time) for an external witness."""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from console.audit.anchor import head_anchor
from console.audit.chain import check_chain


class Command(BaseCommand):
    help = (
        "Check the audit chain, then write its head as JSON {id, hash, time, anchored_at} to stdout or "
        "--out FILE. Keep it where the console's database cannot reach it; `audit_verify --anchor FILE` "
        "later fails if the chain no longer holds that event with that hash (truncation or rewrite)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--out", metavar="FILE", help="write the anchor to FILE instead of stdout")

    def handle(self, *args, **options) -> None:
        status = check_chain()
        if not status.ok:
            raise CommandError(
                f"Audit chain BROKEN at event {status.broken_at}: {status.reason}. No anchor was written."
            )
        anchor = head_anchor()
        text = json.dumps(anchor, sort_keys=True) + "\n"
        out = options.get("out")
        if not out:
            self.stdout.write(text, ending="")
            return
        path = Path(out)
        tmp = path.with_name(path.name + ".partial")
        try:
            with tmp.open("w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            tmp.replace(path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise CommandError(f"Cannot write the anchor to {path}: {exc}") from exc
        self.stderr.write(f"Anchored the audit chain at event {anchor['id']} in {path}.")
