"""The audit action names of the transactions area; stored as written."""

from __future__ import annotations

TRANSACTION_ABORT = "transaction.abort"  # requested, then the outcome (and a refusal)
