"""The alerts area's actions (console/alerts/actions.py): acknowledge, silence, end a silence, set a
rule; each authorised in the service, input checked, and audited (refusals too), in order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console.alerts import actions
from console.alerts.actions import AlertInvalid, AlertNotFound
from console.models import AuditEvent, Cluster
from console.models.alerts import Alert, AlertRuleSetting, AlertSilence
from tests.unit.alert_world import alert_events, make_alert

pytestmark = pytest.mark.django_db


def test_it_acknowledges_a_firing_alert_with_a_note(offline_cluster, offline_personas):
    alert = make_alert(offline_cluster, "broker_down", "broker 2", severity="critical")
    done = actions.acknowledge_alert(
        actor=offline_personas["operator"], cluster=offline_cluster, alert_id=alert.pk, note="  disk replaced, restarting  ",
        source_ip="10.0.0.1",
    )  # fmt: skip
    alert.refresh_from_db()
    assert done.pk == alert.pk
    assert (alert.state, alert.acknowledged_by_name, alert.ack_note) == (
        "acknowledged",
        "operator",
        "disk replaced, restarting",
    )
    assert timezone.now() - alert.acknowledged_at < timedelta(seconds=5)
    event = AuditEvent.objects.get(action="alert.acknowledge")
    assert (event.outcome, event.actor_name, event.cluster_name, event.targets, event.source_ip) == (
        "success",
        "operator",
        offline_cluster.name,
        [f"alert:{alert.pk}"],
        "10.0.0.1",
    )
    assert event.before == {"state": "firing"}
    assert event.after == {
        "state": "acknowledged",
        "rule": "broker_down",
        "subject": "broker 2",
        "note": "disk replaced, restarting",
    }


def test_it_refuses_to_acknowledge_without_the_permission_or_a_note_and_audits_each_refusal(
    offline_cluster, offline_personas
):
    alert = make_alert(offline_cluster)
    with pytest.raises(PermissionDenied):
        actions.acknowledge_alert(
            actor=offline_personas["viewer"], cluster=offline_cluster, alert_id=alert.pk, note="mine"
        )
    with pytest.raises(AlertInvalid) as blank:
        actions.acknowledge_alert(
            actor=offline_personas["operator"], cluster=offline_cluster, alert_id=alert.pk, note="  "
        )
    assert "note" in blank.value.messages[0]
    with pytest.raises(AlertNotFound):
        actions.acknowledge_alert(
            actor=offline_personas["operator"], cluster=offline_cluster, alert_id=alert.pk + 99, note="x"
        )
    actions.acknowledge_alert(
        actor=offline_personas["operator"], cluster=offline_cluster, alert_id=alert.pk, note="on it"
    )
    with pytest.raises(AlertInvalid) as twice:
        actions.acknowledge_alert(
            actor=offline_personas["admin"], cluster=offline_cluster, alert_id=alert.pk, note="me too"
        )
    assert twice.value.messages == [f"Alert #{alert.pk} is already acknowledged by operator."]
    target = [f"alert:{alert.pk}"]
    assert alert_events() == [
        ("alert.acknowledge", "refused", "viewer", target),
        ("alert.acknowledge", "refused", "operator", target),
        ("alert.acknowledge", "refused", "operator", [f"alert:{alert.pk + 99}"]),
        ("alert.acknowledge", "success", "operator", target),
        ("alert.acknowledge", "refused", "admin", target),
    ]
    alert.refresh_from_db()
    assert (alert.state, alert.ack_note) == ("acknowledged", "on it")


def test_it_refuses_to_acknowledge_a_resolved_alert(offline_cluster, offline_personas):
    resolved_at = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    alert = make_alert(offline_cluster, state="resolved", resolved_at=resolved_at)
    with pytest.raises(AlertInvalid) as refused:
        actions.acknowledge_alert(
            actor=offline_personas["operator"], cluster=offline_cluster, alert_id=alert.pk, note="late"
        )
    assert refused.value.messages == [f"Alert #{alert.pk} was resolved at 2026-01-02 03:04 UTC."]
    alert.refresh_from_db()
    assert (alert.state, alert.acknowledged_at, alert.ack_note) == ("resolved", None, "")
    assert alert_events() == [("alert.acknowledge", "refused", "operator", [f"alert:{alert.pk}"])]


def test_it_does_not_acknowledge_another_clusters_alert(offline_cluster, offline_personas):
    other = Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:1")
    alert = make_alert(other)
    with pytest.raises(AlertNotFound):
        actions.acknowledge_alert(
            actor=offline_personas["admin"], cluster=offline_cluster, alert_id=alert.pk, note="x"
        )
    assert Alert.objects.get(pk=alert.pk).state == "firing"


def test_it_silences_a_rule_on_a_subject_for_a_duration(offline_cluster, offline_personas):
    before = timezone.now()
    silence = actions.create_silence(
        actor=offline_personas["operator"], cluster=offline_cluster, rule="group_lag", subject="group billing",
        duration="2h", reason="batch backfill tonight",
    )  # fmt: skip
    row = AlertSilence.objects.get()
    assert row.pk == silence.pk
    assert (row.rule, row.subject, row.reason, row.created_by_name, row.ended_at) == (
        "group_lag",
        "group billing",
        "batch backfill tonight",
        "operator",
        None,
    )
    assert before + timedelta(hours=2) <= row.expires_at <= timezone.now() + timedelta(hours=2)
    event = AuditEvent.objects.get(action="alert.silence.create")
    assert (event.outcome, event.targets) == ("success", [f"alert-silence:{row.pk}"])
    assert (event.after["rule"], event.after["subject"], event.after["reason"]) == (
        "group_lag",
        "group billing",
        "batch backfill tonight",
    )


def test_it_silences_every_rule_until_a_time(offline_cluster, offline_personas):
    until = (timezone.now() + timedelta(days=3)).replace(microsecond=0)
    silence = actions.create_silence(
        actor=offline_personas["admin"],
        cluster=offline_cluster,
        until=until.replace(tzinfo=None),
        reason="upgrade week",
    )
    assert (silence.rule, silence.subject, silence.expires_at) == ("", "", until)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"duration": "2h", "reason": ""}, "Give a reason of 1 to 1000 characters."),
        ({"duration": "2 fortnights", "reason": "r"}, "'2fortnights' is not a duration: write e.g. 30m, 2h, 1d12h or 1w."),
        ({"duration": "31d", "reason": "r"}, "A silence lasts at most 30 days."),
        ({"duration": "0m", "reason": "r"}, "A silence ends in the future: at least a minute from now."),
        ({"reason": "r"}, "Give the silence either a duration (e.g. 2h) or an end time, not both."),
        ({"duration": "1h", "rule": "nope", "reason": "r"}, "Unknown rule 'nope'"),
        ({"until": datetime(2020, 1, 1, tzinfo=UTC), "reason": "r"}, "A silence ends in the future"),
    ],
)  # fmt: skip
def test_it_refuses_a_silence_with_bad_input(offline_cluster, offline_personas, kwargs, message):
    with pytest.raises(AlertInvalid) as refused:
        actions.create_silence(actor=offline_personas["operator"], cluster=offline_cluster, **kwargs)
    assert refused.value.messages[0].startswith(message)
    assert AlertSilence.objects.count() == 0
    assert [e[:2] for e in alert_events()] == [("alert.silence.create", "refused")]


def test_it_refuses_a_silence_to_a_viewer(offline_cluster, offline_personas):
    with pytest.raises(PermissionDenied):
        actions.create_silence(
            actor=offline_personas["viewer"], cluster=offline_cluster, duration="1h", reason="quiet"
        )
    assert AlertSilence.objects.count() == 0
    assert alert_events() == [("alert.silence.create", "refused", "viewer", ["alert-rule:*"])]


def test_it_ends_a_silence_early_once(offline_cluster, offline_personas):
    silence = actions.create_silence(
        actor=offline_personas["operator"], cluster=offline_cluster, duration="1d", reason="r"
    )
    with pytest.raises(PermissionDenied):
        actions.end_silence(actor=offline_personas["viewer"], cluster=offline_cluster, silence_id=silence.pk)
    ended = actions.end_silence(
        actor=offline_personas["operator"], cluster=offline_cluster, silence_id=silence.pk
    )
    assert ended.ended_at is not None and AlertSilence.objects.get().ended_at == ended.ended_at
    with pytest.raises(AlertInvalid) as again:
        actions.end_silence(
            actor=offline_personas["operator"], cluster=offline_cluster, silence_id=silence.pk
        )
    assert again.value.messages == [f"Silence #{silence.pk} is already over."]
    with pytest.raises(AlertNotFound):
        actions.end_silence(
            actor=offline_personas["operator"], cluster=offline_cluster, silence_id=silence.pk + 1
        )
    target = [f"alert-silence:{silence.pk}"]
    assert alert_events() == [
        ("alert.silence.create", "success", "operator", target),
        ("alert.silence.end", "refused", "viewer", target),
        ("alert.silence.end", "success", "operator", target),
        ("alert.silence.end", "refused", "operator", target),
        ("alert.silence.end", "refused", "operator", [f"alert-silence:{silence.pk + 1}"]),
    ]
    event = AuditEvent.objects.get(action="alert.silence.end", outcome="success")
    assert (event.before["ended_at"], event.after["ended_at"] is not None) == (None, True)


def test_it_sets_a_rules_setting_for_admins_only(offline_cluster, offline_personas):
    with pytest.raises(PermissionDenied):
        actions.set_rule(
            actor=offline_personas["operator"], cluster=offline_cluster, rule="group_lag", threshold=5000
        )
    row = actions.set_rule(
        actor=offline_personas["admin"], cluster=offline_cluster, rule="group_lag", enabled=True, threshold=5000,
        severity="critical", escalate_after_min=15,
    )  # fmt: skip
    assert AlertRuleSetting.objects.get() == row
    assert (
        row.rule,
        row.enabled,
        row.threshold,
        row.severity,
        row.escalate_after_min,
        row.updated_by_name,
    ) == (
        "group_lag",
        True,
        5000.0,
        "critical",
        15,
        "admin",
    )
    again = actions.set_rule(
        actor=offline_personas["admin"], cluster=offline_cluster, rule="group_lag", enabled=False
    )
    assert (again.pk, again.enabled, again.threshold, again.severity, again.escalate_after_min) == (
        row.pk,
        False,
        None,
        "",
        None,
    )
    assert alert_events() == [
        ("alert.rule.update", "refused", "operator", ["alert-rule:group_lag"]),
        ("alert.rule.update", "success", "admin", ["alert-rule:group_lag"]),
        ("alert.rule.update", "success", "admin", ["alert-rule:group_lag"]),
    ]
    first, second = AuditEvent.objects.filter(action="alert.rule.update", outcome="success").order_by("pk")
    assert (first.before, first.after) == (
        None,
        {"enabled": True, "threshold": 5000.0, "severity": "critical", "escalate_after_min": 15},
    )
    assert second.before == first.after
    assert second.after == {"enabled": False, "threshold": None, "severity": "", "escalate_after_min": None}


@pytest.mark.parametrize(
    "rule, kwargs, message",
    [
        ("group_lag", {"threshold": -1}, "The threshold of 'group_lag' is a number of messages, 0 or more."),
        ("group_lag", {"threshold": 2.5}, "The threshold of 'group_lag' is a whole number of messages."),
        ("disk_days_to_full", {"threshold": 0}, "The threshold of 'disk_days_to_full' is a number of days above 0."),
        ("disk_days_to_full", {"threshold": 99999}, "The threshold of 'disk_days_to_full' is at most 3650 days."),
        ("group_time_lag", {"threshold": float("nan")}, "The threshold of 'group_time_lag' is a number of seconds, 0 or more."),
        ("broker_down", {"threshold": 1}, "'broker_down' has no threshold: it fires whenever its condition holds."),
        ("group_lag", {"severity": "doom"}, "Unknown severity 'doom' (one of warning, critical)."),
        ("group_lag", {"escalate_after_min": 0}, "Escalate after 1 to 10080 minutes unacknowledged, or never."),
    ],
)  # fmt: skip
def test_it_refuses_a_threshold_of_the_wrong_sign_or_unit(
    offline_cluster, offline_personas, rule, kwargs, message
):
    with pytest.raises(AlertInvalid) as refused:
        actions.set_rule(actor=offline_personas["admin"], cluster=offline_cluster, rule=rule, **kwargs)
    assert refused.value.messages == [message]
    assert AlertRuleSetting.objects.count() == 0
    assert alert_events() == [("alert.rule.update", "refused", "admin", [f"alert-rule:{rule}"])]


def test_it_refuses_an_unknown_rule_as_not_found(offline_cluster, offline_personas):
    with pytest.raises(AlertNotFound):
        actions.set_rule(
            actor=offline_personas["admin"], cluster=offline_cluster, rule="moon_phase", threshold=1
        )
    assert alert_events() == [("alert.rule.update", "refused", "admin", ["alert-rule:moon_phase"])]


def test_it_reads_durations():
    assert actions.parse_duration("90m") == timedelta(minutes=90)
    assert actions.parse_duration("1d 12h") == timedelta(hours=36)
    assert actions.parse_duration("1W") == timedelta(weeks=1)
    for bad in ("", "2", "h", "2h x", "-1h"):
        with pytest.raises(AlertInvalid):
            actions.parse_duration(bad)
