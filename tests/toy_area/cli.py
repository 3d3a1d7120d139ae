"""``manage.py kafka retention list|set``: the toy area's command line."""

from __future__ import annotations

from console.management.cli.base import FAILED, OK, common, holdable
from tests.toy_area import actions, held


def add_parsers(area) -> None:
    sub = area.add_parser("retention", help="list, set").add_subparsers(dest="action", required=True)
    common(sub.add_parser("list"))
    p = sub.add_parser("set")
    common(p)
    p.add_argument("topic")
    p.add_argument("--retention-ms", type=int, required=True)
    holdable(p)


class Commands:
    def _retention_list(self, cluster, actor) -> int:
        self._emit(actions.list_retention(actor=actor, cluster=cluster), ["topic", "retention_ms"])
        return OK

    def _retention_set(self, cluster, actor) -> int:
        o = self.opts
        ok, message = self._run_or_hold(
            cluster,
            actor,
            held.GATE,
            lambda: held.prepare(actor, cluster, o["topic"], o["retention_ms"]),
            lambda: actions.set_retention(
                actor=actor, cluster=cluster, topic=o["topic"], retention_ms=o["retention_ms"]
            ),
        )
        self._emit([{"topic": o["topic"], "ok": ok, "message": message}], ["topic", "ok", "message"])
        return OK if ok else FAILED
