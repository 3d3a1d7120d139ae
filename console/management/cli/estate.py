"""``manage.py kafka estate export|plan|apply``: the estate as code, for a Git repository and CI.

- ``export [--namespace P] [-o FILE]``: the cluster's (or the namespace's) topics, overridden configs
  and ACL bindings as YAML (stdout, or FILE).
- ``plan -f FILE [--delete]``: the diff per resource, checked by Kafka's validate-only. Exit 0 when
  the cluster matches the file ("no drift"), ``DRIFT`` (9) when it differs, 4 when the file is bad
  or Kafka cannot do part of it (the rows say which).
- ``apply -f FILE --reason TEXT [--delete] --as USER``: submits the plan as one change held for
  approval by someone else (always); prints the change id.
"""

from __future__ import annotations

import sys

from django.core.management.base import CommandError

from console.estate import held, reads
from console.management.cli.base import OK, REFUSED, common, read_text

DRIFT = 9  # plan: the cluster differs from the file (docs/cli.md)
COLUMNS = ["resource", "change", "before", "after", "kafka"]


def _file(p) -> None:
    p.add_argument("-f", "--file", required=True, help="the estate YAML ('-' for stdin)")
    p.add_argument(
        "--delete",
        action="store_true",
        help="delete topics and ACL bindings of the scope that the file does not list (else they are kept)",
    )


def add_parsers(area) -> None:
    e = area.add_parser("estate", help="export, plan, apply (the estate as code)")
    sub = e.add_subparsers(dest="action", required=True)
    p = sub.add_parser("export", help="the desired state as YAML")
    common(p, formats=("table",))
    p.add_argument("--namespace", default="", help="a topic-name prefix (default: the whole cluster)")
    p.add_argument("-o", "--out-file", default="", help="write to this file instead of stdout")
    p = sub.add_parser("plan", help=f"the diff against the cluster; exit 0 no drift, {DRIFT} drift")
    common(p)
    _file(p)
    p = sub.add_parser("apply", help="submit the plan for approval (always held); prints the change id")
    common(p)
    _file(p)
    p.add_argument("--reason", required=True, help="shown to the approvers")


class Commands:
    """The ``estate`` handlers (``self`` is the kafka BaseCommand)."""

    def _estate_export(self, cluster, actor) -> int:
        o = self.opts
        text = reads.export_estate(actor=actor, cluster=cluster, namespace=o["namespace"])
        if o["out_file"]:
            with open(o["out_file"], "w", encoding="utf-8") as f:
                f.write(text)
        else:
            self.stdout.write(text, ending="")
        return OK

    def _estate_plan(self, cluster, actor) -> int:
        o = self.opts
        plan = reads.plan_estate(
            actor=actor, cluster=cluster, text=read_text(o["file"], sys.stdin), delete=o["delete"]
        )
        rows = [dict(zip(COLUMNS, row, strict=True)) for row in plan.checked_rows()]
        self._emit(
            rows,
            COLUMNS,
            {"drift": plan.drift, "ok": plan.ok, "changes": plan.changes, "refused": plan.refused},
        )
        if not plan.drift:
            self._say("no drift: the cluster matches the file")
            return OK
        if not plan.ok:
            refusals = len(plan.refused) + len(plan.answers)
            raise CommandError(f"Drift, and Kafka cannot apply it as it is: {refusals} refusal(s), see the rows.",
                               returncode=REFUSED)  # fmt: skip
        raise CommandError(
            f"Drift: {len(plan.rows)} difference(s), {plan.changes} change(s) to apply.", returncode=DRIFT
        )

    def _estate_apply(self, cluster, actor) -> int:
        o = self.opts
        req = held.submit_plan(
            actor=actor,
            cluster=cluster,
            text=read_text(o["file"], sys.stdin),
            delete=o["delete"],
            reason=o["reason"],
        )
        return self._held(req)
