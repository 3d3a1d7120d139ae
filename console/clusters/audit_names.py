"""The audit action names of the clusters area (registry and role bindings); stored as written."""

from __future__ import annotations

CLUSTER_REGISTER = "cluster.register"
CLUSTER_UPDATE = "cluster.update"
CLUSTER_REMOVE = "cluster.remove"
CLUSTER_TEST = "cluster.test"
ACCESS_GRANT = "access.grant"
ACCESS_REVOKE = "access.revoke"
