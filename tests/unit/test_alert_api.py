"""The alerts API (console/api/alerts.py): lists, acknowledge, silences, rule settings; status codes as
the refusal table says, each in the OpenAPI schema; the same actions (and audit) as the page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.identity import tokens
from console.models.alerts import Alert, AlertRuleSetting, AlertSilence
from tests.unit.alert_world import alert_events, make_alert

pytestmark = pytest.mark.django_db


def _api(client, user, method: str, route: str, body=None, **kwargs):
    secret = tokens.create_token(actor=user, name="t", scope="write", days=1).secret
    url = reverse(f"api:{route}", kwargs={"name": "offline", **kwargs})
    call = getattr(client, method)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    if method == "get":
        return call(url, body or {}, **headers)
    return call(url, body or {}, content_type="application/json", **headers)


def test_it_lists_alerts_by_state(client, offline_cluster, offline_personas):
    firing = make_alert(
        offline_cluster, "broker_down", "broker 1", severity="critical", summary="broker 1 gone"
    )
    gone = make_alert(offline_cluster, "group_lag", "g", state="resolved", resolved_at=timezone.now())
    response = _api(client, offline_personas["viewer"], "get", "alerts")
    assert response.status_code == 200
    body = response.json()
    assert (body["count"], [a["id"] for a in body["results"]]) == (1, [firing.pk])
    assert body["results"][0] == {
        "id": firing.pk, "rule": "broker_down", "title": "Broker down or fenced", "unit": "", "subject": "broker 1",
        "severity": "critical", "state": "firing", "summary": "broker 1 gone", "value": 3.0, "threshold": 0.0,
        "fired_at": firing.fired_at.isoformat(), "last_seen_at": firing.last_seen_at.isoformat(),
        "acknowledged_at": None, "acknowledged_by": "", "note": "", "escalated_at": None, "resolved_at": None,
    }  # fmt: skip
    resolved = _api(client, offline_personas["viewer"], "get", "alerts", {"state": "resolved"}).json()[
        "results"
    ]
    assert [a["id"] for a in resolved] == [gone.pk]
    assert (
        len(_api(client, offline_personas["viewer"], "get", "alerts", {"state": "all"}).json()["results"])
        == 2
    )
    bad = _api(client, offline_personas["viewer"], "get", "alerts", {"state": "sideways"})
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid")


def test_it_acknowledges_through_the_api_with_the_pages_refusals(client, offline_cluster, offline_personas):
    alert = make_alert(offline_cluster)
    denied = _api(
        client, offline_personas["viewer"], "post", "alert-acknowledge", {"note": "x"}, alert_id=alert.pk
    )
    assert denied.status_code == 403
    blank = _api(
        client, offline_personas["operator"], "post", "alert-acknowledge", {"note": ""}, alert_id=alert.pk
    )
    assert blank.status_code == 400
    ok = _api(
        client,
        offline_personas["operator"],
        "post",
        "alert-acknowledge",
        {"note": "on it"},
        alert_id=alert.pk,
    )
    assert ok.status_code == 200
    assert (ok.json()["state"], ok.json()["note"]) == ("acknowledged", "on it")
    assert ok.json()["acknowledged_by"].startswith("operator [token ")  # who, through which token
    again = _api(
        client,
        offline_personas["operator"],
        "post",
        "alert-acknowledge",
        {"note": "again"},
        alert_id=alert.pk,
    )
    assert (again.status_code, again.json()["error"]["code"]) == (400, "invalid")
    assert again.json()["error"]["message"].startswith(
        f"Alert #{alert.pk} is already acknowledged by operator"
    )
    missing = _api(
        client,
        offline_personas["operator"],
        "post",
        "alert-acknowledge",
        {"note": "x"},
        alert_id=alert.pk + 50,
    )
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "not_found")
    assert [(action, outcome, actor.split()[0]) for action, outcome, actor, _ in alert_events()] == [
        ("alert.acknowledge", "success", "operator"),
        ("alert.acknowledge", "refused", "operator"),
        ("alert.acknowledge", "refused", "operator"),
    ]


def test_it_creates_lists_and_ends_silences(client, offline_cluster, offline_personas):
    made = _api(
        client, offline_personas["operator"], "post", "alert-silences",
        {"rule": "group_lag", "subject": "group billing", "duration": "2h", "reason": "backfill"},
    )  # fmt: skip
    assert made.status_code == 201
    silence = AlertSilence.objects.get()
    assert made.json()["id"] == silence.pk and made.json()["expires_at"] == silence.expires_at.isoformat()
    until = (timezone.now() + timedelta(days=2)).replace(microsecond=0)
    second = _api(
        client,
        offline_personas["operator"],
        "post",
        "alert-silences",
        {"expires_at": until.isoformat(), "reason": "r"},
    )
    assert (second.status_code, second.json()["rule"], second.json()["expires_at"]) == (
        201,
        "",
        until.isoformat(),
    )
    listed = _api(client, offline_personas["viewer"], "get", "alert-silences").json()["results"]
    assert [s["reason"] for s in listed] == ["backfill", "r"]
    too_long = _api(
        client, offline_personas["operator"], "post", "alert-silences", {"duration": "45d", "reason": "r"}
    )
    assert (too_long.status_code, too_long.json()["error"]["message"]) == (
        400,
        "A silence lasts at most 30 days.",
    )
    no_reason = _api(client, offline_personas["operator"], "post", "alert-silences", {"duration": "1h"})
    assert no_reason.status_code == 400
    assert (
        _api(
            client, offline_personas["viewer"], "post", "alert-silences", {"duration": "1h", "reason": "r"}
        ).status_code
        == 403
    )
    ended = _api(client, offline_personas["operator"], "delete", "alert-silence", silence_id=silence.pk)
    assert ended.status_code == 200 and ended.json()["ended_at"] is not None
    assert (
        _api(
            client, offline_personas["operator"], "delete", "alert-silence", silence_id=silence.pk
        ).status_code
        == 400
    )
    assert (
        _api(client, offline_personas["operator"], "delete", "alert-silence", silence_id=999).status_code
        == 404
    )
    assert [
        s["reason"]
        for s in _api(client, offline_personas["viewer"], "get", "alert-silences").json()["results"]
    ] == ["r"]


def test_it_reads_and_sets_a_rule_for_admins(client, offline_cluster, offline_personas):
    rule = _api(client, offline_personas["viewer"], "get", "alert-rule", rule="group_time_lag")
    assert rule.status_code == 200
    assert (rule.json()["threshold"], rule.json()["unit"], rule.json()["customised"]) == (
        300.0,
        "seconds",
        False,
    )
    assert len(_api(client, offline_personas["viewer"], "get", "alert-rules").json()["results"]) == 14
    assert _api(client, offline_personas["viewer"], "get", "alert-rule", rule="moon").status_code == 404
    body = {"enabled": True, "threshold": 600, "severity": "critical", "escalate_after_min": 10}
    assert (
        _api(
            client, offline_personas["operator"], "put", "alert-rule", body, rule="group_time_lag"
        ).status_code
        == 403
    )
    wrong = _api(
        client,
        offline_personas["admin"],
        "put",
        "alert-rule",
        {**body, "threshold": -600},
        rule="group_time_lag",
    )
    assert (wrong.status_code, wrong.json()["error"]["message"]) == (
        400,
        "The threshold of 'group_time_lag' is a number of seconds, 0 or more.",
    )
    assert _api(client, offline_personas["admin"], "put", "alert-rule", body, rule="moon").status_code == 404
    ok = _api(client, offline_personas["admin"], "put", "alert-rule", body, rule="group_time_lag")
    assert ok.status_code == 200
    assert (
        ok.json()["threshold"],
        ok.json()["severity"],
        ok.json()["escalate_after_min"],
        ok.json()["updated_by"][:5],
    ) == (600.0, "critical", 10, "admin")
    assert AlertRuleSetting.objects.values_list("rule", "threshold").get() == ("group_time_lag", 600.0)
    assert Alert.objects.count() == 0


def test_every_status_it_answers_is_in_the_schema(client, offline_personas):
    client.force_login(offline_personas["admin"])
    paths = client.get(reverse("api:schema") + "?format=json").json()["paths"]
    base = "/api/v1/clusters/{name}/"
    expected = {
        ("alerts/", "get"): {"200", "400", "403", "404"},
        ("alerts/{alert_id}/acknowledge/", "post"): {"200", "400", "403", "404"},
        ("alert-silences/", "get"): {"200", "403", "404"},
        ("alert-silences/", "post"): {"201", "400", "403", "404"},
        ("alert-silences/{silence_id}/", "delete"): {"200", "400", "403", "404"},
        ("alert-rules/", "get"): {"200", "403", "404"},
        ("alert-rules/{rule}/", "get"): {"200", "403", "404"},
        ("alert-rules/{rule}/", "put"): {"200", "400", "403", "404"},
    }
    for (path, method), statuses in expected.items():
        assert statuses <= set(paths[base + path][method]["responses"]), (path, method)
