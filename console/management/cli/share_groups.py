"""``manage.py kafka share-groups list|describe|reset-offsets|delete|delete-offsets``: ``kafka-share-groups.sh``
over the share groups area (KIP-932).

``list [--state S] [--query Q]``; ``describe --group G`` (the partitions: start offset, log end, lag) or
``--members`` or ``--state``; ``reset-offsets --group G (--all-topics | --topic T[:0,1]) (--to-earliest |
--to-latest | --to-datetime TIME | --to-offset N)`` is a dry run unless ``--execute`` (kafka-share-groups'
options; ``--to-offset`` is the console's); ``delete --group G`` and ``delete-offsets --group G --topic T``
(repeatable). ``--execute`` and the deletes take the group id as their confirmation (the group id given
is typed), and the change-control options of every holdable sub-command.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from console.management.cli.base import FAILED, NOT_FOUND, OK, common, holdable
from console.share_groups import actions, core, held, reads
from console.share_groups.reads import ShareInvalid

LIST_COLUMNS = ["group_id", "state", "members", "topics", "lag", "coordinator"]
OFFSET_COLUMNS = ["group", "topic", "partition", "start_offset", "log_end_offset", "lag"]
MEMBER_COLUMNS = ["group", "member_id", "host", "client_id", "partitions", "assignment"]
STATE_COLUMNS = ["group", "coordinator", "state", "members", "lag"]
PLAN_COLUMNS = ["group", "topic", "partition", "current_start_offset", "new_start_offset", "note"]
RESULT_COLUMNS = ["topic", "partition", "new_start_offset", "start_offset_after", "status"]


def add_parsers(area) -> None:
    sub = area.add_parser(
        "share-groups", help="list, describe, reset-offsets, delete, delete-offsets (kafka-share-groups)"
    ).add_subparsers(dest="action", required=True)
    p = sub.add_parser("list", help="the cluster's share groups with state, members and total lag")
    common(p)
    p.add_argument("--query", default="", help="part of the group id")
    p.add_argument("--state", default="", choices=["", *core.STATES], help="only groups in this state")
    p = sub.add_parser(
        "describe", help="a share group's partitions (start offset, lag), --members or --state"
    )
    common(p)
    p.add_argument("--group", required=True)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--offsets", action="store_true", help="the partitions (the default)")
    what.add_argument("--members", action="store_true")
    what.add_argument("--state", action="store_true")
    p = sub.add_parser(
        "reset-offsets", help="plan (--dry-run, the default) or --execute a reset of an empty group"
    )
    common(p)
    p.add_argument("--group", required=True)
    scope = p.add_mutually_exclusive_group(required=True)
    scope.add_argument("--all-topics", action="store_true", help="every partition with share state")
    scope.add_argument("--topic", help="TOPIC (all partitions) or TOPIC:0,1,2")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--to-earliest", action="store_true")
    how.add_argument("--to-latest", action="store_true")
    how.add_argument("--to-datetime", metavar="TIME", help="YYYY-MM-DDThh:mm:ss.sss (UTC)")
    how.add_argument("--to-offset", type=int, metavar="N", help="(the console's; clamped to the log)")
    run = p.add_mutually_exclusive_group()
    run.add_argument("--dry-run", action="store_true", help="show the plan only (the default)")
    run.add_argument("--execute", action="store_true", help="reset (the group must be empty)")
    holdable(p)
    p = sub.add_parser("delete", help="delete an empty share group")
    common(p)
    p.add_argument("--group", required=True)
    holdable(p)
    p = sub.add_parser("delete-offsets", help="delete an empty share group's offsets of topics")
    common(p)
    p.add_argument("--group", required=True)
    p.add_argument("--topic", action="append", required=True, help="repeatable")
    holdable(p)


def _assignment_text(tps) -> str:
    """As kafka-share-groups prints it: ``topic:0,1,2`` per topic, topics comma-separated."""
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ",".join(f"{t}:{','.join(map(str, sorted(ps)))}" for t, ps in sorted(by_topic.items()))


class Commands:
    """The ``share-groups`` handlers (``self`` is the kafka BaseCommand)."""

    def _share_groups_list(self, cluster, actor) -> int:
        o = self.opts
        page = reads.list_page(
            actor=actor, cluster=cluster, query=o["query"], state=o["state"], per_page=1 << 30
        )
        if not page.support.supported:
            raise ShareInvalid([f"This cluster does not support share groups: {page.support.reason}"])
        rows = [{**r.as_json(), "topics": ",".join(r.topics)} for r in page.rows]
        self._emit(rows, LIST_COLUMNS, {"results": [r.as_json() for r in page.rows]})
        return OK

    def _share_groups_describe(self, cluster, actor) -> int:
        o = self.opts
        d = reads.detail(actor=actor, cluster=cluster, group_id=o["group"])
        if d is None:
            raise CommandError(f"Share group '{o['group']}' does not exist.", returncode=NOT_FOUND)
        gid = d.group_id
        if o["members"]:
            rows = [
                {"group": gid, "member_id": m.member_id, "host": m.client_host, "client_id": m.client_id,
                 "partitions": len(m.assignment), "assignment": _assignment_text(m.assignment)}
                for m in d.members
            ]  # fmt: skip
            self._emit(rows, MEMBER_COLUMNS, d.as_json())
        elif o["state"]:
            row = {
                "group": gid,
                "coordinator": d.coordinator,
                "state": d.state,
                "members": len(d.members),
                "lag": d.lag,
            }
            self._emit([row], STATE_COLUMNS, d.as_json())
        else:
            rows = [{"group": gid, **p.as_json()} for p in d.partitions]
            self._emit(rows, OFFSET_COLUMNS, d.as_json())
        return OK

    def _share_spec(self) -> core.ResetSpec:
        o = self.opts
        mode = next(m for m in core.MODES if o.get(m.replace("-", "_")) not in (None, False))
        topic = "" if o["all_topics"] else (o.get("topic") or "")
        return reads.checked(
            core.make_spec, mode, topic, offset=o.get("to_offset"), datetime_text=o.get("to_datetime") or ""
        )

    def _share_groups_reset_offsets(self, cluster, actor) -> int:
        o, spec = self.opts, self._share_spec()
        if not o["execute"]:
            rows = actions.preview_reset(actor=actor, cluster=cluster, group_id=o["group"], spec=spec)
            shown = [{"group": o["group"], **r.as_json()} for r in rows]
            self._emit(shown, PLAN_COLUMNS, {"dry_run": True, "partitions": shown})
            if not o["dry_run"] and o["output"] == "table":
                self.stderr.write(
                    "This was a dry run: add --execute to reset (--dry-run says so explicitly)."
                )
            return OK
        result = self._run_or_hold(
            cluster, actor, held.GATE_RESET,
            lambda: held.prepare_reset(actor, cluster, o["group"], spec, o["group"]),
            lambda: actions.reset_offsets(actor=actor, cluster=cluster, group_id=o["group"], spec=spec, confirmation=o["group"]),
        )  # fmt: skip
        body = result.as_json()
        self._emit(body["partitions"], RESULT_COLUMNS, body)
        if not result.ok:
            self.stderr.write(result.message)
        return OK if result.ok else FAILED

    def _share_groups_delete(self, cluster, actor) -> int:
        o = self.opts
        result = self._run_or_hold(
            cluster, actor, held.GATE_DELETE,
            lambda: held.prepare_delete(actor, cluster, o["group"], o["group"]),
            lambda: actions.delete_group(actor=actor, cluster=cluster, group_id=o["group"], confirmation=o["group"]),
        )  # fmt: skip
        self._emit(
            [{"group": o["group"], "ok": result.ok, "message": result.message}],
            ["group", "ok", "message"],
            result.as_json(),
        )
        return OK if result.ok else FAILED

    def _share_groups_delete_offsets(self, cluster, actor) -> int:
        o = self.opts
        result = self._run_or_hold(
            cluster, actor, held.GATE_DELETE,
            lambda: held.prepare_delete(actor, cluster, o["group"], o["group"], o["topic"]),
            lambda: actions.delete_offsets(
                actor=actor, cluster=cluster, group_id=o["group"], topics=o["topic"], confirmation=o["group"]
            ),
        )  # fmt: skip
        rows = [
            {"topic": t, "status": "Successful" if e is None else f"{e.name}: {e.operator_text}"}
            for t, e in result.results.items()
        ]
        self._emit(rows, ["topic", "status"], result.as_json())
        return OK if result.ok else FAILED


# The area's name has a dash (as kafka-share-groups'); the command finds a handler as
# ``_<area>_<action>`` with the area as typed.
for _action in ("list", "describe", "reset_offsets", "delete", "delete_offsets"):
    setattr(Commands, f"_share-groups_{_action}", getattr(Commands, f"_share_groups_{_action}"))
