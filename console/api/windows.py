"""API: a cluster's change windows (list with what is in force, add, end, the maintenance-only rule),
its calendar, and scheduling a held change - the same actions as the calendar page and the CLI."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, plain, reads, writes
from console.api.requests import RequestView
from console.changes import schedule
from console.models.windows import WindowKind
from console.windows import actions as windows
from console.windows import reads as window_reads


class WindowIn(serializers.Serializer):
    kind = serializers.ChoiceField(choices=WindowKind.values)
    reason = serializers.CharField(max_length=windows.REASON_MAX)
    starts_at = serializers.DateTimeField(required=False, help_text="ISO 8601 with its offset")
    ends_at = serializers.DateTimeField(required=False, help_text="a one-off's end; a weekly one's 'until'")
    weekday = serializers.IntegerField(
        required=False, min_value=0, max_value=6, help_text="weekly: 0 = Monday"
    )
    start_time = serializers.TimeField(required=False, help_text="weekly: HH:MM in time_zone")
    duration_min = serializers.IntegerField(
        required=False, min_value=1, max_value=windows.MAX_DURATION_MIN, help_text="weekly"
    )
    time_zone = serializers.CharField(required=False, default="UTC", max_length=64)


class SettingsIn(serializers.Serializer):
    maintenance_only = serializers.BooleanField()


class CalendarQuery(serializers.Serializer):
    days = serializers.IntegerField(
        required=False, min_value=1, max_value=92, default=window_reads.CALENDAR_DAYS
    )


class ScheduleIn(serializers.Serializer):
    run_at = serializers.DateTimeField(
        help_text="ISO 8601 with its offset; the change runs then, never before"
    )


def _status(request, cluster) -> dict:
    return plain(window_reads.status(actor=request.user, cluster=cluster))


class Windows(ApiView):
    @reads("windows_list")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        rows = window_reads.list_windows(
            actor=request.user, cluster=cluster, include_over=request.query_params.get("all") == "1"
        )
        return Response({**_status(request, cluster), "results": [r.as_dict() for r in rows]})

    @writes("windows_create", 201, request=WindowIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(WindowIn)
        row = windows.add_window(actor=request.user, cluster=cluster, source_ip=self.ip, **d)
        listed = window_reads.list_windows(actor=request.user, cluster=cluster, include_over=True)
        return Response(next(r.as_dict() for r in listed if r.id == row.pk), status=201)


class WindowEnd(ApiView):
    @writes("windows_end", request=None)
    def post(self, request, name: str, window_id: int):
        cluster = self.cluster(name, access.ADMINISTER)
        row = windows.end_window(actor=request.user, cluster=cluster, window_id=window_id, source_ip=self.ip)
        return Response({"id": row.pk, "ended_at": plain(row.ended_at), "ended_by": row.ended_by_name})


class WindowSettings(ApiView):
    @writes("windows_settings", request=SettingsIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(SettingsIn)
        windows.set_maintenance_only(
            actor=request.user, cluster=cluster, maintenance_only=d["maintenance_only"], source_ip=self.ip
        )
        return Response(_status(request, cluster))


class Calendar(ApiView):
    @reads("windows_calendar")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        days = CalendarQuery(data=request.query_params)
        days.is_valid(raise_exception=True)
        found = window_reads.calendar(actor=request.user, cluster=cluster, days=days.validated_data["days"])
        return Response({**_status(request, cluster), "days": plain(found)})


class RequestSchedule(RequestView):
    @writes("requests_schedule", request=ScheduleIn)
    def post(self, request, name: str, request_id: int):
        req = self.found(name, request_id, access.APPROVE)  # approvers; a held change's author is one
        row = schedule.schedule_change(
            actor=request.user, request=req, run_at=self.body(ScheduleIn)["run_at"], source_ip=self.ip
        )
        return Response(
            {
                "request": req.pk,
                "run_at": plain(row.run_at),
                "state": row.state,
                "scheduled_by": row.scheduled_by_name,
            }
        )


class RequestUnschedule(RequestView):
    @writes("requests_unschedule", request=None)
    def post(self, request, name: str, request_id: int):
        req = self.found(name, request_id, access.APPROVE)
        req = schedule.cancel_schedule(actor=request.user, request=req, source_ip=self.ip)
        return Response({"request": req.pk, "state": req.state})
