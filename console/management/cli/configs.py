"""``manage.py kafka configs describe|alter``: kafka-configs over the config actions."""

from __future__ import annotations

from django.core.management.base import CommandError

from console.configs import actions as configs
from console.configs import held as configs_held
from console.kafka import ConfigChange
from console.management.cli.base import FAILED, OK, USAGE, common, holdable


def _entity(ns) -> str:
    """kafka-configs' ``--topic`` / ``--broker`` / ``--broker-defaults`` as the entity options they stand for."""
    shorthand = (
        ("topics", ns.topic, False) if ns.topic
        else ("brokers", ns.broker, False) if ns.broker
        else ("brokers", None, True) if ns.broker_defaults
        else None
    )  # fmt: skip
    if shorthand:
        if ns.entity_type not in (None, shorthand[0]):
            return (
                f"--entity-type {ns.entity_type} does not go with that shorthand (it names {shorthand[0]})."
            )
        ns.entity_type, ns.entity_name, ns.entity_default = shorthand
    if not ns.entity_type:
        return "Say what to configure: --entity-type topics|brokers, or --topic TOPIC / --broker ID."
    if not ns.entity_name and not ns.entity_default:
        return "Name the entity: --entity-name NAME (or --entity-default for the brokers' defaults)."
    return ""


def add_parsers(area) -> None:
    """``configs``, with kafka-configs' option names."""
    c = area.add_parser("configs", help="describe, alter").add_subparsers(dest="action", required=True)
    for name in ("describe", "alter"):
        p = c.add_parser(name)
        common(p)
        p.add_argument("--entity-type", choices=("topics", "brokers"))
        group = p.add_mutually_exclusive_group()
        group.add_argument("--entity-name")
        group.add_argument("--entity-default", action="store_true", help="cluster-wide broker defaults")
        # kafka-configs' shorthands for the two entity options
        group.add_argument("--topic", metavar="TOPIC", help="= --entity-type topics --entity-name TOPIC")
        group.add_argument("--broker", metavar="ID", help="= --entity-type brokers --entity-name ID")
        group.add_argument(
            "--broker-defaults", action="store_true", help="= --entity-type brokers --entity-default"
        )
        p.checks.append(_entity)
        if name == "alter":
            p.add_argument("--add-config", action="append", default=[], help="k=v (SET; repeatable)")
            p.add_argument("--delete-config", action="append", default=[], help="key (reset to default)")
            p.add_argument("--append-config", action="append", default=[], help="k=v (list append)")
            p.add_argument("--subtract-config", action="append", default=[], help="k=v (list subtract)")
            p.add_argument("--validate-only", action="store_true")
            holdable(p)


class Commands:
    """The ``configs`` handlers (``self`` is the kafka BaseCommand)."""

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
        resource = self._resource()

        def run():
            return configs.alter_configs(
                actor=actor,
                cluster=cluster,
                resource=resource,
                changes=changes,
                validate_only=o["validate_only"],
            )

        if o["validate_only"]:
            result = run()
        else:
            result = self._run_or_hold(
                cluster,
                actor,
                configs_held.gate_kind(resource.type),
                lambda: configs_held.prepare_config(actor, cluster, resource, changes),
                run,
            )
        rows = [
            {
                "name": d.name,
                "op": d.op,
                "before": d.old_display,
                "after": d.new_display + (f" ({d.applies_note})" if d.applies_note else ""),
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
            "confirmed": result.confirmed,
            "unconfirmed": list(result.unconfirmed),
        }
        self._emit(rows, ["name", "op", "before", "after", "source"], extra)
        if self.opts["output"] == "table":
            self.stdout.write(
                status + (f": {result.error.name} {result.error.operator_text}" if result.error else "")
            )
            if result.message:
                self.stdout.write(result.message)
        return OK if result.ok else FAILED
