"""API: the cluster's change-control policy (which actions are held for review, by whom, how many
approvers) — the same area action as its admin page."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, reads, writes
from console.changes import actions as changes
from console.changes import gate
from console.models import Role


class PolicyIn(serializers.Serializer):
    enabled = serializers.BooleanField()
    kinds = serializers.ListField(child=serializers.ChoiceField(choices=list(gate.KINDS)), default=list)
    roles = serializers.ListField(
        child=serializers.ChoiceField(choices=[Role.OPERATOR.value, Role.ADMIN.value]), default=list
    )
    approvers = serializers.IntegerField(min_value=1, max_value=gate.MAX_APPROVERS, default=1)


def _policy_json(policy) -> dict:
    return {
        "enabled": policy.enabled,
        "kinds": list(policy.kinds or []),
        "roles": list(policy.roles or []),
        "approvers": policy.approvers,
        "offered": gate.KINDS,
    }


class ChangePolicy(ApiView):
    @reads("change_policy_retrieve")
    def get(self, request, name: str):
        return Response(_policy_json(changes.get_policy(self.cluster(name, access.ADMINISTER))))

    @writes("change_policy_update", request=PolicyIn)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        policy = changes.set_policy(
            actor=request.user, cluster=cluster, **self.body(PolicyIn), source_ip=self.ip
        )
        return Response(_policy_json(policy))
