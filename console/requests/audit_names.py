"""The audit action names of self-service requests; stored as written."""

from __future__ import annotations

SUBMIT = "request.submit"
APPROVE = "request.approve"
AUTO_APPROVE = "request.auto_approve"  # the cluster's auto-approve rule stood in for the approver
REJECT = "request.reject"
CANCEL = "request.cancel"
AUTO_APPROVE_RULE_UPDATE = "request.auto_approve_rule.update"
