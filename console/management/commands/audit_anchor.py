"""Write the audit chain's head (id, hash, time), signed, for an external witness."""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from console.audit.anchor import head_anchor
from console.integrity.chain import append_anchor, check_chain, failure_text


class Command(BaseCommand):
    help = (
        "Check the audit chain, then write its head as JSON {v, id, hash, time, anchored_at, mac} (mac: "
        "HMAC-SHA256 under AUDIT_HMAC_KEY) to stdout or --out FILE. Keep it where the console's database "
        "cannot reach it; `audit_verify --anchor FILE` later fails if the chain no longer holds that event "
        "with that hash (truncation or rewrite). --append does what the beat task does: append it to "
        "CONSOLE_AUDIT_ANCHOR_DIR/anchors.jsonl, which every chain check compares with."
    )

    def add_arguments(self, parser) -> None:
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--out", metavar="FILE", help="write the anchor to FILE instead of stdout")
        where.add_argument(
            "--append",
            action="store_true",
            help="append it to the scheduled anchors' file now (nothing when the head has not moved)",
        )

    def handle(self, *args, **options) -> None:
        if options.get("append"):
            done = append_anchor()
            if done.outcome in ("refused", "unwritable"):
                raise CommandError(f"{done.message[0].upper()}{done.message[1:]}. No anchor was written.")
            self.stderr.write(f"{done.message[0].upper()}{done.message[1:]}.")
            return
        status = check_chain()
        if not status.ok:
            raise CommandError(f"{failure_text(status)}. No anchor was written.")
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
