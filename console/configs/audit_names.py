"""The audit action names of the configs area; stored as written."""

from __future__ import annotations

CONFIG_ALTER = "config.alter"  # requested, then the outcome (and a refusal)
CONFIG_ALTER_VALIDATE = "config.alter.validate"  # a dry run (Kafka's validate-only)
