"""``manage.py kafka reassign --generate|--execute|--verify|--cancel``: kafka-reassign-partitions.

The files are Kafka's: ``--topics-to-move-json-file`` (``{"version":1,"topics":[{"topic":"t"}]}``) and
``--reassignment-json-file`` (``{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}``).
``--generate`` plans with the console's planner (replicas leave the brokers not in ``--broker-list``,
fewest moves); ``--execute`` starts the console's reassignment operation (the one the page starts: same
checks, throttle ledger, audit) and prints the current assignment as the rollback file;
``--verify`` reports each partition from that operation's rows and never touches throttles (the
operation's own finish step takes them back); ``--cancel`` asks the operation to cancel, as the page
does. ``--id`` names a console reassignment; otherwise the newest one whose moves are in the file.
"""

from __future__ import annotations

import json
import sys

from django.core.management.base import CommandError
from django.utils import timezone

from console import access, operations
from console.kafka import KafkaOperationError
from console.management.cli.base import (
    FAILED,
    IN_PROGRESS,
    NOT_FOUND,
    OK,
    REFUSED,
    USAGE,
    common,
    holdable,
    read_text,
)
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import held as reassignment_held
from console.reassignment import planner, poll, queue, throttles
from console.reassignment.pacing import Pacing

COLUMNS = ["topic", "partition", "original", "target", "state", "percent", "message"]


def _verify_line(row: dict, *, stale: bool) -> str:
    """One partition's line: Kafka's own --verify wording from what Kafka has now, or (Kafka
    unreadable) the console's last state of it, marked stale."""
    name = f"{row['topic']}-{row['partition']}"
    if stale:
        verdict = {"done": "was completed", "moving": "was still in progress"}.get(row["state"], row["state"])
        said = f": {row['message']}" if row["message"] and row["state"] != "moving" else ""
        return f"Reassignment of partition {name} {verdict}{said} (stale: the console's last reading)."
    if row["kafka"] == "completed":
        line = f"Reassignment of partition {name} is completed."
    elif row["kafka"] == "in progress":
        line = f"Reassignment of partition {name} is still in progress."
    elif row["kafka"] == "missing":
        line = f"Partition {name} does not exist on Kafka (topic deleted?)."
    else:
        target = [int(b) for b in row["target"].split(",")]
        line = (
            f"There is no active reassignment of partition {name}, but replica set is "
            f"{row['kafka_replicas']} rather than {target}."
        )
    if row["state"] not in ("done", "moving") and row["message"]:  # why, as the console settled it
        line += f" Console: {row['state']}: {row['message']}."
    return line


def add_parsers(area) -> None:
    p = area.add_parser(
        "reassign",
        help="--generate, --execute, --verify, --cancel (kafka-reassign-partitions); --pause, --resume (paced)",
    )
    common(p)
    p.set_defaults(action="run")
    mode = p.add_mutually_exclusive_group(required=True)
    for flag in ("generate", "execute", "verify", "cancel", "pause", "resume"):
        mode.add_argument(f"--{flag}", action="store_true")
    p.add_argument("--reassignment-json-file", metavar="FILE", help="the plan ('-' = stdin)")
    p.add_argument("--topics-to-move-json-file", metavar="FILE", help="--generate: the topics")
    p.add_argument("--broker-list", help="--generate: the brokers to place the replicas on (1,2,3)")
    p.add_argument("--throttle", type=int, metavar="BYTES/S", help="replication throttle while moving")
    p.add_argument("--replica-alter-log-dirs-throttle", type=int, metavar="BYTES/S")
    p.add_argument("--leader-throttle", type=int, metavar="BYTES/S", help="--execute: leader rate per broker")
    p.add_argument(
        "--follower-throttle", type=int, metavar="BYTES/S", help="--execute: follower rate per broker"
    )
    p.add_argument(
        "--broker-throttle",
        action="append",
        default=[],
        metavar="BROKER=BYTES/S",
        help="--execute: that broker's own leader and follower rate (repeatable)",
    )
    p.add_argument(
        "--max-moves-per-broker",
        type=int,
        metavar="N",
        help="--execute: at most N partitions moving per broker at once; the rest queued (--pause/--resume)",
    )
    p.add_argument(
        "--additional", action="store_true", help="--execute --throttle: change a running one's rate"
    )
    p.add_argument("--elect-preferred", action="store_true", help="elect the preferred leaders at the end")
    p.add_argument("--id", type=int, help="the console reassignment (default: found from the file)")
    holdable(p)


def _json_doc(text: str) -> str:
    return json.dumps(json.loads(text), separators=(",", ":"))


class Commands:
    """The ``reassign`` handler (``self`` is the kafka BaseCommand)."""

    def _reassign_run(self, cluster, actor) -> int:
        o = self.opts
        if o["replica_alter_log_dirs_throttle"] is not None:
            raise CommandError(
                "The console does not move replicas between log directories, so it has no log-dir throttle.",
                returncode=USAGE,
            )
        for flag in ("generate", "execute", "verify", "cancel", "pause", "resume"):
            if o[flag]:
                return getattr(self, f"_reassign_{flag}")(cluster, actor)
        raise CommandError(
            "Give --generate, --execute, --verify, --cancel, --pause or --resume.", returncode=USAGE
        )

    def _pacing(self) -> Pacing:
        """--leader-throttle, --follower-throttle, --broker-throttle and --max-moves-per-broker; their
        values are checked by the start itself (refused, and audited, as the page refuses them)."""
        o = self.opts
        brokers: dict[int, int] = {}
        for item in o["broker_throttle"]:
            broker, sep, rate = item.partition("=")
            if not sep or not broker.strip().isdigit() or not rate.strip().lstrip("-").isdigit():
                raise CommandError(
                    f"--broker-throttle {item!r}: give BROKER=BYTES/S (e.g. 3=5000000).", returncode=USAGE
                )
            if int(broker) in brokers:
                raise CommandError(
                    f"--broker-throttle: broker {broker.strip()} is given twice.", returncode=USAGE
                )
            brokers[int(broker)] = int(rate)
        return Pacing(o["leader_throttle"], o["follower_throttle"], brokers, o["max_moves_per_broker"])

    def _plan_file(self) -> dict:
        name = self.opts["reassignment_json_file"]
        if not name:
            raise CommandError("--reassignment-json-file is required here.", returncode=USAGE)
        return planner.parse_plan(read_text(name, sys.stdin))

    def _reassign_generate(self, cluster, actor) -> int:
        o = self.opts
        access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
        if not o["topics_to_move_json_file"] or not o["broker_list"]:
            raise CommandError(
                "--generate needs --topics-to-move-json-file and --broker-list.", returncode=USAGE
            )
        try:
            doc = json.loads(read_text(o["topics_to_move_json_file"], sys.stdin))
            topics = [str(t["topic"]) for t in doc["topics"]]
            brokers = {int(b) for b in o["broker_list"].split(",") if b.strip()}
        except (ValueError, KeyError, TypeError) as exc:
            raise CommandError(
                'The topics file must look like {"version":1,"topics":[{"topic":"t"}]} and --broker-list '
                f"like 1,2,3 ({exc}).",
                returncode=USAGE,
            ) from None
        view = reassignment.read_cluster(cluster, cached=False)
        named = {b for replicas in view.assignment.values() for b in replicas}
        stopped = sorted((brokers - set(view.racks)) & named)  # in replica lists, not live
        unknown = sorted(brokers - set(view.racks) - named)
        if stopped:
            said = "; ".join(f"broker {b} is not reachable (down or fenced)" for b in stopped)
            raise reassignment.PlanRejected(f"--broker-list names a broker that is not running: {said}.")
        if unknown or not brokers:
            raise reassignment.PlanRejected(f"Unknown broker(s) in --broker-list: {unknown or 'none given'}.")
        plan, _ = reassignment.build_plan(
            view, intent="move_off", topics=topics, brokers=sorted(set(view.racks) - brokers)
        )
        current = planner.export_plan({tp: view.assignment[tp] for tp in plan})
        proposed = planner.export_plan(plan)
        if o["output"] == "json":
            self.stdout.write(json.dumps({"current": json.loads(current), "proposed": json.loads(proposed)}))
        else:
            self.stdout.write(f"Current partition replica assignment\n{_json_doc(current)}\n\n")
            self.stdout.write(f"Proposed partition reassignment configuration\n{_json_doc(proposed)}")
        if not plan:
            self._say("Every replica of these topics is already on the listed brokers: nothing to move.")
        return OK

    def _reassign_execute(self, cluster, actor) -> int:
        o = self.opts
        plan = self._plan_file()
        if o["additional"]:
            if o["throttle"] is None:
                raise CommandError("--additional changes the throttle: give --throttle.", returncode=USAGE)
            r = self._find(cluster, plan, running=True)
            outcomes = self._run_or_hold(
                cluster,
                actor,
                "throttle",
                lambda: reassignment_held.prepare_throttle(actor, cluster, r, o["throttle"]),
                lambda: throttles.change_throttle(actor=actor, reassignment=r, rate=o["throttle"]),
            )
            rows = [
                {"resource": k, "ok": v["ok"], "message": v.get("message", "")} for k, v in outcomes.items()
            ]
            self._emit(rows, ["resource", "ok", "message"], {"reassignment": r.pk, "throttle": o["throttle"]})
            return OK if all(v["ok"] for v in outcomes.values()) else FAILED
        # the cluster is read for those who may start (the rollback file); anyone else is refused,
        # and audited, by start_reassignment itself
        may = access.can(actor, cluster, access.MANAGE_REASSIGNMENTS)
        # Kafka as it is now, as start_reassignment reads it: the rollback file is exact
        view = reassignment.read_cluster(cluster, cached=False, only=plan) if may else None
        view_assignment = view.assignment if view is not None else {}
        rollback = planner.export_plan({tp: view_assignment[tp] for tp in plan if tp in view_assignment})
        args = {"throttle": o["throttle"], "elect_preferred": o["elect_preferred"], "pacing": self._pacing()}
        try:
            op = self._run_or_hold(
                cluster,
                actor,
                "reassignment",
                lambda: reassignment_held.prepare_reviewed(
                    actor, cluster, plan, **args, rf_change=False, expected=None
                ),
                lambda: reassignment.start_reassignment(
                    actor=actor, cluster=cluster, proposed=plan, **args, view=view
                ),
            )
        except reassignment.PlanRejected as exc:
            bad = [c for c in exc.checks if not c.ok]
            if bad:
                rows = [
                    {"topic": c.topic, "partition": c.partition, "message": "; ".join(c.problems)}
                    for c in bad
                ]
                self._emit(rows, ["topic", "partition", "message"], {"started": False, "error": str(exc)})
            raise
        r = op.reassignment
        extra = {"started": True, "reassignment": r.pk, "operation": op.pk, "rollback": json.loads(rollback)}
        if o["output"] == "table":
            self.stdout.write(
                f"Current partition replica assignment\n\n{_json_doc(rollback)}\n\n"
                "Save this to use as the --reassignment-json-file option during rollback"
            )
            self.stdout.write(
                f"Successfully started partition reassignment #{r.pk} (operation #{op.pk}) of "
                f"{r.partitions_total} partition(s)."
            )
            return OK
        self._emit(self._rows(r), COLUMNS, extra)
        return OK

    def _find(self, cluster, plan: dict, *, running: bool = False) -> Reassignment:
        """The console reassignment named by --id, or the newest whose moves are all in the file."""
        qs = Reassignment.objects.filter(cluster=cluster).select_related("operation").order_by("-pk")
        if self.opts["id"] is not None:
            found = qs.filter(pk=self.opts["id"]).first()
            if found is None:
                raise CommandError(
                    f"No reassignment #{self.opts['id']} on this cluster.", returncode=NOT_FOUND
                )
            return found
        wanted = {(t, p): list(r) for (t, p), r in plan.items()}
        for r in qs[:200]:
            if running and r.stage == "finished":
                continue
            rows = list(r.partitions.values_list("topic", "partition", "target"))
            if rows and all(wanted.get((t, p)) == list(target) for t, p, target in rows):
                return r
        raise CommandError(
            "No console reassignment moves these partitions to these replicas (give --id).",
            returncode=NOT_FOUND,
        )

    def _rows(self, r: Reassignment) -> list[dict]:
        return [
            {
                "topic": x.topic,
                "partition": x.partition,
                "original": ",".join(map(str, x.original)),
                "target": ",".join(map(str, x.target)),
                "target_list": list(x.target),
                "state": x.state,
                "percent": x.percent,
                "message": x.message,
            }
            for x in r.partitions.order_by("topic", "partition")
        ]

    def _reassign_verify(self, cluster, actor) -> int:
        """Per partition what Kafka has now, as Kafka's own --verify says it (never the console's
        last poll presented as current); when Kafka cannot be asked, the console's last reading,
        marked stale with the time it was taken, and the operation's lost contact if any."""
        access.require(actor, cluster, access.VIEW)
        plan = self._plan_file()
        r = self._find(cluster, plan)
        r.refresh_from_db()
        rows = self._rows(r)
        try:
            kafka = poll.kafka_verify(cluster, {(x["topic"], x["partition"]): x["target_list"] for x in rows})
            unread = ""
        except KafkaOperationError as err:
            kafka, unread = {}, err.operator_text
        for row in rows:
            found = kafka.get((row["topic"], row["partition"]), {})
            row["kafka"] = found.get("kafka", "unread")
            row["kafka_replicas"] = found.get("replicas")
        rollback = reassignment.rollback_plan(r)  # after a cancel Kafka restored in another order
        ledger = [
            {"resource": f"{t.resource_type}:{t.resource_name}", "config": t.config, "state": t.state}
            for t in r.throttles.order_by("pk")
        ]
        lost = operations.lost_contact(r.operation)
        read_at = r.last_poll_at.isoformat() if r.last_poll_at else None
        extra = {
            "reassignment": r.pk,
            "operation": r.operation_id,
            "stage": r.stage,
            "state": r.operation.state,
            "outcome": r.outcome,
            "partitions_done": r.partitions_done,
            "partitions_total": r.partitions_total,
            "throttles": ledger,
            "rollback_plan": json.loads(planner.export_plan(rollback)) if rollback else None,
            "kafka_read": not unread,
            "kafka_error": unread,
            "console_read_at": read_at,
            "lost_contact": lost,
            "queue": queue.queue_state(r),
        }
        if self.opts["output"] == "table":
            self.stdout.write(
                f"Reassignment #{r.pk}: {reassignment.stage_label(r)}"
                + (f" ({r.outcome})" if r.outcome else "")
                + f", {r.partitions_done} of {r.partitions_total} partitions done."
            )
            if lost:
                self.stdout.write(f"The console has {lost['text']}")
            if extra["queue"] is not None and r.stage != "finished":
                q = extra["queue"]
                self.stdout.write(
                    f"Paced: {q['text']}, {q['in_flight']} in flight, at most {q['max_moves_per_broker']} per broker."
                )
            if unread:
                self.stdout.write(
                    f"Kafka could not be read now ({unread}). The console's last reading, taken at "
                    f"{f'{timezone.localtime(r.last_poll_at):%Y-%m-%d %H:%M:%S %Z}' if r.last_poll_at else 'never'}"
                    ", follows; it is stale."
                )
            for row in rows:
                self.stdout.write(_verify_line(row, stale=bool(unread)))
            if rollback:
                self.stdout.write(
                    f"Kafka restored {len(rollback)} partition{'s' if len(rollback) != 1 else ''} in another "
                    "order. Rollback plan (their original assignment):\n"
                    + planner.export_plan(rollback)
                    + "\nSave this to use as the --reassignment-json-file option of --execute to put them back."
                )
            left = [e for e in ledger if e["state"] != "removed"]
            if r.stage == "finished":
                self.stdout.write(
                    "Throttles: "
                    + ("all taken back." if not left else f"{len(left)} not taken back (see the page).")
                )
            return self._verdict(r)
        self._emit(rows, [*COLUMNS, "kafka"], extra)
        return self._verdict(r)

    def _verdict(self, r: Reassignment) -> int:
        if r.stage != "finished":
            return IN_PROGRESS
        return OK if r.outcome == "succeeded" else FAILED

    def _reassign_cancel(self, cluster, actor) -> int:
        plan = self._plan_file()
        r = self._find(cluster, plan)
        if r.stage == "finished":
            raise reassignment.PlanRejected(f"Reassignment #{r.pk} has already finished ({r.outcome}).")
        reassignment.cancel_reassignment(actor=actor, reassignment=r)
        r.refresh_from_db()
        self._emit(self._rows(r), COLUMNS, {"reassignment": r.pk, "cancel_requested": r.cancel_requested})
        self._say(
            f"Cancel of reassignment #{r.pk} requested: Kafka takes back the replicas it was adding, then "
            "throttles go back; --verify then says what Kafka has per partition."
        )
        return OK if r.cancel_requested else REFUSED

    def _reassign_pause(self, cluster, actor) -> int:
        return self._pause_or_resume(cluster, actor, pause=True)

    def _reassign_resume(self, cluster, actor) -> int:
        return self._pause_or_resume(cluster, actor, pause=False)

    def _pause_or_resume(self, cluster, actor, *, pause: bool) -> int:
        """A paced move stops (or goes on) submitting its queued partitions, as the page's buttons do;
        the reassignment by --id, or found from the plan file as --cancel finds it."""
        r = self._find(cluster, {} if self.opts["id"] is not None else self._plan_file())
        act = queue.pause_reassignment if pause else queue.resume_reassignment
        state = act(actor=actor, reassignment=r)
        self._emit(
            [
                {
                    "reassignment": r.pk,
                    "paused": state["paused"],
                    "queued": state["queued"],
                    "in_flight": state["in_flight"],
                }
            ],
            ["reassignment", "paused", "queued", "in_flight"],
            {"reassignment": r.pk, "queue": state},
        )
        self._say(
            f"Reassignment #{r.pk} paused ({state['queued']} queued): partitions in flight finish, none start."
            if pause
            else f"Reassignment #{r.pk} resumed: {state['queued']} queued partitions start as others finish."
        )
        return OK
