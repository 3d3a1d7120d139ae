"""The audit action names of the log-dir area; stored as written. The move itself is the Operation
kind ``logdir.move``: its events are ``logdir.move.requested`` and ``logdir.move.<end state>``
(``console/operations/audit_names.of``)."""

from __future__ import annotations

KIND = "logdir.move"  # the Operation kind (requested / succeeded / ...) and a refusal (outcome "refused")
REQUESTED = "logdir.move.requested"
THROTTLE_SET = "logdir.throttle.set"  # the intra-broker throttle set (previous value recorded)
THROTTLE_RESTORE = "logdir.throttle.restore"  # ... and taken back to exactly that value
