"""The audit action names of the message browser and data access; stored as written."""

from __future__ import annotations

MESSAGES_READ = "messages.read"  # every read shown (a follow poll that shows nothing is no read)
MESSAGES_PRODUCE = "messages.produce"
DATA_GRANT = "messages.grant"
DATA_REVOKE = "messages.revoke"
MASK_RULE_ADD = "messages.rule.add"
MASK_RULE_REMOVE = "messages.rule.remove"
