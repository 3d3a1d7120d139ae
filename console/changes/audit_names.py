"""The audit action names of change control; stored as written."""

from __future__ import annotations

POLICY_UPDATE = "change.policy.update"
SUBMIT = "change.submit"
APPROVE = "change.approve"
DRIFT = "change.drift"  # sent back for a fresh review (the cluster drifted or the approvals expired)
BREAK_GLASS = "change.break_glass"
SCHEDULE = "change.schedule"  # the time a held change runs, set or moved
SCHEDULE_REFUSED = "change.schedule.refused"  # refused at its time (a change window forbade it)
SCHEDULE_CANCEL = "change.schedule.cancel"  # taken off its schedule (an approved one is cancelled)
