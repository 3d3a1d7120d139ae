"""``manage.py kafka records purge <topic>``: ``kafka-delete-records.sh`` over the purge area.

What goes: ``--partition N --offset X`` (repeatable, in pairs; offset -1: the end), ``--before <ISO time
or ms>`` (every partition, or those named with ``--partition``), ``--all`` (every partition to its
end), or ``--offset-json-file F`` (kafka-delete-records' own document; ``-``: stdin). ``--dry-run``
prints the plan and changes nothing; a purge needs ``--confirm <topic>`` and takes the change-control
options of every holdable sub-command.
"""

from __future__ import annotations

import sys

from django.core.management.base import CommandError

from console import uploads
from console.management.cli.base import FAILED, OK, USAGE, common, holdable
from console.management.cli.parsing import topic_argument
from console.purge import actions, core, held, reads


def add_parsers(area) -> None:
    sub = area.add_parser("records", help="purge (kafka-delete-records)").add_subparsers(
        dest="action", required=True
    )
    p = sub.add_parser("purge", help="delete a topic's records below an offset, older than a time, or all")
    common(p)
    topic_argument(p)
    p.add_argument(
        "--partition", type=int, action="append", default=[], metavar="N", help="a partition (repeatable)"
    )
    p.add_argument(
        "--offset",
        type=int,
        action="append",
        default=[],
        metavar="X",
        help="its offset, after each --partition (-1: the end)",
    )
    p.add_argument(
        "--before", metavar="TIME", help="records older than TIME: ISO 8601 (UTC if no zone) or ms"
    )
    p.add_argument("--all", action="store_true", help="every record: each partition to its end")
    p.add_argument(
        "--offset-json-file", metavar="FILE", help="kafka-delete-records.sh's offset JSON ('-' = stdin)"
    )
    p.add_argument("--dry-run", action="store_true", help="show what would go; nothing is changed")
    p.add_argument("--confirm", metavar="TOPIC", default="", help="the topic name, typed, to purge")
    holdable(p)


def _target(o) -> core.Target:
    topic = o["topic"]
    chosen = [bool(o["offset"]), bool(o.get("before")), o["all"], bool(o.get("offset_json_file"))]
    if sum(chosen) != 1:
        raise CommandError(
            "Give exactly one of --partition/--offset pairs, --before, --all or --offset-json-file.",
            returncode=USAGE,
        )
    if o.get("offset_json_file"):
        name = o["offset_json_file"]
        try:
            text = sys.stdin.read() if name == "-" else open(name, encoding="utf-8").read()
            doc = uploads.load_json(text)
        except OSError as exc:
            raise CommandError(f"--offset-json-file: {exc.strerror}: {name}", returncode=USAGE) from None
        except uploads.UploadError as exc:
            raise CommandError(f"--offset-json-file is not JSON: {exc}", returncode=USAGE) from None
        return reads.checked(core.offset_json_target, topic, doc)
    if o["all"]:
        if o["partition"]:
            raise CommandError("--all takes no --partition.", returncode=USAGE)
        return reads.checked(core.all_target, topic)
    if o.get("before"):
        return reads.checked(core.time_target, topic, o["before"], o["partition"])
    if len(o["partition"]) != len(o["offset"]):
        raise CommandError("Give one --offset after each --partition.", returncode=USAGE)
    return reads.checked(core.offsets_target, topic, list(zip(o["partition"], o["offset"], strict=True)))


_COLUMNS = ["partition", "start", "end", "new_start", "messages", "bytes_estimate", "groups_below"]


def _rows(plan: core.Plan) -> list[dict]:
    return [
        {
            "partition": p.partition,
            "start": p.start,
            "end": p.end,
            "new_start": p.new_start if not p.problem else p.problem,
            "messages": p.messages,
            "bytes_estimate": "unknown" if p.bytes_estimate is None else p.bytes_estimate,
            "groups_below": ",".join(f"{g}@{o}" for g, o in p.groups_below),
        }
        for p in plan.partitions
    ]


class Commands:
    """The ``records`` handlers (``self`` is the kafka BaseCommand)."""

    def _records_purge(self, cluster, actor) -> int:
        o = self.opts
        target = _target(o)
        if o["dry_run"]:
            plan = reads.dry_run(actor=actor, cluster=cluster, target=target)
            if o["output"] == "json":
                self._emit(_rows(plan), _COLUMNS, {**plan.as_json(), "dry_run": True})
                return OK
            self._emit(_rows(plan), _COLUMNS)
            self.stdout.write(f"Dry run: {plan.messages} record(s) would go. Bytes: an {core.BYTES_NOTE}.")
            if plan.groups_note:
                self.stdout.write(f"Consumer groups: {plan.groups_note}.")
            for problem in plan.problems:
                self.stdout.write(f"Refused as asked: {problem}")
            return OK
        result = self._run_or_hold(
            cluster,
            actor,
            held.GATE,
            lambda: held.prepare(actor, cluster, target, o["confirm"]),
            lambda: actions.purge_records(
                actor=actor, cluster=cluster, target=target, confirmation=o["confirm"]
            ),
        )
        if o["output"] == "json":
            self._emit(_rows(result.plan), _COLUMNS, result.as_json())
        else:
            rows = _rows(result.plan)
            for row, (_, _, now) in zip(rows, result.after_rows, strict=True):
                row["start_now"] = "unknown" if now is None else now
            self._emit(rows, [*_COLUMNS, "start_now"])
            self.stdout.write(result.message)
        return OK if result.ok else FAILED
