"""API: self-service requests (list, submit, show, approve, reject, cancel) and the auto-approve rule."""

from __future__ import annotations

from django.http import Http404
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, form_data, paged, plain, reads, writes
from console.api.held import change_json, schedule_json
from console.forms.requests import AutoApproveRuleForm
from console.models.requests import AutoApproveRule, RequestState
from console.models.windows import ScheduleState
from console.requests import actions as requests
from console.requests import display as request_display
from console.requests import kinds as request_kinds


class RequestOut(serializers.Serializer):
    """A self-service request or held change; a held one also carries its review, digest and approvals."""

    id = serializers.IntegerField()
    kind = serializers.CharField()
    kind_label = serializers.CharField()
    resource = serializers.CharField()
    state = serializers.ChoiceField(choices=RequestState.values)
    payload = serializers.JSONField()
    reason = serializers.CharField()
    requested_by = serializers.CharField()
    decided_by = serializers.CharField()
    created_at = serializers.DateTimeField(allow_null=True)
    run_at = serializers.DateTimeField(
        allow_null=True, help_text="when it runs, never before; null when it is not scheduled"
    )
    schedule_state = serializers.ChoiceField(
        choices=ScheduleState.values,
        allow_null=True,
        help_text="its schedule: waiting for run_at, queued, refused at its time, cancelled; null: none",
    )
    held = serializers.BooleanField(required=False, help_text="a held operator action (change control)")
    payload_sha256 = serializers.CharField(required=False)
    approvals_required = serializers.IntegerField(required=False)
    approvals = serializers.ListField(child=serializers.CharField(), required=False)
    review = serializers.JSONField(required=False)
    result = serializers.JSONField(required=False, allow_null=True)
    timeline = serializers.ListField(child=serializers.DictField(), required=False)


class RequestPageOut(serializers.Serializer):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    per_page = serializers.IntegerField()
    results = RequestOut(many=True)


class ApproveIn(s.DecisionIn):
    run_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="approve and schedule in one action: it runs then, never before (ISO 8601 with its "
        "offset); a time in a freeze is refused (409 change_window) and nothing is approved",
    )


def request_json(req, *, steps: bool = False) -> dict:
    body = {
        "id": req.pk,
        "kind": req.kind,
        "kind_label": request_kinds.label(req),
        "resource": req.resource,
        "state": req.state,
        "payload": request_display.shown_payload(req.kind, req.payload),
        "reason": req.reason,
        "requested_by": req.requested_by_name,
        "decided_by": req.decided_by_name,
        "created_at": plain(getattr(req, "created_at", None)),
        **schedule_json(req),
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
    @reads("requests_list", {200: RequestPageOut})
    def get(self, request, name: str):
        cluster = self.cluster(name)
        rows = requests.list_requests(actor=request.user, cluster=cluster)
        return Response(paged(rows, request, request_json))

    @writes("requests_submit", {201: RequestOut}, request=s.RequestIn)
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
    @reads("requests_retrieve", {200: RequestOut})
    def get(self, request, name: str, request_id: int):
        return Response(request_json(self.found(name, request_id), steps=True))


class RequestDecision(RequestView):
    approve: bool  # approve (optionally at a time) or reject (approvers), with a comment
    shape: type[serializers.Serializer] = s.DecisionIn

    def post(self, request, name: str, request_id: int):
        req = self.found(name, request_id, access.APPROVE)
        d = self.body(self.shape)
        req = requests.decide(
            actor=request.user,
            request=req,
            approve=self.approve,
            comment=d["comment"],
            source_ip=self.ip,
            run_at=d.get("run_at"),
        )
        return Response(request_json(req, steps=True))


class RequestApprove(RequestDecision):
    approve = True
    shape = ApproveIn
    post = writes("requests_approve", {200: RequestOut}, request=ApproveIn)(RequestDecision.post)


class RequestReject(RequestDecision):
    approve = False
    post = writes("requests_reject", {200: RequestOut}, request=s.DecisionIn)(RequestDecision.post)


class RequestCancel(RequestView):
    @writes("requests_cancel", {200: RequestOut}, request=None)
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
