"""``manage.py kafka quotas list|effective|alter``: ``kafka-configs.sh --entity-type users|clients|ips``
over the client quotas area.

An entity is named as kafka-configs names it: ``--user NAME`` / ``--user-defaults``, ``--client NAME`` /
``--client-defaults`` (both: a user + client id), ``--ip ADDRESS`` / ``--ip-defaults``. ``alter`` takes
``--add-config k=v[,k=v]`` and ``--delete-config k[,k]``, ``--dry-run`` for Kafka's validate-only answer,
and the change-control options of every holdable sub-command.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from console.management.cli.base import FAILED, OK, USAGE, common, holdable
from console.quotas import actions, core, held, reads


def _entity_options(p, *, for_list: bool = False) -> None:
    for flag, what in (("user", "user principal name"), ("client", "client id"), ("ip", "IP address")):
        p.add_argument(f"--{flag}", metavar="NAME", help=f"the {what}" + (" (exact)" if for_list else ""))
        p.add_argument(f"--{flag}-defaults", action="store_true", help=f"the default {what} entity")
    if for_list:
        p.add_argument(
            "--entity-type",
            choices=["users", "clients", "ips"],
            help="every entity of this type (any name, the default too)",
        )


def add_parsers(area) -> None:
    sub = area.add_parser(
        "quotas", help="list, effective, alter (kafka-configs client quotas)"
    ).add_subparsers(dest="action", required=True)
    p = sub.add_parser("list", help="quotas by entity (all when no entity option is given)")
    common(p)
    _entity_options(p, for_list=True)
    p = sub.add_parser("effective", help="the quota per key that applies to --user + --client, or to --ip")
    common(p)
    p.add_argument("--user", metavar="NAME")
    p.add_argument("--client", metavar="CLIENT_ID")
    p.add_argument("--ip", metavar="ADDRESS")
    p = sub.add_parser(
        "alter", help="set (--add-config) or remove (--delete-config) quota keys of one entity"
    )
    common(p)
    _entity_options(p)
    p.add_argument(
        "--add-config", default="", help="k=v[,k=v]: producer_byte_rate=1048576,request_percentage=50"
    )
    p.add_argument("--delete-config", default="", help="k[,k]: the keys to remove")
    p.add_argument("--dry-run", action="store_true", help="Kafka's validate-only answer; nothing is changed")
    holdable(p)


_TYPES = {"user": core.USER, "client": core.CLIENT_ID, "ip": core.IP}
_PLURAL = {"users": core.USER, "clients": core.CLIENT_ID, "ips": core.IP}


def _named(o) -> list[tuple[str, str]]:
    out = []
    for flag, entity_type in _TYPES.items():
        if o.get(f"{flag}_defaults"):
            if o.get(flag):
                raise CommandError(f"Give --{flag} or --{flag}-defaults, not both.", returncode=USAGE)
            out.append((entity_type, core.DEFAULT))
        elif o.get(flag):
            out.append((entity_type, o[flag]))
    return out


def _changes(o) -> dict[str, object]:
    changes: dict[str, object] = {}
    for item in filter(None, (s.strip() for s in o["add_config"].split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise CommandError(f"--add-config takes key=value, not '{item}'.", returncode=USAGE)
        changes[key.strip()] = value.strip()
    for key in filter(None, (s.strip() for s in o["delete_config"].split(","))):
        if key in changes:
            raise CommandError(f"'{key}' is both added and deleted.", returncode=USAGE)
        changes[key] = None
    return changes


class Commands:
    """The ``quotas`` handlers (``self`` is the kafka BaseCommand)."""

    def _quotas_list(self, cluster, actor) -> int:
        o = self.opts
        named = _named(o)
        if len(named) > 1 or (named and o.get("entity_type")):
            raise CommandError("list filters by one entity type at a time.", returncode=USAGE)
        entity_type, name = named[0] if named else (_PLURAL.get(o.get("entity_type") or "", ""), "")
        found = reads.list_quotas(actor=actor, cluster=cluster, entity_type=entity_type, name=name)
        rows = [
            {
                "entity": r.entity.name,
                "kind": r.entity.kind,
                "quotas": ",".join(f"{k}={v}" for k, v, _ in r.shown),
            }
            for r in found.rows
        ]
        if o["output"] == "json":
            self._emit(
                [r.as_json() for r in found.rows],
                ["entity", "kind", "parts", "quotas"],
                {"count": found.count},
            )
        else:
            self._emit(rows, ["entity", "kind", "quotas"])
        return OK

    def _quotas_effective(self, cluster, actor) -> int:
        o = self.opts
        if o.get("ip"):
            if o.get("user") or o.get("client"):
                raise CommandError("Ask for --ip alone, or for --user and --client.", returncode=USAGE)
            view = reads.effective_ip_quota(actor=actor, cluster=cluster, ip=o["ip"])
        else:
            view = reads.effective_quota(
                actor=actor, cluster=cluster, user=o.get("user") or "", client_id=o.get("client") or ""
            )
        rows = [
            {
                "quota": e.key,
                "value": e.value_text,
                "unit": e.unit,
                "from": e.source.name if e.source else "no level sets it",
                "level": e.level or "",
            }
            for e in view.keys
        ]
        if o["output"] == "json":
            self._emit(view.as_json()["quotas"], ["key", "value", "source", "level"], view.as_json())
        else:
            self._emit(rows, ["quota", "value", "unit", "from", "level"])
        return OK

    def _quotas_alter(self, cluster, actor) -> int:
        o = self.opts
        entity = core.make_entity(_named(o))
        changes = _changes(o)
        if o["dry_run"]:
            result = actions.alter_quotas(
                actor=actor, cluster=cluster, entity=entity, changes=changes, validate_only=True
            )
        else:
            result = self._run_or_hold(
                cluster,
                actor,
                held.GATE,
                lambda: held.prepare(actor, cluster, entity, changes),
                lambda: actions.alter_quotas(actor=actor, cluster=cluster, entity=entity, changes=changes),
            )
        if o["output"] == "json":
            self._emit([result.as_json()], ["entity", "ok"])
        else:
            before = "before" if result.before_known else "before (unknown: controllers only)"
            rows = [
                {
                    "entity": entity.name,
                    "quota": d.key,
                    "change": d.op,
                    before: d.before_text,
                    "after": d.after_text,
                }
                for d in result.diffs
            ]
            self._emit(rows, ["entity", "quota", "change", before, "after"])
            if result.error is not None:
                self.stdout.write(f"Kafka refused: {result.error.name}: {result.error_text}")
            elif result.validate_only:
                self.stdout.write("Dry run: Kafka accepts this change. Nothing was changed.")
            else:
                self.stdout.write(result.message or f"Quotas of {entity.name} changed.")
        return OK if result.ok else FAILED
