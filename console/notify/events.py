"""The events a channel can subscribe to (pure: names, labels, and which ones an operation's end is)."""

from __future__ import annotations

REQUEST_SUBMITTED = "request.submitted"
REQUEST_APPROVED = "request.approved"
REQUEST_REJECTED = "request.rejected"
REASSIGNMENT_FINISHED = "reassignment.finished"
REASSIGNMENT_FAILED = "reassignment.failed"
REASSIGNMENT_CANCELLED = "reassignment.cancelled"
THROTTLES_LEFTOVER = "throttles.leftover"
OPERATION_ERRORED = "operation.errored"
AUDIT_CHAIN_BROKEN = "audit.chain_broken"
CHANGE_HELD = "change.held"
BREAK_GLASS = "change.break_glass"
CHANGE_NOT_RUN = "change.not_run"  # a scheduled change refused at its time (a freeze began meanwhile)
# Health alerts (console/alerts/lifecycle.py). Their details: alert (id), rule, rule_title, subject,
# severity, state, value, threshold, unit, fired_at, and resolved_at / escalated_at when so.
ALERT_FIRING = "alert.firing"
ALERT_RESOLVED = "alert.resolved"
ALERT_ESCALATED = "alert.escalated"
DRIFT_EXTERNAL_CHANGE = "drift.external_change"  # a look found changes made outside the console
# Not subscribable: the "Send test" button's event, sent to the one channel tested.
TEST = "notify.test"

LABELS: dict[str, str] = {
    REQUEST_SUBMITTED: "Request submitted",
    REQUEST_APPROVED: "Request approved",
    REQUEST_REJECTED: "Request rejected",
    REASSIGNMENT_FINISHED: "Reassignment finished",
    REASSIGNMENT_FAILED: "Reassignment failed",
    REASSIGNMENT_CANCELLED: "Reassignment cancelled",
    THROTTLES_LEFTOVER: "Leftover throttles found",
    OPERATION_ERRORED: "Operation errored",
    AUDIT_CHAIN_BROKEN: "Audit chain broken",
    CHANGE_HELD: "Change held for approval",
    BREAK_GLASS: "Break glass used",
    CHANGE_NOT_RUN: "Scheduled change not run (change window)",
    ALERT_FIRING: "Alert firing",
    ALERT_RESOLVED: "Alert resolved",
    ALERT_ESCALATED: "Alert escalated (unacknowledged)",
    DRIFT_EXTERNAL_CHANGE: "Changes made outside the console",
}
SUBSCRIBABLE = tuple(LABELS)

_REASSIGNMENT_KIND = "reassignment.execute"
_REASSIGNMENT_ENDS = {
    "succeeded": REASSIGNMENT_FINISHED,
    "failed": REASSIGNMENT_FAILED,
    "errored": REASSIGNMENT_FAILED,
    "cancelled": REASSIGNMENT_CANCELLED,
}


def label(event: str) -> str:
    return LABELS.get(event, "Test notification" if event == TEST else event)


def for_operation_end(kind: str, state: str) -> list[str]:
    """The events an operation's end is: a reassignment's outcome, and "errored" for every kind."""
    found = []
    if kind == _REASSIGNMENT_KIND and state in _REASSIGNMENT_ENDS:
        found.append(_REASSIGNMENT_ENDS[state])
    if state == "errored":
        found.append(OPERATION_ERRORED)
    return found
