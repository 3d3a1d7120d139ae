"""The audit action names of the purge area; stored as written."""

from __future__ import annotations

RECORDS_PURGE = "records.purge"  # requested, then the outcome (and a refusal)
