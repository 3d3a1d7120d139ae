"""The alerts area's reads (console/alerts/reads.py): lists, silences, the rule table, and the open
counts per cluster in one query."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.alerts import reads, rules
from console.models import Cluster
from console.models.alerts import AlertRuleSetting, AlertSilence
from tests.unit.alert_world import make_alert

pytestmark = pytest.mark.django_db


def _cluster(name: str) -> Cluster:
    return Cluster.objects.create(name=name, bootstrap_servers="127.0.0.1:1")


def test_it_lists_open_alerts_worst_first_and_resolved_ones_newest_first():
    c = _cluster("east")
    now = timezone.now()
    old_warn = make_alert(c, "group_lag", "group a", fired_at=now - timedelta(hours=2))
    new_warn = make_alert(c, "group_lag", "group b", fired_at=now - timedelta(minutes=1))
    crit = make_alert(c, "broker_down", "broker 1", severity="critical", state="acknowledged",
                      fired_at=now - timedelta(hours=5))  # fmt: skip
    gone1 = make_alert(c, "under_replicated", state="resolved", resolved_at=now - timedelta(hours=1))
    gone2 = make_alert(c, "offline_partitions", state="resolved", resolved_at=now - timedelta(minutes=3))
    make_alert(_cluster("west"), "broker_down", "broker 9", severity="critical")
    assert reads.open_alerts(c) == [crit, new_warn, old_warn]
    assert reads.recently_resolved(c) == [gone2, gone1]
    assert reads.alerts(c, state="firing") == [new_warn, old_warn]
    assert reads.alerts(c, state="") == [
        new_warn,
        gone2,
        gone1,
        old_warn,
        crit,
    ]  # newest fired first (then newest id)
    assert reads.glance(c, few=2) == reads.Glance(reads.OpenCount(3, 1), [crit, new_warn])
    assert reads.glance(_cluster("quiet")) == reads.Glance(reads.OpenCount(0, 0), [])


def test_it_counts_open_alerts_and_the_worst_severity_of_every_cluster_in_one_query(
    django_assert_num_queries,
):
    east, west, quiet = _cluster("east"), _cluster("west"), _cluster("quiet")
    make_alert(east, "group_lag", "g1")
    make_alert(east, "broker_down", "broker 2", severity="critical", state="acknowledged")
    make_alert(east, "under_replicated", state="resolved", resolved_at=timezone.now())
    make_alert(west, "group_lag", "g1")
    with django_assert_num_queries(1):
        counts = reads.open_counts()
    assert counts == {east.pk: reads.OpenCount(2, 1), west.pk: reads.OpenCount(1, 0)}
    assert (counts[east.pk].worst, counts[west.pk].worst, reads.OpenCount().worst) == (
        "critical",
        "warning",
        "",
    )
    assert reads.open_counts([west.pk, quiet.pk]) == {west.pk: reads.OpenCount(1, 0)}
    with django_assert_num_queries(1):
        rows = list(
            Cluster.objects.annotate(**reads.open_count_columns()).values(
                "name", "open_alerts", "open_critical"
            )
        )
    assert sorted((r["name"], r["open_alerts"], r["open_critical"]) for r in rows) == [
        ("east", 2, 1), ("quiet", 0, 0), ("west", 1, 0),
    ]  # fmt: skip


def test_it_lists_active_silences_and_every_rule_with_the_clusters_setting():
    c = _cluster("east")
    now = timezone.now()
    keep = AlertSilence.objects.create(
        cluster=c, reason="r", created_by_name="x", expires_at=now + timedelta(hours=1)
    )
    AlertSilence.objects.create(
        cluster=c, reason="r", created_by_name="x", expires_at=now - timedelta(seconds=1)
    )
    AlertSilence.objects.create(cluster=c, reason="r", created_by_name="x", expires_at=now + timedelta(hours=2),
                                ended_at=now)  # fmt: skip
    assert reads.active_silences(c) == [keep]
    AlertRuleSetting.objects.create(
        cluster=c, rule="group_lag", enabled=False, threshold=50, updated_by_name="ann"
    )
    rows = {r.name: r for r in reads.rule_rows(c)}
    assert list(rows) == list(rules.RULES)
    lag = rows["group_lag"]
    assert (lag.enabled, lag.threshold, lag.default_threshold, lag.severity, lag.customised, lag.updated_by) == (
        False, 50.0, 10000.0, "warning", True, "ann",
    )  # fmt: skip
    disk = rows["disk_days_to_full"]
    assert (disk.enabled, disk.threshold, disk.below, disk.customised, disk.updated_at) == (
        True,
        7.0,
        True,
        False,
        None,
    )
    assert reads.rule_row(c, "group_lag") == lag and reads.rule_row(c, "nope") is None
