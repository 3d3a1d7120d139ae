"""``manage.py kafka groups list|describe|reset-offsets|delete|delete-offsets``: kafka-consumer-groups
over the console's group actions (same permission checks, plan, refusals and audit as the pages).

The ``kafka`` command mixes ``Commands`` in and routes ``groups <action>`` to the methods below; the
exit codes are the CLI's (console/management/cli/base.py).
As in kafka-consumer-groups, ``reset-offsets`` is a dry run unless ``--execute`` is given, and
``--execute`` (or ``delete``) is the confirmation.
"""

from __future__ import annotations

import csv
import functools
import io
import sys

from django.core.management.base import CommandError

from console.groups import actions, delete, reads
from console.groups import held as groups_held
from console.groups.core import ResetPlanError, ResetSpec, parse_offsets_csv, parse_partitions, to_csv
from console.kafka import KafkaOperationError
from console.management.cli.base import FAILED, NOT_FOUND, OK, REFUSED, USAGE, common, holdable

MODES = ("to-earliest", "to-latest", "to-datetime", "to-offset", "shift-by", "from-file")


def add_parsers(area) -> None:
    """The ``groups`` subcommands, with kafka-consumer-groups' option names."""
    g = area.add_parser("groups", help="list, describe, reset-offsets, delete, delete-offsets")
    sub = g.add_subparsers(dest="action", required=True)

    def parser(name: str, help_text: str):
        p = sub.add_parser(name, help=help_text)
        common(p)
        p.set_defaults(csv=False)
        for action in p._actions:  # --output also takes csv here
            if action.dest == "output":
                action.choices = ("table", "json", "csv")
        return p

    p = parser("list", "the cluster's consumer groups with state, members and total lag")
    p.add_argument("--query", default="", help="part of the group id")
    p.add_argument("--state", default="", help="only groups in this state (Stable, Empty, ...)")
    p.add_argument("--topic", default="", help="only groups with offsets on (or assigned) this topic")
    p.add_argument("--lagging", action="store_true", help="only groups with lag")
    p = parser("describe", "a group's partitions (offsets, lag, owner) or --members")
    p.add_argument("--group", required=True)
    p.add_argument("--members", action="store_true", help="the members and their partitions instead")
    p = parser("reset-offsets", "plan (--dry-run, the default) or --execute a reset of an empty group")
    p.add_argument("--group", required=True)
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--all-topics", action="store_true", help="every partition with a committed offset")
    scope.add_argument("--topic", help="TOPIC (all partitions) or TOPIC:0,1,5-7")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--to-earliest", action="store_true")
    how.add_argument("--to-latest", action="store_true")
    how.add_argument(
        "--to-datetime", metavar="TIME", help="2024-05-01T12:00:00 (UTC), +02:00 for a zone, or epoch ms"
    )
    how.add_argument("--to-offset", type=int, metavar="N")
    how.add_argument("--shift-by", type=int, metavar="N")
    how.add_argument("--from-file", metavar="CSV", help="topic,partition,offset lines ('-' = stdin)")
    run = p.add_mutually_exclusive_group()
    run.add_argument("--dry-run", action="store_true", help="show the plan only (the default)")
    run.add_argument("--execute", action="store_true", help="reset (the group must be empty)")
    holdable(p)
    p = parser("delete", "delete empty groups (refused while they have members)")
    p.add_argument("--group", action="append", required=True, help="repeatable")
    p = parser("delete-offsets", "delete a group's committed offsets of a topic")
    p.add_argument("--group", required=True)
    p.add_argument("--topic", required=True)
    holdable(p)


def _refusals(fn):
    """Refusals before Kafka (exit 4) and an unknown group (exit 6), as the other subcommands say them."""

    @functools.wraps(fn)
    def run(self, cluster, actor) -> int:
        try:
            return fn(self, cluster, actor)
        except (ResetPlanError, actions.GroupNotEmpty, actions.ConfirmationError, delete.NoOffsets) as exc:
            raise CommandError(str(exc), returncode=REFUSED) from None
        except KafkaOperationError as exc:
            if exc.name != "GROUP_ID_NOT_FOUND":
                raise
            raise CommandError(f"{exc.name}: {exc.message}", returncode=NOT_FOUND) from None

    return run


class Commands:
    """The ``groups`` handlers of ``manage.py kafka`` (``self`` is that BaseCommand)."""

    def _groups_emit(self, rows: list[dict], columns: list[str], extra: dict | None = None) -> None:
        if self.opts["output"] != "json":  # as kafka-consumer-groups shows an unknown offset or lag
            rows = [{k: "-" if v is None else v for k, v in r.items()} for r in rows]
        if self.opts["output"] != "csv":
            self._emit(rows, columns, extra)
            return
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        self.stdout.write(out.getvalue(), ending="")

    @_refusals
    def _groups_list(self, cluster, actor) -> int:
        o, rows, page_no = self.opts, [], 1
        while True:
            page = reads.list_groups(
                actor=actor,
                cluster=cluster,
                query=o["query"],
                state=o["state"],
                topic=o["topic"],
                lagging=o["lagging"],
                page=page_no,
                per_page=reads.MAX_PER_PAGE,
            )
            rows += [
                {
                    "group": r.group_id,
                    "type": r.group_type,
                    "state": r.state,
                    "members": r.members,
                    "coordinator": r.coordinator,
                    "partitions": r.partitions,
                    "lag": r.lag,
                    "topics": ",".join(r.topics),
                }
                for r in page.items
            ]
            if page.page >= page.pages:
                break
            page_no += 1
        self._groups_emit(rows, ["group", "type", "state", "members", "partitions", "lag"])
        return OK

    @_refusals
    def _groups_describe(self, cluster, actor) -> int:
        d = reads.group_detail(actor=actor, cluster=cluster, group_id=self.opts["group"])
        extra = {"group": d.group_id, "type": d.group.group_type, "state": d.group.state}
        if self.opts["members"]:
            rows = [
                {
                    "member_id": m.member_id,
                    "client_id": m.client_id,
                    "host": m.host,
                    "partitions": m.partitions,
                }
                for m in d.members
            ]
            self._groups_emit(rows, ["client_id", "host", "member_id", "partitions"], extra)
            return OK
        rows = [
            {
                "group": d.group_id,
                "topic": p.topic,
                "partition": p.partition,
                "current_offset": p.committed,
                "log_end_offset": p.log_end,
                "lag": p.lag,
                "consumer": p.owner,
            }
            for p in d.partitions
        ]
        if self.opts["output"] == "table":
            self.stdout.write(
                f"Group {d.group_id} ({d.group.group_type}): {d.group.state}, {len(d.members)} members"
            )
        self._groups_emit(
            rows,
            ["group", "topic", "partition", "current_offset", "log_end_offset", "lag", "consumer"],
            extra,
        )
        return OK

    def _reset_spec(self) -> ResetSpec:
        o, scope, topic, partitions = self.opts, "all-topics", "", ()
        if o["topic"]:
            topic, sep, parts = o["topic"].partition(":")
            scope = "partitions" if sep else "topic"
            partitions = parse_partitions(parts) if sep else ()
        elif not o["all_topics"] and not o["from_file"]:
            raise CommandError(
                "Say what to reset: --all-topics or --topic TOPIC[:PARTITIONS].", returncode=USAGE
            )
        if o["from_file"]:
            text = sys.stdin.read() if o["from_file"] == "-" else _read(o["from_file"])
            return ResetSpec("from-file", file_offsets=parse_offsets_csv(text, o["group"]))
        for mode in MODES:
            value = o.get(mode.replace("-", "_"))
            if value is not None and value is not False:  # --to-offset 0 is an offset
                if mode == "to-datetime":
                    value = actions.timestamp_ms(value)
                return ResetSpec(mode, scope, topic, partitions, None if value is True else value)
        raise CommandError("Say how to reset: --to-earliest, --to-latest, ...", returncode=USAGE)

    @_refusals
    def _groups_reset_offsets(self, cluster, actor) -> int:
        o, spec = self.opts, self._reset_spec()
        if not o["execute"]:
            preview = actions.preview_reset(actor=actor, cluster=cluster, group_id=o["group"], spec=spec)
            if o["output"] == "csv":
                self.stdout.write(to_csv(preview.plan.rows), ending="")  # what --from-file reads back
                return OK
            rows = [
                {
                    "group": o["group"],
                    "topic": r.topic,
                    "partition": r.partition,
                    "current_offset": r.current,
                    "new_offset": r.new,
                    "lag_before": r.lag_before,
                    "lag_after": r.lag_after,
                    "note": r.note,
                }
                for r in preview.plan.rows
            ]
            extra = {"dry_run": True, "reset": spec.describe(), "blocked": preview.blocked}
            self._groups_emit(
                rows,
                ["group", "topic", "partition", "current_offset", "new_offset", "lag_before", "lag_after"],
                extra,
            )
            if not o["dry_run"] and o["output"] == "table":
                self.stderr.write(
                    "This was a dry run: add --execute to reset (--dry-run says so explicitly)."
                )
            return OK
        result = self._run_or_hold(
            cluster,
            actor,
            groups_held.GROUP_RESET,
            lambda: groups_held.prepare_group_reset(actor, cluster, o["group"], spec),
            lambda: actions.reset_offsets(
                actor=actor, cluster=cluster, group_id=o["group"], spec=spec, confirmation=o["group"]
            ),
        )
        rows = [
            {
                "topic": x.topic,
                "partition": x.partition,
                "before": x.before,
                "after": x.after,
                "status": x.status,
                "message": x.message,
            }
            for x in result.outcomes
        ]
        self._groups_emit(
            rows, ["topic", "partition", "before", "after", "status", "message"], {"executed": True}
        )
        return OK if result.all_ok else FAILED

    @_refusals
    def _groups_delete(self, cluster, actor) -> int:
        rows = []
        for group_id in dict.fromkeys(self.opts["group"]):
            try:
                done = delete.delete_group(
                    actor=actor, cluster=cluster, group_id=group_id, confirmation=group_id
                )
            except actions.GroupNotEmpty as exc:  # each group has its own outcome
                rows.append({"group": group_id, "ok": False, "status": "refused", "message": str(exc)})
            except KafkaOperationError as exc:
                status = "does not exist" if exc.name == "GROUP_ID_NOT_FOUND" else "failed"
                rows.append(
                    {
                        "group": group_id,
                        "ok": False,
                        "status": status,
                        "message": f"{exc.name}: {exc.message}",
                    }
                )
            else:
                rows.append(
                    {"group": group_id, "ok": done.ok, "status": done.status, "message": done.message}
                )
        self._groups_emit(rows, ["group", "status", "message"])
        failed = {r["status"] for r in rows if not r["ok"]}
        if not failed:
            return OK
        if any(r["ok"] for r in rows):  # some deleted, some not
            return FAILED
        return {frozenset({"refused"}): REFUSED, frozenset({"does not exist"}): NOT_FOUND}.get(
            frozenset(failed), FAILED
        )

    @_refusals
    def _groups_delete_offsets(self, cluster, actor) -> int:
        o = self.opts
        result = self._run_or_hold(
            cluster,
            actor,
            groups_held.GROUP_RESET,
            lambda: groups_held.prepare_group_offsets_delete(
                actor, cluster, o["group"], o["topic"], confirmation=o["group"]
            ),
            lambda: delete.delete_offsets(
                actor=actor, cluster=cluster, group_id=o["group"], topic=o["topic"], confirmation=o["group"]
            ),
        )
        rows = [
            {
                "topic": x.topic,
                "partition": x.partition,
                "before": x.before,
                "status": x.status,
                "message": x.message,
            }
            for x in result.outcomes
        ]
        self._groups_emit(rows, ["topic", "partition", "before", "status", "message"])
        return OK if result.all_ok else FAILED


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"Cannot read {path}: {exc}", returncode=USAGE) from None
