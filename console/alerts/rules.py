"""The built-in health rules (issue 37 item 1) and a cluster's effective settings of them.

A rule is code: its name, what it measures (``unit``), the default threshold and severity. A
cluster's ``AlertRuleSetting`` row overrides enabled, threshold, severity and escalation. Whether a
measured value breaks the threshold depends on the rule's direction: most fire when the value is
above the threshold (partitions under-replicated > 0), a few when below (days left < 7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from console.models.alerts import AlertRuleSetting, AlertSeverity

if TYPE_CHECKING:
    from console.models import Cluster

CRITICAL = AlertSeverity.CRITICAL.value
WARNING = AlertSeverity.WARNING.value


@dataclass(frozen=True)
class Rule:
    """One built-in rule. ``below``: it fires when the value is below the threshold (days left),
    otherwise above it. ``per_subject``: one alert per broker / group / certificate, not per cluster."""

    name: str
    title: str
    unit: str
    default_threshold: float
    default_severity: str
    description: str
    below: bool = False
    per_subject: bool = False

    def breaks(self, value: float, threshold: float) -> bool:
        """Whether ``value`` breaks ``threshold`` in this rule's direction."""
        return value < threshold if self.below else value > threshold


@dataclass(frozen=True)
class Effective:
    """A rule as it applies to one cluster: its defaults after the cluster's setting row."""

    rule: str
    enabled: bool
    threshold: float
    severity: str
    escalate_after_min: int | None


_RULES = (
    Rule(
        "cluster_unreachable",
        "Cluster unreachable",
        "",
        0,
        CRITICAL,
        "The console could not read the cluster's metadata within the evaluation's time bound.",
    ),
    Rule(
        "under_replicated",
        "Under-replicated partitions",
        "partitions",
        0,
        WARNING,
        "Partitions whose in-sync replicas are fewer than their replicas.",
    ),
    Rule(
        "offline_partitions",
        "Offline partitions",
        "partitions",
        0,
        CRITICAL,
        "Partitions without a leader: nobody can produce to or consume from them.",
    ),
    Rule(
        "under_min_isr",
        "Partitions under min ISR",
        "partitions",
        0,
        CRITICAL,
        "Partitions with fewer in-sync replicas than the topic's min.insync.replicas: acks=all "
        "producers are refused.",
    ),
    Rule(
        "broker_down",
        "Broker down or fenced",
        "",
        0,
        CRITICAL,
        "A broker that holds replicas (or is registered) is missing from the cluster's metadata or "
        "fenced by the controller. One alert per broker.",
        per_subject=True,
    ),
    Rule(
        "controller_change",
        "Controller changed",
        "changes",
        0,
        WARNING,
        "The KRaft quorum's leader changed since the last evaluation.",
    ),
    Rule(
        "quorum_lag",
        "Quorum voter lagging",
        "records",
        1000,
        WARNING,
        "A quorum voter's log end offset is behind the leader's by more than the threshold "
        "(DescribeQuorum). One alert per voter.",
        per_subject=True,
    ),
    Rule(
        "group_lag",
        "Consumer group lag (messages)",
        "messages",
        10000,
        WARNING,
        "A consumer group's total lag (log end minus committed offsets) over its partitions. One "
        "alert per group.",
        per_subject=True,
    ),
    Rule(
        "group_time_lag",
        "Consumer group lag (time)",
        "seconds",
        300,
        WARNING,
        "How old a group's position is: now minus the timestamp of the record at its committed "
        "offset, the oldest over its lagging partitions. One alert per group.",
        per_subject=True,
    ),
    Rule(
        "disk_days_to_full",
        "Disk full soon",
        "days",
        7,
        WARNING,
        "Days until a broker's log directory is full, from the capacity forecast. One alert per broker.",
        below=True,
        per_subject=True,
    ),
    Rule(
        "client_cert_expiry",
        "Client certificate expiring",
        "days",
        14,
        WARNING,
        "Days until the cluster connection's client certificate expires.",
        below=True,
    ),
    Rule(
        "server_cert_expiry",
        "Broker certificate expiring",
        "days",
        14,
        WARNING,
        "Days until the certificate the brokers present on their TLS listener expires.",
        below=True,
    ),
    Rule(
        "throttles_left",
        "Throttles left behind",
        "configs",
        0,
        WARNING,
        "Replication throttle configs set while no reassignment is running.",
    ),
    Rule(
        "audit_chain_broken",
        "Audit chain broken",
        "",
        0,
        CRITICAL,
        "The latest verification of the audit log's hash chain or anchors failed.",
    ),
)

RULES: dict[str, Rule] = {rule.name: rule for rule in _RULES}


def defaults(rule: Rule) -> Effective:
    """A rule's effective setting on a cluster without a setting row."""
    return Effective(rule.name, True, float(rule.default_threshold), rule.default_severity, None)


def effective(rule: Rule, row: AlertRuleSetting | None) -> Effective:
    """``rule`` after a cluster's setting ``row`` (None: the defaults)."""
    if row is None:
        return defaults(rule)
    return Effective(
        rule=rule.name,
        enabled=row.enabled,
        threshold=float(rule.default_threshold if row.threshold is None else row.threshold),
        severity=row.severity or rule.default_severity,
        escalate_after_min=row.escalate_after_min,
    )


def settings_for(cluster: Cluster) -> dict[str, Effective]:
    """Every rule's effective setting on ``cluster`` (one query)."""
    rows = {row.rule: row for row in AlertRuleSetting.objects.filter(cluster=cluster)}
    return {name: effective(rule, rows.get(name)) for name, rule in RULES.items()}
