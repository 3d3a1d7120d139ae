"""``manage.py kafka requests list|show|submit|approve|reject``: the self-service requests (four eyes).

``submit`` takes the kind and the payload as the API does (``--payload`` JSON, ``@FILE`` or ``-`` for
stdin), e.g. ``--kind topic.create --payload '{"name":"team-a.orders","partitions":3,"replication_factor":3}'``;
the request actions check the namespace, the policy and Kafka's validate-only as on the page, and
approving starts the change as an operation on a worker (``approve ID --at ISO [--tz ZONE]``: approve
and schedule in one action; a time inside a freeze is refused, exit 4, and nothing is approved).
"""

from __future__ import annotations

import json
import sys

from django.core.management.base import CommandError

from console.management.cli.base import NOT_FOUND, OK, USAGE, common, read_text
from console.management.cli.windows import moment
from console.requests import actions as requests
from console.requests import display as request_display
from console.requests import kinds as request_kinds

COLUMNS = ["id", "kind", "resource", "state", "requested_by", "decided_by", "created_at"]


def add_parsers(area) -> None:
    r = area.add_parser("requests", help="list, show, submit, approve, reject (self-service requests)")
    sub = r.add_subparsers(dest="action", required=True)
    p = sub.add_parser("list", help="approvers and auditors see all; others their own")
    common(p)
    p.add_argument("--state", default="", help="pending, approved, rejected, ...")
    p.add_argument("--kind", default="")
    p = sub.add_parser("show", help="a request with its payload and timeline")
    common(p)
    p.add_argument("id", type=int)
    p = sub.add_parser("submit", help="ask for a change (checked as on the page)")
    common(p)
    p.add_argument("--kind", required=True, choices=sorted(request_kinds.VALUES))
    p.add_argument("--payload", required=True, help="JSON, @FILE, or - for stdin")
    p.add_argument("--reason", default="")
    for name in ("approve", "reject"):
        p = sub.add_parser(name, help=f"{name} a pending request (not your own)")
        common(p)
        p.add_argument("id", type=int)
        p.add_argument("--comment", default="", help="required to reject")
        if name == "approve":
            p.add_argument(
                "--at",
                dest="run_at",
                help="approve to run then, never before (ISO 8601; refused in a freeze)",
            )
            p.add_argument("--tz", default="UTC", help="the time zone of --at without an offset")


def _row(req) -> dict:
    return {
        "id": req.pk,
        "kind": req.kind,
        "resource": req.resource,
        "state": req.state,
        "requested_by": req.requested_by_name,
        "decided_by": req.decided_by_name,
        "created_at": req.created_at.isoformat(timespec="seconds") if req.created_at else "",
    }


class Commands:
    """The ``requests`` handlers (``self`` is the kafka BaseCommand)."""

    def _requests_list(self, cluster, actor) -> int:
        o = self.opts
        rows = requests.list_requests(actor=actor, cluster=cluster, state=o["state"], kind=o["kind"])
        self._emit([_row(r) for r in rows], COLUMNS)
        return OK

    def _request(self, cluster, actor):
        req = requests.get_request(actor=actor, cluster=cluster, request_id=self.opts["id"])
        if req is None:  # as the page: a request the actor may not see does not exist for them
            raise CommandError(f"No request #{self.opts['id']} that you may see.", returncode=NOT_FOUND)
        return req

    def _show(self, req) -> None:
        steps = [
            {
                "step": e.step,
                "actor": e.actor_name,
                "text": e.text,
                "at": e.created_at.isoformat(timespec="seconds"),
            }
            for e in req.events.order_by("pk")
        ]
        payload = request_display.shown_payload(req.kind, req.payload)
        extra = {
            **_row(req),
            "payload": payload,
            "reason": req.reason,
            "comment": req.decision_comment,
            "operation": req.operation_id,
        }
        if self.opts["output"] == "table":
            self.stdout.write(
                f"Request #{req.pk} {request_kinds.label(req)} {req.resource}: {req.state} "
                f"(by {req.requested_by_name})\npayload: {json.dumps(payload, sort_keys=True)}"
            )
        self._emit(steps, ["at", "step", "actor", "text"], extra)

    def _requests_show(self, cluster, actor) -> int:
        self._show(self._request(cluster, actor))
        return OK

    def _requests_submit(self, cluster, actor) -> int:
        o = self.opts
        text = o["payload"]
        if text == "-" or text.startswith("@"):
            text = read_text(text if text == "-" else text[1:], sys.stdin)
        try:
            payload = json.loads(text)
        except ValueError as exc:
            raise CommandError(f"--payload is not JSON: {exc}", returncode=USAGE) from None
        if not isinstance(payload, dict):
            raise CommandError("--payload must be a JSON object.", returncode=USAGE)
        req = requests.submit_request(
            actor=actor, cluster=cluster, kind=o["kind"], payload=payload, reason=o["reason"]
        )
        req.refresh_from_db()
        self._show(req)
        return OK

    def _requests_approve(self, cluster, actor) -> int:
        o = self.opts
        req = requests.decide(  # a held operator action counts its approvals there
            actor=actor, request=self._request(cluster, actor), approve=True, comment=o["comment"],
            run_at=moment(o["run_at"], o["tz"], "--at"),
        )  # fmt: skip
        self._show(req)
        return OK

    def _requests_reject(self, cluster, actor) -> int:
        req = requests.decide(
            actor=actor, request=self._request(cluster, actor), approve=False, comment=self.opts["comment"]
        )
        self._show(req)
        return OK
