"""``manage.py kafka log-dirs describe|move|status``: moves between the log dirs of one broker, as
``kafka-log-dirs.sh --describe`` and ``kafka-reassign-partitions.sh`` (a plan with ``log_dirs``) do.

``describe --broker B`` prints each dir (path, replicas, size, total and usable bytes) and the moves in
progress (future replicas); ``move`` takes ``--plan FILE`` (kafka-reassign-partitions' JSON, ``-``:
stdin) or ``--broker B --topic T --partition P [--partition ...] --dir D``, prints the dry run with
``--dry-run`` (the default) and starts the move with ``--execute`` (``--throttle BYTES``: the intra-broker
throttle while it runs, taken back after); it takes the change-control options of every holdable
sub-command. ``status ID`` prints a move's progress per replica.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from console import uploads
from console.logdirs import actions, core, held, reads
from console.management.cli.base import FAILED, IN_PROGRESS, NOT_FOUND, OK, USAGE, common, holdable, read_text
from console.models import Operation

DIR_COLUMNS = ["path", "state", "replicas", "size_bytes", "total_bytes", "usable_bytes"]
MOVING_COLUMNS = ["topic", "partition", "from", "to", "copied_bytes", "size_bytes", "offset_lag", "percent"]
PLAN_COLUMNS = ["broker", "topic", "partition", "current_dir", "dir", "bytes", "problem"]
STATUS_COLUMNS = [
    "broker",
    "topic",
    "partition",
    "dir",
    "state",
    "copied_bytes",
    "size_bytes",
    "percent",
    "failed",
]


def add_parsers(area) -> None:
    sub = area.add_parser(
        "log-dirs", help="describe a broker's log dirs, move replicas between them (kafka-log-dirs)"
    ).add_subparsers(dest="action", required=True)
    p = sub.add_parser("describe", help="a broker's log dirs and the moves in progress")
    common(p)
    p.add_argument("--broker", type=int, required=True, metavar="B")
    p = sub.add_parser("move", help="move replicas between the log dirs of their broker")
    common(p)
    p.add_argument(
        "--plan", metavar="FILE", help="kafka-reassign-partitions' plan with log_dirs ('-': stdin)"
    )
    p.add_argument("--broker", type=int, metavar="B")
    p.add_argument("--topic", metavar="T")
    p.add_argument("--partition", type=int, action="append", default=[], metavar="P", help="repeatable")
    p.add_argument("--dir", metavar="D", help="the target log dir (absolute)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--dry-run", action="store_true", help="show the plan (the default); nothing is changed")
    g.add_argument("--execute", action="store_true", help="start the move")
    p.add_argument("--throttle", type=int, metavar="BYTES", help="bytes/s per broker while moving")
    holdable(p)
    p = sub.add_parser("status", help="a move's progress per replica")
    common(p)
    p.add_argument("id", type=int, help="the move's operation id")


def _moves(self, cluster) -> list[core.Move]:
    o = self.opts
    given = [o.get("broker") is not None, bool(o.get("topic")), bool(o["partition"]), bool(o.get("dir"))]
    if o.get("plan"):
        if any(given):
            raise CommandError("--plan takes no --broker/--topic/--partition/--dir.", returncode=USAGE)
        text = read_text(o["plan"], self.stdin if hasattr(self, "stdin") else None)
        try:
            doc = uploads.load_json(text)
        except uploads.UploadError as exc:
            raise CommandError(f"--plan is not JSON: {exc}", returncode=USAGE) from None
        return reads.plan_file_moves(cluster, doc)
    if not all(given):
        raise CommandError(
            "Give --plan FILE, or --broker, --topic, --partition (repeatable) and --dir.", returncode=USAGE
        )
    return reads.checked(core.form_moves, o["broker"], o["topic"], o["partition"], o["dir"])


class Commands:
    """The ``log-dirs`` handlers (``self`` is the kafka BaseCommand)."""

    def _log_dirs_describe(self, cluster, actor) -> int:
        view = reads.describe(actor=actor, cluster=cluster, broker=self.opts["broker"], limit=0)
        body = view.as_json()
        rows = [
            {**d, "state": "offline" if d["offline"] else "online", "replicas": d["replicas"]}
            for d in body["log_dirs"]
        ]
        if self.opts["output"] == "json":
            self._emit(rows, DIR_COLUMNS, body)
            return OK
        self._emit(rows, DIR_COLUMNS)
        if body["moving"]:
            self.stdout.write("Moves in progress (future replicas):")
            self._emit(body["moving"], MOVING_COLUMNS)
        else:
            self.stdout.write("No replica is moving between this broker's dirs.")
        return OK

    def _log_dirs_move(self, cluster, actor) -> int:
        o = self.opts
        moves = _moves(self, cluster)
        if not o["execute"]:
            plan = reads.dry_run(actor=actor, cluster=cluster, moves=moves)
            rows = [r.as_json() for r in plan.rows]
            self._emit(rows, PLAN_COLUMNS, {**plan.as_json(), "dry_run": True})
            if o["output"] != "json":
                self.stdout.write(f"Dry run: {len(rows)} replica(s), {plan.total_bytes} bytes to copy.")
                for problem in plan.problems:
                    self.stdout.write(f"Refused as asked: {problem}")
            return OK if not plan.problems else FAILED
        op = self._run_or_hold(
            cluster,
            actor,
            held.GATE,
            lambda: held.prepare(actor, cluster, moves, o.get("throttle")),
            lambda: actions.move_replicas(
                actor=actor, cluster=cluster, moves=moves, throttle=o.get("throttle")
            ),
        )
        body = reads.move_json(op)
        self._emit(body["moves"], STATUS_COLUMNS, body)
        if o["output"] != "json":
            self.stdout.write(
                f"Move #{op.pk} started; follow it with 'kafka log-dirs status {op.pk}'"
                + (
                    f" (throttle {o['throttle']} bytes/s per broker, taken back after)."
                    if o.get("throttle")
                    else "."
                )
            )
        return OK

    def _log_dirs_status(self, cluster, actor) -> int:
        try:
            op = actions.get_move(actor=actor, cluster=cluster, op_id=self.opts["id"])
        except Operation.DoesNotExist:
            raise CommandError(
                f"No move #{self.opts['id']} on {cluster.name}.", returncode=NOT_FOUND
            ) from None
        body = reads.move_json(op)
        self._emit(body["moves"], STATUS_COLUMNS, body)
        if self.opts["output"] != "json":
            self.stdout.write(f"{op.state}: {op.progress_text or op.error or ''}".rstrip(": "))
        if not op.finished:
            return IN_PROGRESS
        return OK if op.state == "succeeded" else FAILED


# The area is spelled "log-dirs" on the command line (as kafka-log-dirs.sh); the command looks its
# handlers up as ``_<area>_<action>``.
for _action in ("describe", "move", "status"):
    setattr(Commands, f"_log-dirs_{_action}", getattr(Commands, f"_log_dirs_{_action}"))
