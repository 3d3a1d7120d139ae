"""``manage.py kafka audit search|verify|export``: the audit page's search, chain check and export.

``search`` takes the page's filter fields (validated by its form: a username also finds the events
written with that user's API tokens) and pages through events newest first up to ``--limit``;
``verify`` is the page's chain check (with ``--anchor`` files checked as ``manage.py audit_verify``
does); ``export`` streams the export the page offers (JSON Lines, or CSV), audited as an export.
None of them takes ``--cluster`` as the cluster to act on: ``--cluster`` filters by cluster name.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from console.audit import export as audit_export
from console.audit import review as audit_review
from console.audit.anchor import AnchorError, anchor_problem, parse_anchor
from console.forms.audit import AuditFilterForm
from console.integrity import chain as chain_reads
from console.management.cli.base import FAILED, OK, USAGE, common

COLUMNS = ["id", "created_at", "actor", "on_behalf_of", "cluster", "action", "outcome", "targets"]
# the form's fields and their options' dests (--actor and --action would clash with --as and the
# sub-command's own dests)
FILTERS = {f: f for f in ("cluster", "resource", "outcome", "since", "until", "external")}
FILTERS |= {"actor": "event_actor", "action": "event_action"}


def add_parsers(area) -> None:
    a = area.add_parser("audit", help="search, verify, export (the audit trail)")
    sub = a.add_subparsers(dest="action", required=True)
    for name, text in (("search", "events newest first"), ("export", "every matching event, as a file")):
        p = sub.add_parser(name, help=text)
        common(p, cluster=False, formats=("table", "json") if name == "search" else ("json", "csv"))
        p.set_defaults(needs_cluster=False)
        p.add_argument(
            "--actor", dest="event_actor", default="", help="username (also finds their API tokens' events)"
        )
        p.add_argument(
            "--action",
            dest="event_action",
            default="",
            help="topic.create, or topic for every topic.* action",
        )
        p.add_argument("--cluster", default="", help="cluster name")
        p.add_argument("--resource", default="", help="topic:orders, orders, or topic:orders*")
        p.add_argument("--outcome", default="")
        p.add_argument("--external", action="store_true", help="only changes made outside the console")
        p.add_argument("--since", default="", help="UTC, e.g. 2026-05-01T12:00")
        p.add_argument("--until", default="", help="UTC, exclusive")
        if name == "search":
            p.add_argument("--limit", type=int, default=audit_review.PAGE_SIZE, help="at most this many")
            p.add_argument("--before", type=int, help="only events with a smaller id (the next page)")
    p = sub.add_parser("verify", help="check the hash chain (and --anchor files)")
    common(p, cluster=False)
    p.set_defaults(needs_cluster=False)
    p.add_argument("--anchor", action="append", default=[], metavar="FILE", help="written by audit_anchor")


class Commands:
    """The ``audit`` handlers (``self`` is the kafka BaseCommand)."""

    def _audit_filter(self):
        form = AuditFilterForm({k: self.opts[d] for k, d in FILTERS.items() if self.opts[d]})
        if not form.is_valid():
            problems = [
                f"--{k}: {' '.join(v)}" if k != "__all__" else " ".join(v) for k, v in form.errors.items()
            ]
            raise CommandError("; ".join(problems), returncode=USAGE)
        return form.to_filter()

    def _audit_search(self, cluster, actor) -> int:
        f, limit, before, rows = self._audit_filter(), max(1, self.opts["limit"]), self.opts["before"], []
        while len(rows) < limit:
            page = audit_review.search_events(actor=actor, audit_filter=f, before=before)
            rows += [
                {
                    "id": e.pk,
                    "created_at": e.created_at.isoformat(timespec="seconds"),
                    "actor": e.actor_name,
                    "on_behalf_of": e.on_behalf_of,
                    "cluster": e.cluster_name,
                    "action": e.action,
                    "outcome": e.outcome,
                    "targets": ",".join(e.targets) if self.opts["output"] == "table" else e.targets,
                }
                for e in page.events
            ]
            if page.older_than is None:
                break
            before = page.older_than
        rows = rows[:limit]
        older = rows[-1]["id"] if len(rows) == limit else None
        self._emit(rows, COLUMNS, {"older_than": older})
        return OK

    def _audit_export(self, cluster, actor) -> int:
        fmt = "csv" if self.opts["output"] == "csv" else "jsonl"
        qs = audit_export.start_export(actor=actor, audit_filter=self._audit_filter(), fmt=fmt)
        for chunk in (audit_export.export_csv if fmt == "csv" else audit_export.export_jsonl)(qs):
            self.stdout.write(chunk, ending="")
        return OK

    def _audit_verify(self, cluster, actor) -> int:
        anchors = []
        for name in self.opts["anchor"]:
            try:
                anchors.append((name, parse_anchor(Path(name).read_text())))
            except (OSError, UnicodeDecodeError, AnchorError) as exc:
                raise CommandError(f"Cannot read the anchor {name}: {exc}", returncode=USAGE) from None
        status = chain_reads.chain_status(actor=actor)
        rows = []
        for name, (anchor_id, anchor_hash) in anchors:
            problem, note = anchor_problem(anchor_id, anchor_hash)
            rows.append({"anchor": name, "event": anchor_id, "ok": not problem, "message": problem or note})
        extra = {
            "ok": status.ok,
            "count": status.count,
            "verified_up_to": status.verified_up_to,
            "broken_at": status.broken_at,
            "reason": status.reason,
            "archived_up_to": status.archived_up_to,
            "note": status.note,
        }
        if self.opts["output"] == "table":
            self.stdout.write(
                f"Audit chain intact: {status.count} events, up to event {status.verified_up_to}."
                if status.ok
                else f"Audit chain BROKEN at event {status.broken_at}: {status.reason}. "
                f"Verified up to event {status.verified_up_to}."
            )
            if status.note:
                self.stdout.write(f"Note: {status.note}.")
        if rows or self.opts["output"] == "json":
            self._emit(rows, ["anchor", "event", "ok", "message"], extra)
        return OK if status.ok and all(r["ok"] for r in rows) else FAILED
