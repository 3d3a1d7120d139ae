"""The audit action names of the alerts area; stored as written."""

from __future__ import annotations

ALERT_ACKNOWLEDGE = "alert.acknowledge"
SILENCE_CREATE = "alert.silence.create"
SILENCE_END = "alert.silence.end"
RULE_UPDATE = "alert.rule.update"  # a cluster's setting of one built-in rule
# The evaluator's (console/alerts/lifecycle.py), by the system actor
ALERT_FIRE = "alert.fire"
ALERT_RESOLVE = "alert.resolve"
ALERT_ESCALATE = "alert.escalate"
