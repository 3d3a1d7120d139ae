"""Database models: the cluster registry, role bindings, the audit chain and operations."""

from __future__ import annotations

from console.models.access import Role, RoleBinding
from console.models.alerts import Alert as Alert
from console.models.alerts import AlertRuleSetting as AlertRuleSetting
from console.models.alerts import AlertSilence as AlertSilence
from console.models.api import ApiToken as ApiToken
from console.models.api import IdempotencyRecord as IdempotencyRecord
from console.models.audit import AuditChainHead, AuditEvent, AuditImmutableError
from console.models.audit import AuditTarget as AuditTarget
from console.models.changes import ChangeApproval as ChangeApproval
from console.models.changes import ChangePolicy as ChangePolicy
from console.models.clusters import Cluster, SecurityProtocol
from console.models.drift import DriftBaseline as DriftBaseline
from console.models.fleet import ClusterSummary as ClusterSummary
from console.models.identity import IdentityLink as IdentityLink
from console.models.identity import SystemActor as SystemActor
from console.models.messages import DataGrant as DataGrant
from console.models.messages import MaskingRule as MaskingRule
from console.models.notify import NotificationChannel as NotificationChannel
from console.models.notify import NotificationDelivery as NotificationDelivery
from console.models.operations import Operation, OperationItem, OperationState
from console.models.outcomes import OwedOutcome as OwedOutcome
from console.models.reassignment import Reassignment as Reassignment
from console.models.requests import ChangeRequest as ChangeRequest
from console.models.topics import TopicPolicy as TopicPolicy
from console.models.windows import ChangeWindow as ChangeWindow

__all__ = [
    "AuditChainHead",
    "AuditEvent",
    "AuditImmutableError",
    "Cluster",
    "Operation",
    "OperationItem",
    "OperationState",
    "Role",
    "RoleBinding",
    "SecurityProtocol",
]
