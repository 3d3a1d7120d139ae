"""``manage.py kafka topics|configs|groups …``: kafka-topics, kafka-configs and kafka-consumer-groups over the area actions.

Same permission checks, policy and audit trail as the web pages (the actor is ``--as USER``).

Exit codes (stable, for scripts):
  0  everything asked for succeeded (or validated)
  1  Kafka refused some or all resources (the per-resource table says which)
  2  usage error (bad arguments)
  3  permission denied
  4  refused before reaching Kafka: policy violation, invalid input, unconfirmed delete
  5  Kafka could not be asked (unreachable, timeout, authorization) — nothing is known to have changed
  6  not found: cluster, user or topic
  7  the console's database refused the "requested" audit event: nothing was sent to Kafka
"""

from __future__ import annotations

import json
import sys

from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from console.audit import outcomes as outcomes_log
from console.clusters import actions as cluster_actions
from console.configs import actions as configs
from console.configs import plan as config_plan
from console.forms.configs import parse_key_values
from console.groups import command as groups_command
from console.kafka import ConfigChange, KafkaOperationError
from console.management.actors import command_actor
from console.models import Cluster
from console.topics import actions as topics
from console.topics import delete as topic_delete
from console.topics import reads as topic_reads
from console.topics.batch import BatchParseError, TopicSpec, parse_batch
from console.topics.policy import PolicyViolation

OK, FAILED, USAGE, DENIED, REFUSED, KAFKA, NOT_FOUND = 0, 1, 2, 3, 4, 5, 6
AUDIT_UNAVAILABLE = 7


def _common(p) -> None:
    p.add_argument("--cluster", help="registered cluster name (default: the only one)")
    p.add_argument(
        "--as",
        dest="actor",
        help="acting console user (default: the system actor console-system, shown as such in the audit)",
    )
    p.add_argument("--output", choices=("table", "json"), default="table")


def _assignment(text: str | None) -> list[list[int]] | None:
    """kafka-topics' format: partitions separated by ',', replicas by ':' (``1:2,2:3``)."""
    if not text:
        return None
    try:
        return [[int(b) for b in part.split(":")] for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(
            f"--replica-assignment must look like 1:2,2:3, not {text!r}", returncode=USAGE
        ) from None


class Command(groups_command.GroupsCommands, BaseCommand):
    help = "Topics and configs like kafka-topics / kafka-configs, through the console (audited)."

    def add_arguments(self, parser) -> None:
        area = parser.add_subparsers(dest="area", required=True)
        t = area.add_parser("topics", help="list, describe, create, delete, add-partitions").add_subparsers(
            dest="action", required=True
        )
        p = t.add_parser("list")
        _common(p)
        p.add_argument("--query", default="")
        p.add_argument("--regex", action="store_true")
        p.add_argument("--internal", action="store_true", help="include internal topics")
        p.add_argument("--unhealthy", action="store_true", help="only under-replicated or offline")
        p.add_argument("--refresh", action="store_true", help="bypass the metadata cache")
        p = t.add_parser("describe")
        _common(p)
        p.add_argument("topic")
        p = t.add_parser("create")
        _common(p)
        p.add_argument("topic", nargs="?")
        p.add_argument("--partitions", type=int, default=-1)
        p.add_argument("--replication-factor", type=int, default=-1)
        p.add_argument("--replica-assignment")
        p.add_argument("--config", action="append", default=[], help="key=value (repeatable)")
        p.add_argument("--file", help="batch: a YAML/JSON/CSV file ('-' = stdin)")
        p.add_argument("--validate-only", action="store_true")
        p = t.add_parser("delete")
        _common(p)
        p.add_argument("topics", nargs="+")
        p.add_argument("--confirm", default="", help="the topic name, or the number of topics for several")
        p.add_argument("--validate-only", action="store_true", help="show what would be deleted or refused")
        p = t.add_parser("add-partitions")
        _common(p)
        p.add_argument("topic")
        p.add_argument("--partitions", type=int, required=True, help="the new total")
        p.add_argument("--replica-assignment", help="for the new partitions only")
        p.add_argument("--validate-only", action="store_true")
        k = area.add_parser("cluster", help="describe").add_subparsers(dest="action", required=True)
        _common(k.add_parser("describe", help="cluster id, active controller (quorum leader), brokers"))
        groups_command.add_parsers(area, _common)
        c = area.add_parser("configs", help="describe, alter").add_subparsers(dest="action", required=True)
        for name in ("describe", "alter"):
            p = c.add_parser(name)
            _common(p)
            p.add_argument("--entity-type", choices=("topics", "brokers"), required=True)
            group = p.add_mutually_exclusive_group(required=True)
            group.add_argument("--entity-name")
            group.add_argument("--entity-default", action="store_true", help="cluster-wide broker defaults")
            if name == "alter":
                p.add_argument("--add-config", action="append", default=[], help="k=v (SET; repeatable)")
                p.add_argument("--delete-config", action="append", default=[], help="key (reset to default)")
                p.add_argument("--append-config", action="append", default=[], help="k=v (list append)")
                p.add_argument("--subtract-config", action="append", default=[], help="k=v (list subtract)")
                p.add_argument("--validate-only", action="store_true")

    # -- plumbing ------------------------------------------------------------------------------------

    def handle(self, *args, **opts) -> None:
        self.opts = opts
        cluster, actor = self._cluster(opts.get("cluster")), self._actor(opts.get("actor"))
        handler = getattr(self, f"_{opts['area']}_{opts['action'].replace('-', '_')}")
        try:
            code = handler(cluster, actor)
        except PermissionDenied as exc:
            raise CommandError(str(exc), returncode=DENIED) from None
        except PolicyViolation as exc:
            raise CommandError(str(exc), returncode=REFUSED) from None
        except (topic_delete.ConfirmationError, config_plan.ConfigPlanError, BatchParseError) as exc:
            raise CommandError(str(exc), returncode=REFUSED) from None
        except outcomes_log.AuditUnavailable as exc:
            raise CommandError(str(exc), returncode=AUDIT_UNAVAILABLE) from None
        except KafkaOperationError as exc:
            code = NOT_FOUND if exc.name == "UNKNOWN_TOPIC_OR_PARTITION" else KAFKA
            raise CommandError(f"{exc.name}: {exc.operator_text}", returncode=code) from None
        if code:
            raise CommandError("Kafka refused some of the request (see above).", returncode=code)

    def _cluster(self, name: str | None) -> Cluster:
        if name:
            cluster = Cluster.objects.filter(name=name).first()
            if cluster is None:
                raise CommandError(f"No cluster named '{name}' is registered.", returncode=NOT_FOUND)
            return cluster
        clusters = list(Cluster.objects.all()[:2])
        if len(clusters) != 1:
            raise CommandError(
                "Name the cluster with --cluster.", returncode=USAGE if clusters else NOT_FOUND
            )
        return clusters[0]

    def _actor(self, username: str | None):
        return command_actor(username, returncode=NOT_FOUND)

    def _emit(self, rows: list[dict], columns: list[str], extra: dict | None = None) -> None:
        if self.opts["output"] == "json":
            self.stdout.write(json.dumps({**(extra or {}), "items": rows}, indent=2, default=str))
            return
        widths = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in rows]) for c in columns}
        self.stdout.write("  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip())
        for r in rows:
            self.stdout.write("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns).rstrip())

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
        return OK if all(o.ok for o in outcomes) else FAILED

    # -- topics --------------------------------------------------------------------------------------

    def _cluster_describe(self, cluster, actor) -> int:
        """The overview's facts; the active controller is the KRaft quorum's leader, as on the page."""
        data = cluster_actions.overview(actor=actor, cluster=cluster)
        if data.error is not None:
            raise data.error
        controller = data.active_controller if data.active_controller is not None else "unknown"
        rows = [{"id": b.id, "host": b.host, "port": b.port, "rack": b.rack or ""} for b in data.info.brokers]
        extra = {"cluster_id": data.info.cluster_id, "active_controller": controller}
        if self.opts["output"] != "json":
            self.stdout.write(f"cluster id: {data.info.cluster_id}  active controller: {controller}")
            if data.controller_unknown:
                self.stdout.write(data.controller_unknown)
        self._emit(rows, ["id", "host", "port", "rack"], extra)
        return OK

    def _topics_list(self, cluster, actor) -> int:
        o = self.opts
        first = topic_reads.list_topics(
            actor=actor,
            cluster=cluster,
            query=o["query"],
            regex=o["regex"],
            include_internal=o["internal"],
            unhealthy_only=o["unhealthy"],
            refresh=o["refresh"],
            per_page=topic_reads.MAX_PER_PAGE,
        )
        if first.query_error:
            raise CommandError(first.query_error, returncode=USAGE)
        items = list(first.items)
        for page in range(2, first.pages + 1):
            items += topic_reads.list_topics(
                actor=actor,
                cluster=cluster,
                query=o["query"],
                regex=o["regex"],
                include_internal=o["internal"],
                unhealthy_only=o["unhealthy"],
                page=page,
                per_page=topic_reads.MAX_PER_PAGE,
            ).items
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
        result = topics.create_topics(
            actor=actor, cluster=cluster, specs=specs, validate_only=o["validate_only"]
        )
        return self._outcomes(result.outcomes, o["validate_only"])

    def _topics_delete(self, cluster, actor) -> int:
        o = self.opts
        if o["validate_only"]:
            preview = topic_delete.delete_preview(actor=actor, cluster=cluster, names=o["topics"])
            rows = [{"topic": n, "would": "refuse" if r else "delete", "reason": r} for n, r in preview]
            self._emit(rows, ["topic", "would", "reason"], {"validate_only": True})
            return OK
        result = topic_delete.delete_topics(
            actor=actor, cluster=cluster, names=o["topics"], confirmation=o["confirm"]
        )
        return self._outcomes(result.outcomes, False)

    def _topics_add_partitions(self, cluster, actor) -> int:
        o = self.opts
        outcome = topics.add_partitions(
            actor=actor,
            cluster=cluster,
            topic=o["topic"],
            total_count=o["partitions"],
            assignment=_assignment(o["replica_assignment"]),
            validate_only=o["validate_only"],
        )
        return self._outcomes([outcome], o["validate_only"])

    # -- configs -------------------------------------------------------------------------------------

    def _resource(self):
        o = self.opts
        if o["entity_type"] == "topics":
            if o["entity_default"]:
                raise CommandError("Topics have no --entity-default; name the topic.", returncode=USAGE)
            return configs.topic_resource(o["entity_name"])
        return configs.broker_resource(None if o["entity_default"] else o["entity_name"])

    def _configs_describe(self, cluster, actor) -> int:
        view = configs.describe_configs(actor=actor, cluster=cluster, resource=self._resource())
        rows = [
            {
                "name": r.name,
                "value": r.display_value,
                "source": r.source,
                "read_only": r.read_only,
                "sensitive": r.sensitive,
            }
            for r in view.rows
        ]
        self._emit(rows, ["name", "value", "source", "read_only", "sensitive"])
        return OK

    def _configs_alter(self, cluster, actor) -> int:
        o = self.opts
        changes = []
        for flag, op in (("add_config", "SET"), ("append_config", "APPEND"), ("subtract_config", "SUBTRACT")):
            for item in o[flag]:
                key, sep, value = item.partition("=")
                if not sep or not key:
                    raise CommandError(
                        f"--{flag.replace('_', '-')} needs key=value, not {item!r}", returncode=USAGE
                    )
                changes.append(ConfigChange(key.strip(), op, value))
        changes += [ConfigChange(k.strip(), "DELETE") for k in o["delete_config"]]
        if not changes:
            raise CommandError("Nothing to change: use --add-config, --delete-config, ...", returncode=USAGE)
        result = configs.alter_configs(
            actor=actor,
            cluster=cluster,
            resource=self._resource(),
            changes=changes,
            validate_only=o["validate_only"],
        )
        rows = [
            {
                "name": d.name,
                "op": d.op,
                "before": d.old_display,
                "after": d.new_display,
                "source": f"{d.old_source_label} -> {d.new_source_label}",
            }
            for d in result.diffs
        ]
        status = (
            "valid (dry run)"
            if result.ok and result.validate_only
            else ("applied" if result.ok else "failed")
        )
        extra = {
            "validate_only": result.validate_only,
            "ok": result.ok,
            "status": status,
            "error": result.error.name if result.error else None,
        }
        self._emit(rows, ["name", "op", "before", "after", "source"], extra)
        if self.opts["output"] == "table":
            self.stdout.write(
                status + (f": {result.error.name} {result.error.operator_text}" if result.error else "")
            )
        return OK if result.ok else FAILED
