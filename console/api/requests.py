"""API: self-service requests (list, submit, show, approve, reject, cancel) and the auto-approve rule."""

from __future__ import annotations

from django.http import Http404
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, form_data, paged, plain, reads, writes
from console.api.held import change_json
from console.forms.requests import AutoApproveRuleForm
from console.models.requests import AutoApproveRule
from console.requests import actions as requests
from console.requests import kinds as request_kinds


def request_json(req, *, steps: bool = False) -> dict:
    body = {
        "id": req.pk,
        "kind": req.kind,
        "kind_label": request_kinds.label(req),
        "resource": req.resource,
        "state": req.state,
        "payload": req.payload,
        "reason": req.reason,
        "requested_by": req.requested_by_name,
        "decided_by": req.decided_by_name,
        "created_at": plain(getattr(req, "created_at", None)),
    }
    if req.gated:  # a held operator action: what the approvers review
        body.update({k: v for k, v in change_json(req).items() if k not in body and k != "request"})
    if steps:
        body["timeline"] = [
            {
                "step": e.step,
                "actor": e.actor_name,
                "text": getattr(e, "text", ""),
                "at": plain(getattr(e, "created_at", None)),
            }
            for e in req.events.all()
        ]
    return body


class RequestList(ApiView):
    @reads("requests_list")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        rows = requests.list_requests(actor=request.user, cluster=cluster)
        return Response(paged(rows, request, request_json))

    @writes("requests_submit", 201, request=s.RequestIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.REQUEST)
        d = self.body(s.RequestIn)
        req = requests.submit_request(
            actor=request.user,
            cluster=cluster,
            kind=d["kind"],
            payload=d["payload"],
            reason=d["reason"],
            source_ip=self.ip,
        )
        return Response(request_json(req, steps=True), status=201)


class RequestView(ApiView):  # a view of one request of the cluster (no docstring: the schema's text)
    def found(self, name: str, request_id: int, perm: str = access.VIEW):
        """The request, 404 when the caller may not see it."""
        cluster = self.cluster(name, perm)
        req = requests.get_request(actor=self.request.user, cluster=cluster, request_id=request_id)
        if req is None:
            raise Http404("No such request.")
        return req


class RequestDetail(RequestView):
    @reads("requests_retrieve")
    def get(self, request, name: str, request_id: int):
        return Response(request_json(self.found(name, request_id), steps=True))


class RequestDecision(RequestView):
    approve: bool  # approve or reject (approvers), with a comment

    def post(self, request, name: str, request_id: int):
        req = self.found(name, request_id, access.APPROVE)
        comment = self.body(s.DecisionIn)["comment"]
        req = requests.decide(
            actor=request.user, request=req, approve=self.approve, comment=comment, source_ip=self.ip
        )
        return Response(request_json(req, steps=True))


class RequestApprove(RequestDecision):
    approve = True
    post = writes("requests_approve", request=s.DecisionIn)(RequestDecision.post)


class RequestReject(RequestDecision):
    approve = False
    post = writes("requests_reject", request=s.DecisionIn)(RequestDecision.post)


class RequestCancel(RequestView):
    @writes("requests_cancel", request=None)
    def post(self, request, name: str, request_id: int):
        req = self.found(name, request_id)
        return Response(
            request_json(
                requests.cancel_request(actor=request.user, request=req, source_ip=self.ip), steps=True
            )
        )


def _rule_json(rule: AutoApproveRule | None) -> dict:
    if rule is None:
        return {"enabled": False, "kinds": [], "max_partitions": None}
    return {"enabled": rule.enabled, "kinds": rule.kinds, "max_partitions": rule.max_partitions}


class RequestRules(ApiView):
    @reads("requests_rules_retrieve")
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        return Response(_rule_json(AutoApproveRule.objects.filter(cluster=cluster).first()))

    @writes("requests_rules_update", request=s.AutoApproveIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(s.AutoApproveIn)
        fields = {
            "enabled": d["enabled"],
            "kinds": d["kinds"],
            "max_partitions": d.get("max_partitions") or "",
        }
        cleaned = form_data(AutoApproveRuleForm(fields))
        rule = requests.set_auto_approve_rule(
            actor=request.user, cluster=cluster, **cleaned, source_ip=self.ip
        )
        return Response(_rule_json(rule))
