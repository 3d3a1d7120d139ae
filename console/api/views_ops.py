"""API: reassignments (plan or intent, dry run, progress, throttle, cancel), moves started elsewhere,
leftover throttles, elections, and the operations they run as."""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.http import Http404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console import access, operations
from console.api import serializers as s
from console.api.base import ApiView, paged, plain
from console.api.held import hold
from console.api.idempotency import idempotent
from console.api.views_acls_groups import form_data
from console.forms.reassignment import PlanForm
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import elections, external, planner, progress, store, throttles
from console.reassignment import held as reassignment_held
from console.reassignment import janitor as reassign_janitor

ERRORS = {400: s.ErrorBody, 403: s.ErrorBody, 404: s.ErrorBody, 422: s.ErrorBody}


def _progress_stale(r: Reassignment, op) -> bool:
    if op.finished or r.stage == "finished":
        return False
    age = (timezone.now() - r.last_poll_at).total_seconds() if r.last_poll_at else None
    return operations.lost_contact(op) is not None or progress.staleness(age, progress.EXPECTED_POLL_S)


def reassignment_json(r: Reassignment, *, partitions: bool = False) -> dict:
    op = r.operation
    body = {
        "id": r.pk,
        "operation_id": op.pk,
        "state": op.state,
        "stage": r.stage,
        "stage_label": reassignment.stage_label(r),
        "outcome": r.outcome,
        "partitions_total": r.partitions_total,
        "partitions_done": r.partitions_done,
        "bytes_total": r.bytes_total,
        "bytes_done": r.bytes_done,
        "rate_bytes_per_s": r.rate_bytes_per_s,
        "throttle_bytes_per_s": r.throttle_bytes_per_s,
        "cancel_requested": r.cancel_requested,
        "last_poll_at": plain(r.last_poll_at),
        # the figures above are the last ones read from Kafka: stale while the move has lost
        # contact (or its last read is three polls old), never to be taken as current
        "lost_contact": operations.lost_contact(op),
        "progress_stale": _progress_stale(r, op),
        "completed_at": plain(r.completed_at),
        "rollback_plan": _rollback_plan(r),
    }
    if partitions:
        rows = []
        for x in r.partitions.all()[:10_000]:
            row = {
                "topic": x.topic,
                "partition": x.partition,
                "original": x.original,
                "target": x.target,
                "state": x.state,
                "message": x.message,
                "percent": x.percent,
            }
            entry = store.live_entry(r, x.topic, x.partition) if x.state == "moving" else None
            if entry:
                row.update(
                    bytes_total=entry.bytes_total, bytes_done=entry.bytes_done, replicas=plain(entry.replicas)
                )
            rows.append(row)
        body["partitions"] = rows
        body["throttles"] = [
            {
                "resource_type": t.resource_type,
                "resource_name": t.resource_name,
                "config": t.config,
                "state": t.state,
            }
            for t in r.throttles.all()
        ]
    return body


def _rollback_plan(r: Reassignment) -> dict | None:
    """After a cancel Kafka restored in another order: the original assignment of those partitions."""
    plan = reassignment.rollback_plan(r)
    return json.loads(planner.export_plan(plan)) if plan else None


def preview_json(p) -> dict:
    return {
        "ok": p.ok,
        "problems": p.problems,
        "throttle_bytes_per_s": p.throttle,
        "estimated_seconds": p.estimated_seconds,
        "total_bytes": p.diff.total_bytes,
        "checks": [plain(c) for c in p.checks],
    }


class ReassignmentList(ApiView):
    @extend_schema(operation_id="reassignments_list", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name)
        rows = list(Reassignment.objects.filter(cluster=cluster).select_related("operation").order_by("-pk"))
        return Response(paged(rows, request, reassignment_json))

    @extend_schema(
        operation_id="reassignments_create",
        request=s.ReassignIn,
        responses={200: OpenApiTypes.OBJECT, 201: s.ReassignmentOut, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str):
        """A kafka-reassign-partitions plan or an intent; ``dry_run`` (the default) previews, else starts."""
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        data = s.ReassignIn(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        if d["intent"] == "json" and "plan" not in d:
            raise ValidationError(["Send the plan (kafka-reassign-partitions' JSON) or choose an intent."])
        fields = {
            "intent": d["intent"],
            "plan_json": json.dumps(d.get("plan")) if "plan" in d else "",
            "topics": ",".join(d["topics"]),
            "brokers": ",".join(map(str, d["brokers"])),
            "replication_factor": d.get("replication_factor") or "",
            "elect_preferred": "on" if d["elect_preferred"] else "",
        }
        form = form_data(PlanForm(fields))
        rate = throttles.validate_rate(d.get("throttle_bytes_per_s"))
        if not d["dry_run"]:
            return self._start(request, cluster, d, form, rate)
        # the dry run: a plan file needs only its own partitions; an intent plans over the cluster
        json_plan = d["intent"] == "json"
        view = reassignment.read_cluster(cluster, with_sizes=True, only=form["plan"] if json_plan else None)
        plan, rf_change = form.get("plan"), False
        if not json_plan:
            if any(t not in {tp[0] for tp in view.assignment} for t in form.get("topic_list", ())):
                view = reassignment.read_cluster(cluster, with_sizes=True, cached=False)
            plan, rf_change = reassignment.build_plan(
                view,
                intent=d["intent"],
                topics=form.get("topic_list", ()),
                brokers=form.get("broker_list", ()),
                replication_factor=form.get("replication_factor"),
            )
        preview = reassignment.preview_plan(cluster, plan, throttle=rate, rf_change=rf_change, view=view)
        body = {
            "dry_run": True,
            "plan": json.loads(planner.export_plan(plan)),
            "plan_sha256": preview.sha256,
        }
        return Response({**body, **preview_json(preview)})

    def _start(self, request, cluster, d, form, rate) -> Response:
        """Start (or hold) exactly the reviewed plan; reads only its partitions, no log dirs."""
        plan, rf_change = form.get("plan"), d["intent"] == "rf"
        expected = d.get("plan_sha256") or None
        if d["intent"] != "json":  # as the page: Start runs the previewed plan, never a new one
            if "plan" not in d or expected is None:
                raise reassignment.PlanRejected(
                    "Dry run first: Start runs exactly the plan you reviewed (send its plan and plan_sha256)."
                )
            plan = planner.parse_plan(json.dumps(d["plan"]))
        held = hold(
            self, cluster, "reassignment",
            lambda: _held_plan(request.user, cluster, plan, rate, d["elect_preferred"], rf_change, None, expected),
        )  # fmt: skip
        if held is not None:
            return held
        op = reassignment.start_reassignment(
            actor=request.user,
            cluster=cluster,
            proposed=plan,
            throttle=rate,
            elect_preferred=d["elect_preferred"],
            rf_change=rf_change,
            source_ip=self.ip,
            expected_sha256=expected,
        )
        return Response(reassignment_json(op.reassignment), status=201)


def _held_plan(actor, cluster, plan, rate, elect_preferred: bool, rf_change: bool, view, expected):
    """The plan held for review is the one the caller reviewed (its plan_sha256), as Start checks."""
    preview = reassignment.preview_plan(cluster, plan, throttle=rate, rf_change=rf_change, view=view)
    if expected is not None and preview.sha256 != expected:
        raise reassignment.PlanRejected(
            "This is not the plan you reviewed: the cluster changed since the dry run.", preview.checks
        )
    return reassignment_held.prepare_reassignment(
        actor, cluster, preview, throttle=rate, elect_preferred=elect_preferred, rf_change=rf_change
    )


def _reassignment(view: ApiView, name: str, rid: int, perm: str = access.VIEW) -> Reassignment:
    cluster = view.cluster(name, perm)
    r = Reassignment.objects.select_related("operation", "cluster").filter(pk=rid, cluster=cluster).first()
    if r is None:
        raise Http404("No such reassignment.")
    return r


class ReassignmentDetail(ApiView):
    @extend_schema(operation_id="reassignments_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str, rid: int):
        """Progress: per partition state, bytes copied and each moving replica's state; the throttle ledger."""
        return Response(reassignment_json(_reassignment(self, name, rid), partitions=True))


class ReassignmentThrottle(ApiView):
    @extend_schema(
        operation_id="reassignments_throttle",
        request=s.ThrottleIn,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str, rid: int):
        r = _reassignment(self, name, rid, access.MANAGE_REASSIGNMENTS)
        data = s.ThrottleIn(data=request.data)
        data.is_valid(raise_exception=True)
        rate = data.validated_data["throttle_bytes_per_s"]
        held = hold(
            self,
            r.cluster,
            "throttle",
            lambda: reassignment_held.prepare_throttle(request.user, r.cluster, r, rate),
        )
        if held is not None:
            return held
        outcomes = throttles.change_throttle(
            actor=request.user,
            reassignment=r,
            rate=data.validated_data["throttle_bytes_per_s"],
            source_ip=self.ip,
        )
        ok = all(v["ok"] for v in outcomes.values())
        return Response({"ok": ok, "outcomes": plain(outcomes)}, status=200 if ok else 207)


class ReassignmentCancel(ApiView):
    @extend_schema(
        operation_id="reassignments_cancel", request=None, responses={202: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str, rid: int):
        r = _reassignment(self, name, rid, access.MANAGE_REASSIGNMENTS)
        reassignment.cancel_reassignment(actor=request.user, reassignment=r, source_ip=self.ip)
        r.refresh_from_db()
        return Response(reassignment_json(r), status=202)


class ExternalMoves(ApiView):
    @extend_schema(operation_id="reassignments_external_list", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name)
        return Response({"results": plain(external.external_reassignments(cluster))})

    @extend_schema(
        operation_id="reassignments_external_cancel",
        request=s.ExternalCancelIn,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        data = s.ExternalCancelIn(data=request.data)
        data.is_valid(raise_exception=True)
        chosen = [(p["topic"], p["partition"]) for p in data.validated_data["partitions"]]
        outcomes = external.cancel_external(
            actor=request.user, cluster=cluster, partitions=chosen, source_ip=self.ip
        )
        ok = all(v["ok"] for v in outcomes.values())
        return Response({"ok": ok, "outcomes": plain(outcomes)}, status=200 if ok else 207)


class Throttles(ApiView):
    @extend_schema(operation_id="throttles_list", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name)
        ledger = throttles.ThrottleEntry.objects.filter(cluster=cluster, state__in=throttles.ACTIVE)
        return Response(
            {
                "ledger": [
                    {
                        "reassignment_id": t.reassignment_id,
                        "resource_type": t.resource_type,
                        "resource_name": t.resource_name,
                        "config": t.config,
                        "state": t.state,
                    }
                    for t in ledger
                ],
                "foreign": plain(reassign_janitor.find_foreign_throttles(cluster)),
            }
        )

    @extend_schema(
        operation_id="throttles_cleanup",
        request=s.ThrottleCleanupIn,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str):
        """Remove leftover throttle configs no console reassignment owns (keys from the GET's ``foreign``)."""
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        data = s.ThrottleCleanupIn(data=request.data)
        data.is_valid(raise_exception=True)
        outcomes = reassign_janitor.clean_foreign_throttles(
            actor=request.user, cluster=cluster, keys=data.validated_data["keys"], source_ip=self.ip
        )
        ok = all(v["ok"] for v in outcomes.values())
        return Response({"ok": ok, "outcomes": plain(outcomes)}, status=200 if ok else 207)


class Elections(ApiView):
    @extend_schema(operation_id="elections_imbalance", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name)
        return Response(
            {
                **plain(elections.leader_imbalance(cluster)),
                "unclean_confirmation": elections.unclean_confirmation(cluster),
            }
        )

    @extend_schema(
        operation_id="elections_start", request=s.ElectionIn, responses={202: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        data = s.ElectionIn(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        chosen = [(p["topic"], p["partition"]) for p in d["partitions"]] if "partitions" in d else None
        if chosen is None and d["election_type"] == elections.PREFERRED:
            chosen = elections.leader_imbalance(cluster).partitions or []
        held = hold(
            self, cluster, "election",
            lambda: reassignment_held.prepare_election(request.user, cluster, d["election_type"], chosen, d["confirmation"]),
        )  # fmt: skip
        if held is not None:
            return held
        op = elections.start_election(
            actor=request.user,
            cluster=cluster,
            election_type=d["election_type"],
            partitions=chosen,
            confirmation=d["confirmation"],
            source_ip=self.ip,
        )
        return Response(operation_json(op), status=202)


def operation_json(op) -> dict:
    return {
        "id": op.pk,
        "kind": op.kind,
        "state": op.state,
        "cluster": op.cluster.name if op.cluster_id else None,
        "created_at": plain(op.created_at),
        "finished_at": plain(op.finished_at),
        "progress": op.progress,
        "progress_text": op.progress_text,
        # while a step watching Kafka cannot reach it: since, attempts, retry_every_s, error, text
        "lost_contact": operations.lost_contact(op),
        "result": plain(op.result),
        "error": op.error,
        "items": [
            {"resource": i.resource, "state": i.state, "progress": i.progress, "message": i.message}
            for i in op.items.all()[:1000]
        ],
    }


class OperationDetail(ApiView):
    @extend_schema(operation_id="operations_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, op_id: int):
        op = operations.get_visible(actor=request.user, op_id=op_id)
        if op is None:
            raise Http404("No such operation.")
        return Response(operation_json(op))
