"""``manage.py kafka topics …``: kafka-topics over the topic actions."""

from __future__ import annotations

import sys

from django.core.management.base import CommandError

from console.forms.configs import parse_key_values
from console.management.cli.base import FAILED, OK, REFUSED, USAGE, common, holdable
from console.management.cli.parsing import count, topic_argument
from console.topics import actions as topics
from console.topics import assignment
from console.topics import delete as topic_delete
from console.topics import held as topics_held
from console.topics import reads as topic_reads
from console.topics.batch import TopicSpec, parse_batch


def _assignment(text: str | None) -> list[list[int]] | None:
    """kafka-topics' format: partitions separated by ',', replicas by ':' (``1:2,2:3``)."""
    if not text:
        return None
    try:
        return assignment.parse(text, kafka_format=True)
    except assignment.AssignmentSyntaxError as exc:
        raise CommandError(
            "--replica-assignment must look like 1:2,2:3 (kafka-topics: partitions separated by commas, "
            f"replicas by colons); {exc}.",
            returncode=USAGE,
        ) from None


def _delete_topics(ns) -> str:
    """``delete``'s topics: the positional ones and the ``--topic`` ones, each once, in order."""
    ns.topics = list(dict.fromkeys([*ns.topics, *ns.topic_options]))
    return "" if ns.topics else "Name the topics to delete (TOPIC ... or --topic TOPIC)."


def add_parsers(area) -> None:
    """``topics`` and ``cluster``, with kafka-topics' option names."""
    t = area.add_parser("topics", help="list, describe, create, delete, add-partitions").add_subparsers(
        dest="action", required=True
    )
    p = t.add_parser("list")
    common(p)
    p.add_argument("--query", default="")
    p.add_argument("--regex", action="store_true")
    p.add_argument("--internal", action="store_true", help="include internal topics")
    p.add_argument("--unhealthy", action="store_true", help="only under-replicated or offline")
    p.add_argument("--refresh", action="store_true", help="bypass the metadata cache")
    p = t.add_parser("describe")
    common(p)
    topic_argument(p)
    p = t.add_parser("create")
    common(p)
    topic_argument(p, required=False, help_text="the topic (or --file)")
    p.add_argument("--partitions", type=count, default=-1, help="blank = the broker default")
    p.add_argument("--replication-factor", type=count, default=-1, help="blank = the broker default")
    p.add_argument("--replica-assignment", help="kafka-topics' format: 1:2,2:3 (instead of the two above)")
    p.add_argument("--config", action="append", default=[], help="key=value (repeatable)")
    p.add_argument("--file", help="batch: a YAML/JSON/CSV file ('-' = stdin)")
    p.add_argument(
        "--like",
        metavar="TOPIC",
        help="copy this topic's partition count, replication factor and configs set on it (the options given win)",
    )
    p.add_argument("--validate-only", action="store_true")
    holdable(p)
    p = t.add_parser("delete")
    common(p)
    p.add_argument("topics", nargs="*")
    p.add_argument(
        "--topic", dest="topic_options", action="append", default=[], help="as kafka-topics (repeatable)"
    )
    p.checks.append(_delete_topics)
    p.add_argument("--confirm", default="", help="the topic name, or the number of topics for several")
    p.add_argument("--validate-only", action="store_true", help="show what would be deleted or refused")
    holdable(p)
    p = t.add_parser("add-partitions")
    common(p)
    topic_argument(p)
    p.add_argument("--partitions", type=count, required=True, help="the new total")
    p.add_argument("--replica-assignment", help="for the new partitions only, as kafka-topics: 3:1,1:2")
    p.add_argument("--validate-only", action="store_true")
    holdable(p)


class Commands:
    """The ``topics`` handlers (``self`` is the kafka BaseCommand)."""

    def _outcomes(self, outcomes, validate_only: bool) -> int:
        rows = [
            {
                "topic": o.name,
                "ok": o.ok,
                "status": o.status,
                "error": o.error_name,
                "message": " ".join(filter(None, [o.message, o.warning])),
            }
            for o in outcomes
        ]
        self._emit(rows, ["topic", "status", "error", "message"], {"validate_only": validate_only})
        failed = [o for o in outcomes if not o.ok]
        if not failed:
            return OK
        # refused by the console's policy before anything was sent: 4; Kafka refused any: 1
        return REFUSED if all(o.error_name == "POLICY" for o in failed) else FAILED

    def _topics_list(self, cluster, actor) -> int:
        o = self.opts

        def listed(page: int, **fresh):
            return topic_reads.list_topics(
                actor=actor,
                cluster=cluster,
                query=o["query"],
                regex=o["regex"],
                include_internal=o["internal"],
                unhealthy_only=o["unhealthy"],
                page=page,
                per_page=topic_reads.MAX_PER_PAGE,
                **fresh,
            )

        first = listed(1, refresh=o["refresh"])  # the later pages read the same snapshot
        if first.query_error:
            raise CommandError(first.query_error, returncode=USAGE)
        items = list(first.items)
        for page in range(2, first.pages + 1):
            items += listed(page).items
        rows = [
            {
                "name": i.row.name,
                "partitions": i.row.partitions,
                "replication_factor": i.row.replication_factor,
                "under_replicated": i.row.under_replicated,
                "offline": i.row.offline,
                "internal": i.row.internal,
                "cleanup_policy": i.cleanup_policy,
                "retention_ms": i.retention_ms,
            }
            for i in items
        ]
        self._emit(rows, ["name", "partitions", "replication_factor", "under_replicated", "offline"])
        return OK

    def _topics_describe(self, cluster, actor) -> int:
        d = topic_reads.describe_topic(actor=actor, cluster=cluster, name=self.opts["topic"])
        rows = [
            {
                "partition": p.id,
                "leader": p.leader,
                "replicas": ",".join(map(str, p.replicas)),
                "isr": ",".join(map(str, p.isr)),
                "offline": ",".join(map(str, p.offline_replicas)),
                "start": p.start_offset,
                "end": p.end_offset,
                "messages": p.messages,
                "leader_not_preferred": p.leader_not_preferred,
            }
            for p in d.partitions
        ]
        overrides = {
            e.name: (None if e.sensitive else e.value)
            for e in d.configs
            if e.source == "DYNAMIC_TOPIC_CONFIG"
        }
        extra = {"topic": d.name, "topic_id": d.topic_id, "internal": d.internal, "configs": overrides}
        if self.opts["output"] == "table":
            self.stdout.write(
                f"Topic: {d.name}  id: {d.topic_id}  partitions: {len(d.partitions)}  "
                f"rf: {d.replication_factor}  configs: " + ",".join(f"{k}={v}" for k, v in overrides.items())
            )
        self._emit(
            rows, ["partition", "leader", "replicas", "isr", "offline", "start", "end", "messages"], extra
        )
        return OK

    def _topics_create(self, cluster, actor) -> int:
        o = self.opts
        if o["like"] and o["file"]:
            raise CommandError("--like copies one topic's settings: not with --file.", returncode=USAGE)
        if o["file"]:
            text = sys.stdin.read() if o["file"] == "-" else open(o["file"], encoding="utf-8").read()
            specs = parse_batch(text, None, o["file"])
        elif o["topic"]:
            cfg, errors = parse_key_values("\n".join(o["config"]))
            if errors:
                raise CommandError("; ".join(errors), returncode=USAGE)
            assignment = _assignment(o["replica_assignment"])
            specs = [
                TopicSpec(
                    o["topic"],
                    -1 if assignment else o["partitions"],
                    -1 if assignment else o["replication_factor"],
                    tuple(tuple(r) for r in assignment) if assignment else None,
                    cfg,
                )
            ]
        else:
            raise CommandError("Give a topic name or --file.", returncode=USAGE)
        if o["like"]:
            like = topic_reads.settings_of(actor=actor, cluster=cluster, name=o["like"])
            specs = [like.spec_for(specs[0])]
        if o["validate_only"]:
            result = topics.create_topics(actor=actor, cluster=cluster, specs=specs, validate_only=True)
            return self._outcomes(result.outcomes, True)
        result = self._run_or_hold(
            cluster,
            actor,
            "topic.create",
            lambda: topics_held.prepare_topic_create(actor, cluster, specs),
            lambda: topics.create_topics(actor=actor, cluster=cluster, specs=specs),
        )
        return self._outcomes(result.outcomes, False)

    def _topics_delete(self, cluster, actor) -> int:
        o = self.opts
        if o["validate_only"]:
            preview = topic_delete.delete_preview(actor=actor, cluster=cluster, names=o["topics"])
            rows = [{"topic": n, "would": "refuse" if r else "delete", "reason": r} for n, r in preview]
            self._emit(rows, ["topic", "would", "reason"], {"validate_only": True})
            return OK
        result = self._run_or_hold(
            cluster,
            actor,
            "topic.delete",
            lambda: topics_held.prepare_topic_delete(actor, cluster, o["topics"]),
            lambda: topic_delete.delete_topics(
                actor=actor, cluster=cluster, names=o["topics"], confirmation=o["confirm"]
            ),
        )
        return self._outcomes(result.outcomes, False)

    def _topics_add_partitions(self, cluster, actor) -> int:
        o = self.opts
        assignment = _assignment(o["replica_assignment"])

        def run():
            return topics.add_partitions(
                actor=actor,
                cluster=cluster,
                topic=o["topic"],
                total_count=o["partitions"],
                assignment=assignment,
                validate_only=o["validate_only"],
            )

        if o["validate_only"]:
            return self._outcomes([run()], True)
        outcome = self._run_or_hold(
            cluster,
            actor,
            "topic.partitions",
            lambda: topics_held.prepare_partitions(actor, cluster, o["topic"], o["partitions"], assignment),
            run,
        )
        return self._outcomes([outcome], False)
