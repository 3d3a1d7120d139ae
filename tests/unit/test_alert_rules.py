"""The rules' pure side (console/alerts/core.py, rules.py): thresholds in each direction, a
cluster's own setting of a rule, disabled and unmeasured rules, lag by offsets and by time."""

from __future__ import annotations

import pytest

from console.alerts import core, rules
from console.alerts.core import Finding, Measure
from console.models.alerts import AlertRuleSetting


def _settings(**over) -> dict[str, rules.Effective]:
    out = {name: rules.defaults(rule) for name, rule in rules.RULES.items()}
    out.update(over)
    return out


def test_it_keeps_measures_that_break_their_threshold_in_the_rules_direction():
    measures = {
        "under_replicated": core.one(Measure(0, "0 partition(s) under-replicated")),
        "offline_partitions": core.one(Measure(2, "2 partition(s) offline (no leader)")),
        "disk_days_to_full": {"broker 1": Measure(3.5, "soon"), "broker 2": Measure(40, "later")},
        "broker_down": None,  # its reads failed: not evaluated
    }
    evaluated, found = core.findings(measures, _settings())
    assert evaluated == {"under_replicated", "offline_partitions", "disk_days_to_full"}
    assert found == [
        Finding("offline_partitions", "", 2, 0.0, "critical", "2 partition(s) offline (no leader)", {}),
        Finding("disk_days_to_full", "broker 1", 3.5, 7.0, "warning", "soon", {}),
    ]


def test_a_disabled_rule_is_evaluated_with_nothing_found_so_its_alerts_resolve():
    off = rules.Effective("offline_partitions", False, 0.0, "critical", None)
    evaluated, found = core.findings(
        {"offline_partitions": core.one(Measure(5, "5 offline"))}, _settings(offline_partitions=off)
    )
    assert "offline_partitions" in evaluated and found == []


@pytest.mark.django_db
def test_a_clusters_setting_overrides_the_rules_defaults(offline_cluster):
    AlertRuleSetting.objects.create(
        cluster=offline_cluster, rule="group_lag", threshold=50, severity="critical", escalate_after_min=15
    )
    AlertRuleSetting.objects.create(cluster=offline_cluster, rule="quorum_lag", enabled=False)
    got = rules.settings_for(offline_cluster)
    assert set(got) == set(rules.RULES)
    assert got["group_lag"] == rules.Effective("group_lag", True, 50.0, "critical", 15)
    assert got["quorum_lag"] == rules.Effective("quorum_lag", False, 1000.0, "warning", None)
    assert got["under_replicated"] == rules.Effective("under_replicated", True, 0.0, "warning", None)


def test_it_computes_group_lag_by_offsets_and_by_time():
    committed = {"g1": {("t", 0): 5, ("t", 1): 10}, "g2": {("t", 0): 8}}
    ends = {("t", 0): 8, ("t", 1): 10}
    lags = core.group_lags(committed, ends)
    assert lags == {"g1": {("t", 0): 3, ("t", 1): 0}, "g2": {("t", 0): 0}}
    assert core.group_measures(lags)["group g1"] == Measure(
        3,
        "group g1 is 3 message(s) behind on 1 partition(s)",
        {"group": "g1", "lag": 3, "partitions_behind": 1},
    )
    now_ms = 1_000_000_000
    times = {("g1", "t", 0): now_ms - 900_000, ("g1", "t", 1): now_ms - 5_000_000}  # t-1 is not lagging
    by_time = core.time_lag_measures(lags, times, committed, now_ms)
    assert by_time["group g1"] == Measure(
        900.0,
        "group g1's position is 15 min old (at t-0)",
        {"group": "g1", "topic": "t", "partition": 0, "seconds": 900.0, "offset": 5},
    )
    assert by_time["group g2"].value == 0.0


def test_it_counts_broker_states_and_certificate_days():
    found = core.broker_measures([(1, "up", ""), (2, "fenced", "registered but fenced")])
    assert {k: v.value for k, v in found.items()} == {"broker 1": 0.0, "broker 2": 1.0}
    assert found["broker 2"].summary == "broker 2 is fenced: registered but fenced"
    assert core.days_left(86400 * 10.04, 0) == 10.0
    expired = core.certificate_measure("client", "CN=console", -2.0)[""]
    assert expired.summary == "the client certificate (CN=console) expired 2 day(s) ago"
