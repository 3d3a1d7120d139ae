"""An alert's life as the evaluator drives it (console/alerts/lifecycle.py), on a cluster nobody
listens on: fire, update, resolve; an acknowledged alert stays so; a rule not evaluated keeps its
alerts; silences keep notifications back but not the audit; escalation once; two evaluators racing
make one alert and one notification (a race on PostgreSQL, where `make test` runs this module again;
SQLite serialises the two transactions)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from console import access
from console.alerts import lifecycle, rules
from console.alerts.core import Finding
from console.models import AuditEvent
from console.models.alerts import Alert, AlertSilence, AlertState
from console.models.notify import NotificationDelivery
from console.notify import actions as notify_actions
from console.notify import events
from tests.conftest import make_personas

UNDER = Finding("under_replicated", "", 3, 0.0, "warning", "3 partition(s) under-replicated", {})
BROKER = Finding("broker_down", "broker 2", 1, 0.0, "critical", "broker 2 is fenced", {"broker": 2})
ALERT_EVENTS = [events.ALERT_FIRING, events.ALERT_RESOLVED, events.ALERT_ESCALATED]


def _settings(**over) -> dict[str, rules.Effective]:
    out = {name: rules.defaults(rule) for name, rule in rules.RULES.items()}
    out.update(over)
    return out


@pytest.fixture
def channel(offline_cluster, settings):
    settings.NOTIFY_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    people = make_personas(offline_cluster)
    found, _ = notify_actions.create_channel(
        actor=people["admin"],
        cluster=offline_cluster,
        name="pager",
        kind="webhook",
        events=ALERT_EVENTS,
        url="http://127.0.0.1:9/hook",
    )
    return found


def _sent() -> list[tuple[str, str]]:
    rows = NotificationDelivery.objects.filter(event__startswith="alert.").order_by("pk")
    return [(d.event, d.payload["details"]["rule"] + "|" + d.payload["details"]["subject"]) for d in rows]


def _audited() -> list[tuple]:
    rows = AuditEvent.objects.filter(action__in=["alert.fire", "alert.resolve", "alert.escalate"]).order_by(
        "pk"
    )
    return [(e.action, e.actor_name, e.targets, e.params) for e in rows]


def _apply(cluster, found, evaluated=("under_replicated", "broker_down"), **kw):
    return lifecycle.apply(
        cluster, evaluated=evaluated, found=found, settings=kw.pop("settings", _settings()), **kw
    )


def test_it_fires_updates_and_resolves_with_one_audit_event_and_notification_each(offline_cluster, channel):
    first = _apply(offline_cluster, [UNDER, BROKER])
    under, broker = Alert.objects.get(rule="under_replicated"), Alert.objects.get(rule="broker_down")
    assert first.fired == [under.pk, broker.pk] and first.updated == []
    assert (under.state, under.value, under.summary, under.severity) == (
        "firing",
        3.0,
        "3 partition(s) under-replicated",
        "warning",
    )

    worse = Finding("under_replicated", "", 7, 0.0, "warning", "7 partition(s) under-replicated", {})
    second = _apply(offline_cluster, [worse, BROKER])
    under.refresh_from_db()
    assert second.fired == [] and second.updated == [under.pk, broker.pk] and second.resolved == []
    assert (under.state, under.value, under.summary) == ("firing", 7.0, "7 partition(s) under-replicated")
    assert under.last_seen_at > under.fired_at

    third = _apply(offline_cluster, [BROKER])
    under.refresh_from_db()
    assert third.resolved == [under.pk] and under.state == AlertState.RESOLVED and under.resolved_at

    again = _apply(offline_cluster, [UNDER, BROKER])  # a new occurrence is a new alert
    assert len(again.fired) == 1 and again.fired[0] != under.pk
    assert _sent() == [
        (events.ALERT_FIRING, "under_replicated|"),
        (events.ALERT_FIRING, "broker_down|broker 2"),
        (events.ALERT_RESOLVED, "under_replicated|"),
        (events.ALERT_FIRING, "under_replicated|"),
    ]
    assert _audited() == [
        ("alert.fire", "console-system", [f"alert:{under.pk}"], {}),
        ("alert.fire", "console-system", [f"alert:{broker.pk}"], {}),
        ("alert.resolve", "console-system", [f"alert:{under.pk}"], {}),
        ("alert.fire", "console-system", [f"alert:{again.fired[0]}"], {}),
    ]
    resolved = NotificationDelivery.objects.get(event=events.ALERT_RESOLVED)
    assert resolved.payload["title"] == "[warning] Under-replicated partitions resolved on offline"
    assert (
        resolved.payload["details"]["state"] == "resolved"
        and resolved.payload["link"] == "/c/offline/alerts/"
    )


def test_an_acknowledged_alert_stays_acknowledged_until_it_resolves(offline_cluster, channel):
    _apply(offline_cluster, [UNDER])
    Alert.objects.filter(rule="under_replicated").update(state=AlertState.ACKNOWLEDGED, ack_note="on it")
    _apply(offline_cluster, [UNDER])
    assert Alert.objects.get().state == AlertState.ACKNOWLEDGED
    _apply(offline_cluster, [])
    assert Alert.objects.get().state == AlertState.RESOLVED


def test_a_rule_not_evaluated_keeps_its_open_alerts(offline_cluster, channel):
    _apply(offline_cluster, [UNDER, BROKER])
    changes = _apply(offline_cluster, [], evaluated=("under_replicated",))  # broker reads failed
    assert [a.rule for a in Alert.objects.filter(state="firing")] == ["broker_down"]
    assert len(changes.resolved) == 1


@pytest.mark.parametrize(
    ("rule", "subject", "sent"),
    [
        ("", "", False),
        ("broker_down", "", False),
        ("broker_down", "broker 2", False),
        ("broker_down", "broker 3", True),
    ],
)
def test_a_matching_silence_keeps_the_notification_back_but_not_the_audit(
    offline_cluster, channel, rule, subject, sent
):
    silence = AlertSilence.objects.create(
        cluster=offline_cluster,
        rule=rule,
        subject=subject,
        reason="maintenance",
        created_by_name="admin",
        expires_at=timezone.now() + timedelta(hours=1),
    )
    _apply(offline_cluster, [BROKER])
    assert _sent() == ([(events.ALERT_FIRING, "broker_down|broker 2")] if sent else [])
    ((action, _, _, params),) = _audited()
    assert action == "alert.fire" and params == ({} if sent else {"silenced_by": silence.pk})


def test_an_expired_or_ended_silence_no_longer_holds_anything_back(offline_cluster, channel):
    now = timezone.now()
    AlertSilence.objects.create(
        cluster=offline_cluster, reason="r", created_by_name="a", expires_at=now - timedelta(seconds=1)
    )
    AlertSilence.objects.create(
        cluster=offline_cluster,
        reason="r",
        created_by_name="a",
        expires_at=now + timedelta(hours=1),
        ended_at=now,
    )
    _apply(offline_cluster, [BROKER])
    assert _sent() == [(events.ALERT_FIRING, "broker_down|broker 2")]


def test_it_escalates_an_unacknowledged_alert_once_after_its_minutes(offline_cluster, channel):
    escalating = _settings(broker_down=rules.Effective("broker_down", True, 0.0, "critical", 10))
    _apply(offline_cluster, [BROKER, UNDER], settings=escalating)
    Alert.objects.update(fired_at=timezone.now() - timedelta(minutes=11))
    changes = _apply(offline_cluster, [BROKER, UNDER], settings=escalating)
    broker = Alert.objects.get(rule="broker_down")
    assert changes.escalated == [broker.pk] and broker.escalated_at is not None and broker.state == "firing"
    assert _apply(offline_cluster, [BROKER, UNDER], settings=escalating).escalated == []  # once
    assert _sent()[-1] == (events.ALERT_ESCALATED, "broker_down|broker 2")
    assert [a for a, *_ in _audited()].count("alert.escalate") == 1
    escalated = NotificationDelivery.objects.get(event=events.ALERT_ESCALATED)
    assert escalated.payload["details"]["escalated_at"] == broker.escalated_at.isoformat()


def test_an_acknowledged_alert_is_not_escalated(offline_cluster, channel):
    escalating = _settings(broker_down=rules.Effective("broker_down", True, 0.0, "critical", 1))
    _apply(offline_cluster, [BROKER], settings=escalating)
    Alert.objects.update(fired_at=timezone.now() - timedelta(minutes=5), state=AlertState.ACKNOWLEDGED)
    assert _apply(offline_cluster, [BROKER], settings=escalating).escalated == []


@pytest.mark.django_db(transaction=True)
def test_two_evaluators_racing_make_one_alert_and_one_notification(offline_cluster, channel):
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []
    access.system_actor()  # made by a migration in a real database; this test's flush removed it

    def evaluator() -> None:
        try:
            barrier.wait(5)
            _apply(offline_cluster, [BROKER], evaluated=("broker_down",))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=evaluator) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert Alert.objects.filter(rule="broker_down").count() == 1
    assert _sent() == [(events.ALERT_FIRING, "broker_down|broker 2")]
    assert [a for a, *_ in _audited()] == ["alert.fire"]
