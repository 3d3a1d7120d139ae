"""API: reassignments (plan or intent, dry run, progress, throttle, cancel), the plan export, moves
started elsewhere and leftover throttles. The dry run and what Start may run are the area's
(console/reassignment/dry_run.py), the same for the page."""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.response import Response

from console import access, operations
from console.api import serializers as s
from console.api.base import ApiView, form_data, paged, plain, reads, writes
from console.api.held import hold
from console.forms.reassignment import PlanForm
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import dry_run, external, pacing, planner, queue, store, throttles
from console.reassignment import held as reassignment_held
from console.reassignment import janitor as reassign_janitor
from console.reassignment import reads as moves


class ReassignIn(s.ReassignIn):
    """The start of a move, with a paced move's split rates, per-broker rates and N (issue 39)."""

    leader_throttle_bytes_per_s = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="leader replication rate of each broker"
    )
    follower_throttle_bytes_per_s = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="follower replication rate of each broker"
    )
    broker_throttles = serializers.DictField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        default=dict,
        help_text="{broker id: bytes/s}: that broker's leader and follower rate (brokers of this move only)",
    )
    max_moves_per_broker = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=pacing.MAX_MOVES_PER_BROKER,
        help_text="at most this many partitions moving per broker at once; the rest are queued",
    )

    def validate_broker_throttles(self, value: dict) -> dict[int, int]:
        bad = [k for k in value if not str(k).isdigit()]
        if bad:
            raise serializers.ValidationError(f"Not a broker id: {', '.join(map(str, bad))}.")
        return {int(k): v for k, v in value.items()}


def _pacing(d: dict) -> pacing.Pacing:
    return pacing.Pacing(
        leader=d.get("leader_throttle_bytes_per_s"),
        follower=d.get("follower_throttle_bytes_per_s"),
        brokers=d.get("broker_throttles") or {},
        max_moves=d.get("max_moves_per_broker"),
    )


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
        "leader_throttle_bytes_per_s": r.leader_throttle_bytes_per_s,
        "follower_throttle_bytes_per_s": r.follower_throttle_bytes_per_s,
        "broker_throttles": r.broker_throttles or {},
        "max_moves_per_broker": r.max_moves_per_broker,
        "paused": r.paused,
        "cancel_requested": r.cancel_requested,
        "last_poll_at": plain(r.last_poll_at),
        # the figures above are the last ones read from Kafka: stale while the move has lost
        # contact (or its last read is three polls old), never to be taken as current
        "lost_contact": operations.lost_contact(op),
        "progress_stale": not (op.finished or r.stage == "finished") and moves.figures_behind(r),
        "completed_at": plain(r.completed_at),
        "rollback_plan": _rollback_plan(r),
    }
    if partitions:
        # a paced move's queue: queued count, the next ones, in flight per broker against N
        body["queue"] = queue.queue_state(r)
        body["partitions"] = [_partition_json(r, x) for x in r.partitions.all()[:10_000]]
        body["throttles"] = [_throttle_json(t) for t in r.throttles.all()]
    return body


def _partition_json(r: Reassignment, x) -> dict:
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
        row.update(bytes_total=entry.bytes_total, bytes_done=entry.bytes_done, replicas=plain(entry.replicas))
    return row


def _throttle_json(t, **more) -> dict:
    """A throttle config in the ledger (the reassignment that set it, what it is set on, its state)."""
    return {
        **more,
        "resource_type": t.resource_type,
        "resource_name": t.resource_name,
        "config": t.config,
        "state": t.state,
    }


def _rollback_plan(r: Reassignment) -> dict | None:
    """After a cancel Kafka restored in another order: the original assignment of those partitions."""
    plan = reassignment.rollback_plan(r)
    return json.loads(planner.export_plan(plan)) if plan else None


def _outcomes(outcomes: dict) -> Response:
    """Per-resource outcomes: 200 when every one succeeded, else 207."""
    ok = all(v["ok"] for v in outcomes.values())
    return Response({"ok": ok, "outcomes": plain(outcomes)}, status=200 if ok else 207)


class ReassignmentList(ApiView):
    @reads("reassignments_list")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        rows = list(moves.reassignments_of(cluster))
        return Response(paged(rows, request, reassignment_json))

    @writes(
        "reassignments_create",
        {200: OpenApiTypes.OBJECT, 201: s.ReassignmentOut},
        request=ReassignIn,
        held=True,
    )
    def post(self, request, name: str):
        """A kafka-reassign-partitions plan or an intent; ``dry_run`` (the default) previews, else starts."""
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        d = self.body(ReassignIn)
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
            return self._start(cluster, d, form, rate)
        done = dry_run.dry_run(cluster, form, throttle=rate, pacing=_pacing(d))
        p = done.preview
        return Response(
            {
                "dry_run": True,
                "plan": json.loads(done.plan_json),
                "plan_sha256": p.sha256,
                "ok": p.ok,
                "problems": p.problems,
                "throttle_bytes_per_s": p.throttle,
                "estimated_seconds": p.estimated_seconds,
                "total_bytes": p.diff.total_bytes,
                "checks": [plain(c) for c in p.checks],
            }
        )

    def _start(self, cluster, d, form, rate) -> Response:
        """Start (or hold) exactly the reviewed plan; reads only its partitions, no log dirs."""
        expected = d.get("plan_sha256") or None
        reviewed = json.dumps(d["plan"]) if "plan" in d else ""
        plan, rf_change = dry_run.plan_to_start(
            intent=d["intent"], plan=form.get("plan"), reviewed=reviewed, expected=expected
        )
        user = self.request.user
        args = {
            "throttle": rate,
            "elect_preferred": d["elect_preferred"],
            "rf_change": rf_change,
            "pacing": _pacing(d),
        }
        held = hold(
            self,
            cluster,
            "reassignment",
            lambda: reassignment_held.prepare_reviewed(user, cluster, plan, **args, expected=expected),
        )
        if held is not None:
            return held
        op = reassignment.start_reassignment(
            actor=user, cluster=cluster, proposed=plan, **args, source_ip=self.ip, expected_sha256=expected
        )
        return Response(reassignment_json(op.reassignment), status=201)


def _reassignment(view: ApiView, name: str, rid: int, perm: str = access.VIEW) -> Reassignment:
    r = moves.reassignment_of(view.cluster(name, perm), rid)
    if r is None:
        raise Http404("No such reassignment.")
    return r


class ReassignmentDetail(ApiView):
    @reads("reassignments_retrieve")
    def get(self, request, name: str, rid: int):
        """Progress: per partition state, bytes copied and each moving replica's state; the throttle ledger."""
        return Response(reassignment_json(_reassignment(self, name, rid), partitions=True))


class ReassignmentThrottle(ApiView):
    @writes("reassignments_throttle", (200, 207), request=s.ThrottleIn, held=True)
    def post(self, request, name: str, rid: int):
        r = _reassignment(self, name, rid, access.MANAGE_REASSIGNMENTS)
        rate = self.body(s.ThrottleIn)["throttle_bytes_per_s"]
        held = hold(
            self,
            r.cluster,
            "throttle",
            lambda: reassignment_held.prepare_throttle(request.user, r.cluster, r, rate),
        )
        if held is not None:
            return held
        return _outcomes(
            throttles.change_throttle(actor=request.user, reassignment=r, rate=rate, source_ip=self.ip)
        )


class ReassignmentCancel(ApiView):
    @writes("reassignments_cancel", 202, request=None)
    def post(self, request, name: str, rid: int):
        r = _reassignment(self, name, rid, access.MANAGE_REASSIGNMENTS)
        reassignment.cancel_reassignment(actor=request.user, reassignment=r, source_ip=self.ip)
        r.refresh_from_db()
        return Response(reassignment_json(r), status=202)


class ReassignmentPause(ApiView):
    @writes("reassignments_pause", 200, request=None)
    def post(self, request, name: str, rid: int):
        """A paced move stops submitting queued partitions; those in flight finish."""
        r = _reassignment(self, name, rid, access.MANAGE_REASSIGNMENTS)
        queue.pause_reassignment(actor=request.user, reassignment=r, source_ip=self.ip)
        r.refresh_from_db()
        return Response(reassignment_json(r, partitions=True))


class ReassignmentResume(ApiView):
    @writes("reassignments_resume", 200, request=None)
    def post(self, request, name: str, rid: int):
        """A paused paced move goes on submitting queued partitions as others finish."""
        r = _reassignment(self, name, rid, access.MANAGE_REASSIGNMENTS)
        queue.resume_reassignment(actor=request.user, reassignment=r, source_ip=self.ip)
        r.refresh_from_db()
        return Response(reassignment_json(r, partitions=True))


class PlanExport(ApiView):
    @reads(
        "reassignments_export",
        {(200, "application/json"): OpenApiTypes.OBJECT},
        parameters=[OpenApiParameter("topics", str, description="comma-separated topic names")],
    )
    def get(self, request, name: str):
        """The topics' current assignment in kafka-reassign-partitions' JSON (to edit and submit)."""
        cluster = self.cluster(name)
        topics = [t.strip() for t in request.query_params.get("topics", "").split(",") if t.strip()]
        text = reassignment.export_assignment(cluster, topics)
        return HttpResponse(text, content_type="application/json")


class ExternalMoves(ApiView):
    @reads("reassignments_external_list")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        return Response({"results": plain(external.external_reassignments(cluster))})

    @writes("reassignments_external_cancel", (200, 207), request=s.ExternalCancelIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        chosen = [(p["topic"], p["partition"]) for p in self.body(s.ExternalCancelIn)["partitions"]]
        return _outcomes(
            external.cancel_external(
                actor=request.user, cluster=cluster, partitions=chosen, source_ip=self.ip
            )
        )


class Throttles(ApiView):
    @reads("throttles_list")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        ledger = throttles.ThrottleEntry.objects.filter(cluster=cluster, state__in=throttles.ACTIVE)
        return Response(
            {
                "ledger": [_throttle_json(t, reassignment_id=t.reassignment_id) for t in ledger],
                "foreign": plain(reassign_janitor.find_foreign_throttles(cluster)),
            }
        )

    @writes("throttles_cleanup", (200, 207), request=s.ThrottleCleanupIn)
    def post(self, request, name: str):
        """Remove leftover throttle configs no console reassignment owns (keys from the GET's ``foreign``)."""
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        keys = self.body(s.ThrottleCleanupIn)["keys"]
        return _outcomes(
            reassign_janitor.clean_foreign_throttles(
                actor=request.user, cluster=cluster, keys=keys, source_ip=self.ip
            )
        )
