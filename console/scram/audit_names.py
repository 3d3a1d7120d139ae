"""The audit action names of the SCRAM users area; stored as written. No event of this area ever
carries a password: only the user, the mechanism, the iterations and whether it was a creation or
a rotation."""

from __future__ import annotations

SCRAM_SET = "scram.set"  # a credential created or rotated: requested, then the outcome (and a refusal)
SCRAM_DELETE = "scram.delete"  # a credential deleted: requested, then the outcome (and a refusal)
