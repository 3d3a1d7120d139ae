"""API: a cluster's alerts (list, acknowledge), silences (list, create, end) and rule settings (read,
set) — the same area actions as the alerts page, so the same permission checks, refusals and audit."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.alerts import actions
from console.alerts import reads as alert_reads
from console.api.base import ApiView, paged, plain, query, reads, writes
from console.models.alerts import AlertSeverity

ALERT_STATES = ("open", "firing", "acknowledged", "resolved", "all")


class AlertQuery(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=ALERT_STATES, default="open", help_text="open: firing or acknowledged (the default)"
    )


class AcknowledgeIn(serializers.Serializer):
    note = serializers.CharField(max_length=actions.NOTE_MAX, help_text="what is being done about it")


class SilenceIn(serializers.Serializer):
    rule = serializers.CharField(
        required=False, allow_blank=True, max_length=40, help_text="empty: every rule"
    )
    subject = serializers.CharField(
        required=False, allow_blank=True, max_length=actions.SUBJECT_MAX, help_text="empty: every subject"
    )
    duration = serializers.CharField(required=False, max_length=20, help_text="30m, 2h, 1d12h, 1w")
    expires_at = serializers.DateTimeField(required=False, help_text="instead of a duration (no zone: UTC)")
    reason = serializers.CharField(max_length=actions.REASON_MAX)


class RuleIn(serializers.Serializer):
    enabled = serializers.BooleanField(default=True)
    threshold = serializers.FloatField(
        required=False, allow_null=True, default=None, help_text="null: default"
    )
    severity = serializers.ChoiceField(
        choices=["", *AlertSeverity.values], required=False, default="", help_text="empty: default"
    )
    escalate_after_min = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="null: never escalate"
    )


def _alert_json(alert) -> dict:
    return plain(actions.describe_alert(alert))


def _silence_json(silence) -> dict:
    return plain(actions.describe_silence(silence))


class Alerts(ApiView):
    @reads("alerts_list", parameters=[AlertQuery])
    def get(self, request, name: str):
        """The cluster's alerts in a state (open ones worst first), newest first otherwise."""
        cluster = self.cluster(name)
        state = query(AlertQuery, request)["state"]
        rows = alert_reads.alerts(cluster, state="" if state == "all" else state)
        return Response(paged(rows, request, _alert_json))


class AlertAcknowledge(ApiView):
    @writes("alerts_acknowledge", request=AcknowledgeIn)
    def post(self, request, name: str, alert_id: int):
        """Acknowledge an open alert with a note (alert.manage); a resolved or acknowledged one is 400."""
        cluster = self.cluster(name, access.MANAGE_ALERTS)
        d = self.body(AcknowledgeIn)
        alert = actions.acknowledge_alert(
            actor=request.user, cluster=cluster, alert_id=alert_id, note=d["note"], source_ip=self.ip
        )
        return Response(_alert_json(alert))


class Silences(ApiView):
    @reads("alert_silences_list")
    def get(self, request, name: str):
        """The cluster's active silences, the one ending first first."""
        cluster = self.cluster(name)
        return Response({"results": [_silence_json(s) for s in alert_reads.active_silences(cluster)]})

    @writes("alert_silences_create", 201, request=SilenceIn)
    def post(self, request, name: str):
        """Silence a rule (or every rule) on a subject (or every subject) for a duration or until a time,
        at most 30 days, with a reason (alert.manage)."""
        cluster = self.cluster(name, access.MANAGE_ALERTS)
        d = self.body(SilenceIn)
        silence = actions.create_silence(
            actor=request.user, cluster=cluster, rule=d.get("rule", ""), subject=d.get("subject", ""),
            duration=d.get("duration"), until=d.get("expires_at"), reason=d["reason"], source_ip=self.ip,
        )  # fmt: skip
        return Response(_silence_json(silence), status=201)


class Silence(ApiView):
    @writes("alert_silences_end", request=None)
    def delete(self, request, name: str, silence_id: int):
        """End an active silence now (alert.manage); one already over is 400."""
        cluster = self.cluster(name, access.MANAGE_ALERTS)
        silence = actions.end_silence(
            actor=request.user, cluster=cluster, silence_id=silence_id, source_ip=self.ip
        )
        return Response(_silence_json(silence))


class Rules(ApiView):
    @reads("alert_rules_list")
    def get(self, request, name: str):
        """Every built-in rule with the cluster's setting of it."""
        cluster = self.cluster(name)
        return Response({"results": [plain(r) for r in alert_reads.rule_rows(cluster)]})


class Rule(ApiView):
    @reads("alert_rules_retrieve")
    def get(self, request, name: str, rule: str):
        cluster = self.cluster(name)
        row = alert_reads.rule_row(cluster, rule)
        if row is None:
            raise actions.AlertNotFound(f"No alert rule '{rule[:40]}'.")
        return Response(plain(row))

    @writes("alert_rules_update", request=RuleIn)
    def put(self, request, name: str, rule: str):
        """Set the cluster's setting of a rule, every field at once (cluster.admin); a threshold of the
        wrong sign or unit is 400."""
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(RuleIn)
        actions.set_rule(actor=request.user, cluster=cluster, rule=rule, source_ip=self.ip, **d)
        return Response(plain(alert_reads.rule_row(cluster, rule)))
