"""``manage.py kafka acls list|add|remove|effective|export|import``: kafka-acls' options over the ACL actions.

``add`` creates every combination of principals (``--allow-principal`` / ``--deny-principal``), hosts,
``--operation`` and resources, as kafka-acls does; ``remove`` first shows the bindings its filters
match now (the page's review) and deletes exactly those only with ``--force`` (or a "y" at the
prompt on a terminal). The cluster resource is ``--cluster-resource`` here (``--cluster`` names the
registered cluster on every sub-command).
"""

from __future__ import annotations

import sys

from django.core.management.base import CommandError

from console.acls import actions as acls
from console.acls import core as acl_core
from console.acls import held as acls_held
from console.kafka.types import AclBinding
from console.management.cli.base import FAILED, OK, REFUSED, USAGE, common, holdable, read_text

COLUMNS = ["principal", "permission", "operation", "resource_type", "pattern_type", "resource_name", "host"]


def add_parsers(area) -> None:
    a = area.add_parser("acls", help="list, add, remove (kafka-acls)")
    sub = a.add_subparsers(dest="action", required=True)
    for name, text in (
        ("list", "bindings matching the resource/principal options (all when none is given)"),
        ("add", "create bindings: principals x hosts x operations x resources"),
        ("remove", "delete the bindings the options match (shown first; --force to delete)"),
        ("export", "the bindings the options match as a file: YAML (for import) or kafka-acls.sh lines"),
    ):
        p = sub.add_parser(name, help=text)
        common(p)
        if name in ("add", "remove"):
            holdable(p)
        p.add_argument("--topic", action="append", default=[], help="repeatable; * for all topics")
        p.add_argument("--group", action="append", default=[], help="repeatable; * for all groups")
        p.add_argument("--transactional-id", action="append", default=[], help="repeatable")
        p.add_argument("--cluster-resource", action="store_true", help="the cluster resource (kafka-cluster)")
        p.add_argument(
            "--resource-pattern-type",
            type=str.upper,
            default="ANY" if name in ("list", "export") else "LITERAL",
            help="LITERAL or PREFIXED (list and remove also take ANY and MATCH)",
        )
        p.add_argument("--allow-principal", action="append", default=[], help="User:name (repeatable)")
        p.add_argument("--deny-principal", action="append", default=[], help="User:name (repeatable)")
        p.add_argument("--allow-host", action="append", default=[], help="IP or * (repeatable)")
        p.add_argument("--deny-host", action="append", default=[], help="IP or * (repeatable)")
        p.add_argument("--host", action="append", default=[], help="both --allow-host and --deny-host")
        p.add_argument("--operation", action="append", default=[], type=str.upper, help="READ, WRITE, ...")
        if name in ("list", "export"):
            p.add_argument("--principal", help="only this principal's bindings")
        if name == "export":
            p.add_argument("--format", choices=acl_core.EXPORT_FORMATS, default="yaml", dest="file_format")
            p.add_argument("-o", "--out-file", default="", help="write to this file instead of stdout")
        if name == "remove":
            p.add_argument("--force", action="store_true", help="delete without asking")
    p = sub.add_parser(
        "import", help="create (and delete) the bindings of a YAML or JSON file, as the batch form does"
    )
    common(p)
    holdable(p)
    p.add_argument("-f", "--file", required=True, help="a file such as `acls export` writes ('-' for stdin)")
    p.add_argument(
        "--dry-run", action="store_true", help="show what would be deleted and created, change nothing"
    )
    p = sub.add_parser(
        "effective",
        help="effective access both ways: --principal and a resource (why), --principal alone "
        "(everything it can do), a resource alone (who can do what on it)",
    )
    common(p)
    p.add_argument("--principal", default="", help="User:name")
    p.add_argument("--topic", help="the resource: a topic")
    p.add_argument("--group", help="the resource: a consumer group")
    p.add_argument("--transactional-id", help="the resource: a transactional id")
    p.add_argument(
        "--cluster-resource", action="store_true", help="the resource: the cluster (kafka-cluster)"
    )
    p.add_argument("--host", default="", help="a client address (only with a principal and a resource)")


def _row(b) -> dict:
    return {c: getattr(b, c) for c in COLUMNS}


class Commands:
    """The ``acls`` handlers (``self`` is the kafka BaseCommand)."""

    def _acl_resources(self, *, required: bool) -> list[tuple[str, str]]:
        o = self.opts
        found = [("TOPIC", n) for n in o["topic"]] + [("GROUP", n) for n in o["group"]]
        found += [("TRANSACTIONAL_ID", n) for n in o["transactional_id"]]
        if o["cluster_resource"]:
            found.append(("CLUSTER", "kafka-cluster"))
        if required and not found:
            raise CommandError(
                "Name a resource: --topic, --group, --transactional-id or --cluster-resource.",
                returncode=USAGE,
            )
        return found

    def _acls_export(self, cluster, actor) -> int:
        o = self.opts
        _, text = acls.export_acls(
            actor=actor, cluster=cluster, filters=self._acl_filters(for_delete=False), fmt=o["file_format"]
        )
        if o["out_file"]:
            try:
                with open(o["out_file"], "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as exc:
                raise CommandError(f"Cannot write {o['out_file']}: {exc}", returncode=USAGE) from None
        else:
            self.stdout.write(text, ending="")
        return OK

    def _acls_import(self, cluster, actor) -> int:
        o = self.opts
        creates, filters = acl_core.parse_batch(read_text(o["file"], sys.stdin))
        deletes = acls.preview_delete(actor=actor, cluster=cluster, filters=filters) if filters else []
        if o["dry_run"]:
            rows = [{"action": "would delete", **_row(b)} for b in deletes]
            rows += [{"action": "would create", **_row(b)} for b in creates]
            self._emit(rows, ["action", *COLUMNS], {"dry_run": True})
            return OK
        if not creates and not deletes:
            self._say("The file creates nothing and its delete filters match no binding: nothing to do.")
            return OK
        return self._acl_change(cluster, actor, deletes, creates)

    def _acls_effective(self, cluster, actor) -> int:
        o = self.opts
        named = [
            (t, n)
            for t, n in (
                ("TOPIC", o["topic"]),
                ("GROUP", o["group"]),
                ("TRANSACTIONAL_ID", o["transactional_id"]),
            )
            if n
        ] + ([("CLUSTER", "kafka-cluster")] if o["cluster_resource"] else [])
        if len(named) > 1:
            raise CommandError("Name at most one resource.", returncode=USAGE)
        resource_type, resource_name = named[0] if named else ("TOPIC", "")
        result = acls.effective(
            actor=actor,
            cluster=cluster,
            principal=o["principal"],
            resource_type=resource_type,
            resource_name=resource_name,
            host=o["host"],
        )
        if result.kind == "resource":
            rows = [
                {
                    "principal": r.principal,
                    "allowed": ",".join(r.allowed) or "-",
                    "unknown": ",".join(r.unknown) or "-",
                }
                for r in result.principals
            ]
            self._emit(
                rows, ["principal", "allowed", "unknown"], {"resource": f"{resource_type}:{resource_name}"}
            )
        elif result.kind == "principal":
            rows = [
                {
                    "resource_type": r.resource_type,
                    "pattern_type": r.pattern_type,
                    "resource_name": r.resource_name,
                    "allowed": ",".join(r.allowed) or "-",
                    "denied": ",".join(r.denied) or "-",
                }
                for r in result.patterns
            ]
            self._emit(
                rows,
                ["resource_type", "pattern_type", "resource_name", "allowed", "denied"],
                {"principal": result.principal, "super_user": result.super_user},
            )
            if result.super_user:
                self._say(f"{result.principal} is in super.users: Kafka allows it everything.")
        else:
            rows = [
                {"operation": op.operation, "outcome": op.outcome, "verdict": op.verdict}
                for op in result.operations
            ]
            self._emit(
                rows,
                ["operation", "outcome", "verdict"],
                {"principal": result.principal, "host": result.host},
            )
        return OK

    def _acl_principals(self) -> list[tuple[str, str, list[str]]]:
        """(permission, principal, hosts) for each principal given."""
        o = self.opts
        allow_hosts = o["allow_host"] + o["host"] or ["*"]
        deny_hosts = o["deny_host"] + o["host"] or ["*"]
        return [("ALLOW", p, allow_hosts) for p in o["allow_principal"]] + [
            ("DENY", p, deny_hosts) for p in o["deny_principal"]
        ]

    def _acl_filters(self, *, for_delete: bool) -> list:
        """The filters the options describe (each resource x each principal; ANY where not given)."""
        o = self.opts
        resources = self._acl_resources(required=False) or [("ANY", None)]
        who = [(perm, p, hosts) for perm, p, hosts in self._acl_principals()]
        if not who:
            hosts = o["allow_host"] + o["deny_host"] + o["host"]
            who = [("ANY", o.get("principal"), hosts or [None])]
        return [
            acl_core.validate_filter(
                {
                    "resource_type": rt,
                    "resource_name": name,
                    "pattern_type": o["resource_pattern_type"],
                    "principal": principal,
                    "host": host,
                    "operation": op,
                    "permission": perm,
                },
                for_delete=for_delete,
            )
            for rt, name in resources
            for perm, principal, hosts in who
            for host in hosts
            for op in (o["operation"] or ["ANY"])
        ]

    def _acls_list(self, cluster, actor) -> int:
        seen: dict = {}
        for f in self._acl_filters(for_delete=False):
            page_no = 1
            while True:
                listing = acls.list_acls(actor=actor, cluster=cluster, acl_filter=f, page=page_no)
                seen.update(dict.fromkeys(listing.rows))
                if listing.page >= listing.pages:
                    break
                page_no += 1
        self._emit([_row(b) for b in seen], COLUMNS, {"count": len(seen)})
        return OK

    def _acls_add(self, cluster, actor) -> int:
        o = self.opts
        who = self._acl_principals()
        if not who or not o["operation"]:
            raise CommandError(
                "Say who and what: --allow-principal/--deny-principal and --operation.", returncode=USAGE
            )
        # Built as given: change_acls validates them, and a refusal is audited as on the page.
        creates = [
            AclBinding(rt, name, o["resource_pattern_type"], principal, host, op, perm)
            for rt, name in self._acl_resources(required=True)
            for perm, principal, hosts in who
            for host in hosts
            for op in o["operation"]
        ]
        return self._acl_change(cluster, actor, [], creates)

    def _acls_remove(self, cluster, actor) -> int:
        filters = self._acl_filters(for_delete=True)
        matched = acls.preview_delete(actor=actor, cluster=cluster, filters=filters)
        if not matched:
            self._emit([], ["action", *COLUMNS], {"matched": 0, "removed": False})
            self._say("No binding matches: nothing to remove.")
            return OK
        if not self.opts["force"] and not self._confirmed(matched):
            self._emit(
                [{"action": "would delete", **_row(b)} for b in matched],
                ["action", *COLUMNS],
                {"matched": len(matched), "removed": False},
            )
            raise CommandError(
                f"{len(matched)} binding(s) match: add --force to delete exactly these.", returncode=REFUSED
            )
        return self._acl_change(cluster, actor, matched, [])

    def _confirmed(self, matched) -> bool:
        if not sys.stdin.isatty() or self.opts["output"] != "table":
            return False
        for b in matched:
            self.stdout.write(f"  {acl_core.label(b)}")
        answer = input(f"Are you sure you want to remove these {len(matched)} ACL binding(s)? (y/n) ")
        return answer.strip().lower() in ("y", "yes")

    def _acl_change(self, cluster, actor, deletes, creates) -> int:
        change = self._run_or_hold(
            cluster,
            actor,
            "acl",
            lambda: acls_held.prepare_acl_change(actor, cluster, deletes, creates),
            lambda: acls.change_acls(actor=actor, cluster=cluster, deletes=deletes, creates=creates),
        )
        rows = [
            {"action": r.action, "ok": r.ok, "message": r.message, **_row(r.binding)} for r in change.results
        ]
        self._emit(rows, ["action", *COLUMNS, "message"], {"ok": change.ok})
        return OK if change.ok else FAILED
