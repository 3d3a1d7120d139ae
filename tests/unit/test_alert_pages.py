"""The alerts page (/c/<name>/alerts/), its forms and the overview's box: each POST one area action,
refusals on the form (200), who may do what as the service says."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models.alerts import Alert, AlertRuleSetting, AlertSilence
from tests.unit.alert_world import alert_events, make_alert

pytestmark = pytest.mark.django_db


def _url(cluster, route: str = "alert_list", **kwargs) -> str:
    return reverse(route, kwargs={"name": cluster.name, **kwargs})


def test_it_shows_open_resolved_silences_and_rules_to_a_viewer_without_forms(
    client, offline_cluster, offline_personas
):
    firing = make_alert(
        offline_cluster, "broker_down", "broker 2", severity="critical", summary="broker 2 is gone"
    )
    acked = make_alert(offline_cluster, "group_lag", "group billing", state="acknowledged", acknowledged_by_name="ann",
                       acknowledged_at=timezone.now(), ack_note="consumer restarted")  # fmt: skip
    gone = make_alert(offline_cluster, "under_replicated", state="resolved", resolved_at=timezone.now())
    AlertSilence.objects.create(cluster=offline_cluster, rule="group_lag", reason="backfill", created_by_name="ann",
                                expires_at=timezone.now() + timedelta(hours=1))  # fmt: skip
    client.force_login(offline_personas["viewer"])
    response = client.get(_url(offline_cluster))
    body = response.content.decode()
    assert response.status_code == 200
    assert [r["alert"]["id"] for r in response.context["open"]] == [firing.pk, acked.pk]
    assert [a["id"] for a in response.context["resolved"]] == [gone.pk]
    assert [s["reason"] for s in response.context["silences"]] == ["backfill"]
    assert (response.context["can_manage"], response.context["can_administer"]) == (False, False)
    assert "broker 2 is gone" in body and "consumer restarted" in body and "backfill" in body
    assert 'class="inline ack-form"' not in body and 'id="alert-silence-form"' not in body
    assert 'class="inline rule-form"' not in body and "End now" not in body
    assert body.count('<tr data-rule="') == 14
    assert f'href="{_url(offline_cluster)}">Alerts</a>' in body  # the cluster's navigation


def test_it_offers_an_operator_the_acknowledge_and_silence_forms_and_an_admin_the_rule_forms(
    client, offline_cluster, offline_personas
):
    make_alert(offline_cluster)
    client.force_login(offline_personas["operator"])
    body = client.get(_url(offline_cluster)).content.decode()
    assert body.count('class="inline ack-form"') == 1 and 'id="alert-silence-form"' in body
    assert 'class="inline rule-form"' not in body
    client.force_login(offline_personas["admin"])
    body = client.get(_url(offline_cluster)).content.decode()
    assert body.count('class="inline rule-form"') == 14


def test_it_acknowledges_from_the_page(client, offline_cluster, offline_personas):
    alert = make_alert(offline_cluster)
    client.force_login(offline_personas["operator"])
    response = client.post(_url(offline_cluster, "alert_acknowledge", alert_id=alert.pk), {"note": "looking"})
    assert (response.status_code, response.url) == (302, _url(offline_cluster))
    alert.refresh_from_db()
    assert (alert.state, alert.ack_note, alert.acknowledged_by_name) == (
        "acknowledged",
        "looking",
        "operator",
    )
    assert alert_events() == [("alert.acknowledge", "success", "operator", [f"alert:{alert.pk}"])]
    page = client.get(_url(offline_cluster)).content.decode()
    assert f"Alert #{alert.pk} acknowledged." in page and "acknowledged by operator" in page


def test_it_shows_a_refused_acknowledgement_on_its_form(client, offline_cluster, offline_personas):
    alert = make_alert(offline_cluster, state="resolved", resolved_at=timezone.now())
    firing = make_alert(offline_cluster, "group_lag", "g")
    client.force_login(offline_personas["operator"])
    blank = client.post(_url(offline_cluster, "alert_acknowledge", alert_id=firing.pk), {"note": ""})
    assert blank.status_code == 200
    assert blank.context["open"][0]["form"].errors == {"note": ["This field is required."]}
    resolved = client.post(_url(offline_cluster, "alert_acknowledge", alert_id=alert.pk), {"note": "late"})
    assert resolved.status_code == 200
    assert f"Alert #{alert.pk} was resolved at" in resolved.content.decode()
    assert Alert.objects.get(pk=alert.pk).state == "resolved"
    assert (
        client.post(_url(offline_cluster, "alert_acknowledge", alert_id=9999), {"note": "x"}).status_code
        == 404
    )
    client.force_login(offline_personas["viewer"])
    assert (
        client.post(_url(offline_cluster, "alert_acknowledge", alert_id=firing.pk), {"note": "x"}).status_code
        == 403
    )
    assert Alert.objects.get(pk=firing.pk).state == "firing"


def test_it_adds_and_ends_a_silence_from_the_page(client, offline_cluster, offline_personas):
    client.force_login(offline_personas["operator"])
    bad = client.post(
        _url(offline_cluster, "alert_silence_create"),
        {"rule": "group_lag", "duration": "soon", "reason": "r"},
    )
    assert bad.status_code == 200
    assert bad.context["silence_form"].non_field_errors() == [
        "'soon' is not a duration: write e.g. 30m, 2h, 1d12h or 1w."
    ]
    assert AlertSilence.objects.count() == 0
    made = client.post(
        _url(offline_cluster, "alert_silence_create"),
        {"rule": "group_lag", "subject": "group billing", "duration": "90m", "reason": "backfill"},
    )
    assert made.status_code == 302
    silence = AlertSilence.objects.get()
    assert (silence.rule, silence.subject, silence.reason, silence.created_by_name) == (
        "group_lag",
        "group billing",
        "backfill",
        "operator",
    )
    ended = client.post(_url(offline_cluster, "alert_silence_end", silence_id=silence.pk))
    assert ended.status_code == 302 and AlertSilence.objects.get().ended_at is not None
    again = client.post(_url(offline_cluster, "alert_silence_end", silence_id=silence.pk), follow=True)
    assert f"Silence #{silence.pk} is already over." in again.content.decode()
    assert [e[:2] for e in alert_events()] == [
        ("alert.silence.create", "refused"),
        ("alert.silence.create", "success"),
        ("alert.silence.end", "success"),
        ("alert.silence.end", "refused"),
    ]


def test_it_silences_until_a_time_from_the_page(client, offline_cluster, offline_personas):
    client.force_login(offline_personas["operator"])
    until = (timezone.now() + timedelta(days=2)).replace(second=0, microsecond=0)
    url = _url(offline_cluster, "alert_silence_create")
    made = client.post(
        url, {"duration": "2h", "until": until.strftime("%Y-%m-%dT%H:%M"), "reason": "upgrade"}
    )
    assert made.status_code == 302
    assert AlertSilence.objects.values_list("rule", "subject", "expires_at").get() == ("", "", until)
    neither = client.post(url, {"duration": "", "until": "", "reason": "r"})
    assert neither.context["silence_form"].non_field_errors() == [
        "Give the silence either a duration (e.g. 2h) or an end time, not both."
    ]


def test_it_sets_a_rule_from_the_page_for_admins_only(client, offline_cluster, offline_personas):
    url = _url(offline_cluster, "alert_rule_set", rule="group_lag")
    client.force_login(offline_personas["operator"])
    assert client.post(url, {"enabled": "on", "threshold": "500"}).status_code == 403
    client.force_login(offline_personas["admin"])
    wrong = client.post(url, {"enabled": "on", "threshold": "-5"})
    assert wrong.status_code == 200
    row = next(r for r in wrong.context["rules"] if r["rule"].name == "group_lag")
    assert row["form"].non_field_errors() == [
        "The threshold of 'group_lag' is a number of messages, 0 or more."
    ]
    assert AlertRuleSetting.objects.count() == 0
    saved = client.post(
        url, {"enabled": "on", "threshold": "500", "severity": "critical", "escalate_after_min": "30"}
    )
    assert saved.status_code == 302
    setting = AlertRuleSetting.objects.get()
    assert (setting.enabled, setting.threshold, setting.severity, setting.escalate_after_min) == (
        True,
        500.0,
        "critical",
        30,
    )
    page = client.get(_url(offline_cluster))
    shown = next(r for r in page.context["rules"] if r["rule"].name == "group_lag")
    assert (shown["fires_when"], shown["form"].initial["threshold"]) == ("> 500 messages", 500.0)
    client.post(url, {})  # unchecked: disabled, every field back to the default
    assert AlertRuleSetting.objects.values_list("enabled", "threshold", "severity").get() == (False, None, "")


def test_the_overview_box_counts_open_alerts_and_shows_the_worst(client, offline_cluster, offline_personas):
    make_alert(offline_cluster, "group_lag", "g1", summary="g1 behind")
    make_alert(offline_cluster, "broker_down", "broker 3", severity="critical", summary="broker 3 gone")
    make_alert(offline_cluster, "under_replicated", state="resolved", resolved_at=timezone.now())
    client.force_login(offline_personas["viewer"])
    response = client.get(_url(offline_cluster, "alert_glance"))
    body = response.content.decode()
    assert response.status_code == 200
    assert (response.context["count"].count, response.context["count"].worst) == (2, "critical")
    assert [a["summary"] for a in response.context["worst"]] == ["broker 3 gone", "g1 behind"]
    assert '<span class="error" id="open-alerts-count">2 open</span>' in body
    assert response["Vary"].count("HX-Request") == 1
    Alert.objects.update(state="resolved", resolved_at=timezone.now())
    assert (
        '<span id="open-alerts-count">none open</span>'
        in client.get(_url(offline_cluster, "alert_glance")).content.decode()
    )
