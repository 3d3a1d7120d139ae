"""The audit action names of the reassignment area (moves, their throttles, moves started elsewhere,
leader elections); stored as written, so a name never changes once events carry it.

Until issue 34 a refused cancel of moves started elsewhere was stored as ``reassignment.cancel_external``
(its requested and settled events were already ``reassignment.external.cancel``): such old rows keep
their name; a search by exact action finds them under the old one (or under ``reassignment``)."""

from __future__ import annotations

REASSIGNMENT_START = "reassignment.start"
REASSIGNMENT_CANCEL = "reassignment.cancel"
REASSIGNMENT_PAUSE = "reassignment.pause"  # a paced move stops submitting (issue 39)
REASSIGNMENT_RESUME = "reassignment.resume"
EXTERNAL_CANCEL = "reassignment.external.cancel"
THROTTLE_RECORD = "reassignment.throttle.record"
THROTTLE_SET = "reassignment.throttle.set"
THROTTLE_REMOVE = "reassignment.throttle.remove"
THROTTLE_CHANGE = "reassignment.throttle.change"
THROTTLE_CHANGED = "reassignment.throttle.changed"
THROTTLE_CLEANUP = "throttle.cleanup"  # leftover throttles no console reassignment owns
ELECTION_START = "election.start"
