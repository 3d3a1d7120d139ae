"""Shared by the quorum/controller tests: the sandbox's controllers registered as a KIP-919 cluster."""

from __future__ import annotations

from console.models import Cluster, Role, RoleBinding


def register_controllers(sandbox, personas, name: str = "sandbox-ctl") -> Cluster:
    """The sandbox's controllers as their own cluster (bootstrap controllers), the personas bound on it."""
    cluster = Cluster.objects.create(
        name=name, bootstrap_controllers=sandbox.bootstrap_controllers, request_timeout_s=5
    )
    for persona, role in (("operator", Role.OPERATOR), ("auditor", Role.AUDITOR), ("viewer", Role.VIEWER)):
        RoleBinding.objects.create(cluster=cluster, user=personas[persona], role=role)
    return cluster
