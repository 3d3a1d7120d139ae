"""``manage.py kafka alerts …`` (console/management/cli/alerts.py): the alerts area's actions with the
CLI's exit codes (3 not allowed, 4 refused, 6 not found, 2 usage), the same audit as the page."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from console.models.alerts import AlertRuleSetting, AlertSilence
from tests.unit.alert_world import alert_events, make_alert

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = StringIO()
    call_command("kafka", "alerts", *args, "--cluster", "offline", stdout=out)
    return out.getvalue()


def _exit(*args: str) -> tuple[int, str]:
    with pytest.raises(CommandError) as raised:
        _run(*args)
    return raised.value.returncode, str(raised.value)


def test_it_lists_alerts_by_state(offline_cluster, offline_personas):
    firing = make_alert(
        offline_cluster, "broker_down", "broker 2", severity="critical", summary="broker 2 gone"
    )
    gone = make_alert(offline_cluster, "group_lag", "g", state="resolved", resolved_at=timezone.now())
    items = json.loads(_run("list", "--as", "viewer", "--output", "json"))["items"]
    assert [(i["id"], i["rule"], i["subject"], i["state"]) for i in items] == [
        (firing.pk, "broker_down", "broker 2", "firing")
    ]
    assert items[0]["fired_at"] == firing.fired_at.isoformat()
    table = _run("list", "--as", "viewer", "--state", "resolved").splitlines()
    assert table[0].split()[:5] == ["ID", "SEVERITY", "STATE", "RULE", "SUBJECT"]
    assert [line.split()[0] for line in table[1:]] == [str(gone.pk)]
    assert _exit("list", "--as", "outsider")[0] == 3  # no role on the offline_cluster


def test_it_acknowledges_with_the_exit_codes_of_each_refusal(offline_cluster, offline_personas):
    alert = make_alert(offline_cluster)
    assert _exit("ack", str(alert.pk), "--note", "x", "--as", "viewer")[0] == 3
    assert _exit("ack", str(alert.pk), "--note", " ", "--as", "operator")[0] == 4
    assert _exit("ack", str(alert.pk + 9), "--note", "x", "--as", "operator")[0] == 6
    items = json.loads(_run("ack", str(alert.pk), "--note", "on it", "--as", "operator", "--output", "json"))[
        "items"
    ]
    assert (items[0]["state"], items[0]["note"], items[0]["acknowledged_by"]) == (
        "acknowledged",
        "on it",
        "operator",
    )
    assert _exit("ack", str(alert.pk), "--note", "again", "--as", "operator") == (
        4,
        f"Alert #{alert.pk} is already acknowledged by operator.",
    )
    assert [e[:3] for e in alert_events()] == [
        ("alert.acknowledge", "refused", "viewer"),
        ("alert.acknowledge", "refused", "operator"),
        ("alert.acknowledge", "refused", "operator"),
        ("alert.acknowledge", "success", "operator"),
        ("alert.acknowledge", "refused", "operator"),
    ]


def test_it_silences_lists_and_unsilences(offline_cluster, offline_personas):
    _run("silence", "--rule", "group_lag", "--subject", "group billing", "--for", "2h", "--reason", "backfill",
         "--as", "operator")  # fmt: skip
    silence = AlertSilence.objects.get()
    assert (silence.rule, silence.subject, silence.reason, silence.created_by_name) == (
        "group_lag",
        "group billing",
        "backfill",
        "operator",
    )
    assert timedelta(minutes=119) < silence.expires_at - timezone.now() <= timedelta(hours=2)
    until = (timezone.now() + timedelta(days=1)).replace(microsecond=0, tzinfo=None)
    _run("silence", "--until", until.isoformat(), "--reason", "upgrade", "--as", "operator")
    listed = json.loads(_run("silences", "--as", "viewer", "--output", "json"))["items"]
    assert [(s["rule"], s["reason"]) for s in listed] == [("group_lag", "backfill"), ("", "upgrade")]
    assert _exit("silence", "--for", "60d", "--reason", "r", "--as", "operator") == (
        4,
        "A silence lasts at most 30 days.",
    )
    assert _exit("silence", "--until", "tomorrow", "--reason", "r", "--as", "operator")[0] == 2
    assert _exit("silence", "--for", "1h", "--reason", "r", "--as", "viewer")[0] == 3
    _run("unsilence", str(silence.pk), "--as", "operator")
    assert AlertSilence.objects.get(pk=silence.pk).ended_at is not None
    assert _exit("unsilence", str(silence.pk), "--as", "operator")[0] == 4
    assert _exit("unsilence", "999", "--as", "operator")[0] == 6


def test_it_shows_rules_and_changes_one_field_keeping_the_others(offline_cluster, offline_personas):
    rows = json.loads(_run("rules", "--as", "viewer", "--output", "json"))["items"]
    assert len(rows) == 14 and rows[1]["name"] == "under_replicated"
    assert _exit("set-rule", "group_lag", "--threshold", "500", "--as", "operator")[0] == 3
    _run("set-rule", "group_lag", "--threshold", "500", "--severity", "critical", "--escalate-after", "15",
         "--as", "admin")  # fmt: skip
    _run("set-rule", "group_lag", "--disable", "--as", "admin")
    setting = AlertRuleSetting.objects.get()
    assert (setting.enabled, setting.threshold, setting.severity, setting.escalate_after_min) == (
        False,
        500.0,
        "critical",
        15,
    )
    _run(
        "set-rule",
        "group_lag",
        "--enable",
        "--threshold",
        "default",
        "--escalate-after",
        "never",
        "--as",
        "admin",
    )
    setting.refresh_from_db()
    assert (setting.enabled, setting.threshold, setting.severity, setting.escalate_after_min) == (
        True,
        None,
        "critical",
        None,
    )
    assert _exit("set-rule", "group_lag", "--threshold", "-1", "--as", "admin") == (
        4,
        "The threshold of 'group_lag' is a number of messages, 0 or more.",
    )
    assert _exit("set-rule", "group_lag", "--threshold", "lots", "--as", "admin")[0] == 2
    assert _exit("set-rule", "moon", "--threshold", "1", "--as", "admin")[0] == 6
    assert _exit("ack", "1", "--note", "n")[0] == 2  # a change names the person acting


def test_it_reads_without_as_and_refuses_a_change_without_it(offline_cluster, offline_personas):
    firing = make_alert(
        offline_cluster, "broker_down", "broker 3", severity="critical", summary="broker 3 gone"
    )
    items = json.loads(_run("list", "--output", "json"))["items"]
    assert [(i["id"], i["state"]) for i in items] == [(firing.pk, "firing")]
    assert "broker_down" in _run("rules")
    assert json.loads(_run("silences", "--output", "json"))["items"] == []
    code, text = _exit("ack", str(firing.pk), "--note", "looking")
    assert code == 2 and "--as" in text
