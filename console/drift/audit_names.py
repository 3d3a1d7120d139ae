"""The audit action names of drift detection; stored as written."""

from __future__ import annotations

# A difference between two looks at a cluster that none of the console's own changes explains.
EXTERNAL_CHANGE = "drift.external_change"
