"""The audit action names of the client quotas area; stored as written."""

from __future__ import annotations

QUOTA_ALTER = "quota.alter"  # requested, then the outcome (and a refusal)
QUOTA_ALTER_VALIDATE = "quota.alter.validate"  # a dry run (Kafka's validate-only)
