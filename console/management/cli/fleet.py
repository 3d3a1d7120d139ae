"""``manage.py kafka fleet``: the fleet home's rows (every cluster the actor may see, from its summary)
with the page's filter and sort, validated by the page's form. Without ``--as`` it reads as the system
actor (every registered cluster)."""

from __future__ import annotations

import dataclasses

from django.core.management.base import CommandError

from console.fleet import home
from console.forms.fleet import FleetFilterForm
from console.management.cli.base import OK, USAGE, common

COLUMNS = [key for key, _, _ in home.COLUMNS]  # the page's, in its order


def add_parsers(area) -> None:
    p = area.add_parser("fleet", help="every cluster at a glance (the fleet home)")
    common(p, cluster=False)
    p.set_defaults(action="show", needs_cluster=False)
    p.add_argument("--filter", dest="text", default="", help="text in the cluster's name or description")
    p.add_argument("--state", default="", choices=["", *home.STATES], help="only clusters in this state")
    p.add_argument("--sort", default="name", choices=list(home.SORTS), help="the column to sort by")
    p.add_argument("--desc", action="store_true", help="sort the other way round")


class Commands:
    """The ``fleet`` handler (``self`` is the kafka BaseCommand)."""

    def _fleet_show(self, cluster, actor) -> int:
        o = self.opts
        form = FleetFilterForm({"q": o["text"], "state": o["state"], "sort": o["sort"], "desc": o["desc"]})
        if not form.is_valid():
            raise CommandError(f"Invalid filter: {form.errors.as_text()}", returncode=USAGE)
        rows = [dataclasses.asdict(r) for r in home.fleet(actor, **form.query())]
        for row in rows:  # as the API answers them
            row["taken_at"] = row["taken_at"].isoformat() if row["taken_at"] else None
        if o["output"] == "json":
            self._emit(rows, COLUMNS)
            return OK
        table = []
        for row in rows:
            shown = {k: "-" if v is None else v for k, v in row.items()}
            shown["controller"] = shown["controller_id"]
            shown["brokers"] = (
                "-" if row["brokers_total"] is None else f"{row['brokers_up']}/{row['brokers_total']}"
            )
            shown["taken_at"] = row["taken_at"] or "never"
            shown["open_alerts"] = f"{row['open_alerts']} {row['alert_severity']}".strip()
            table.append(shown)
        self._emit(table, COLUMNS)
        return OK
