"""API: the KRaft quorum and one controller (its facts; setting its log levels)."""

from __future__ import annotations

from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, plain, reads, writes
from console.quorum import actions as quorum
from console.quorum import controllers


class Quorum(ApiView):
    @reads("quorum_retrieve")
    def get(self, request, name: str):
        return Response(plain(quorum.describe_quorum(actor=request.user, cluster=self.cluster(name))))


class Controller(ApiView):
    @reads("quorum_controller_retrieve")
    def get(self, request, name: str, node_id: int):
        cluster = self.cluster(name, needs="controllers")
        return Response(
            plain(controllers.describe_controller(actor=request.user, cluster=cluster, node_id=node_id))
        )

    @writes("quorum_controller_log_levels", (200, 207), request=s.LogLevelsIn)
    def post(self, request, name: str, node_id: int):
        """Set (or RESET) log levels on one controller; ``dry_run`` (the default) only validates."""
        cluster = self.cluster(name, access.MANAGE_CONFIGS, needs="controllers")
        d = self.body(s.LogLevelsIn)
        result = controllers.change_log_levels(
            actor=request.user,
            cluster=cluster,
            node_id=node_id,
            levels=dict(d["levels"]),
            dry_run=d["dry_run"],
            source_ip=self.ip,
        )
        return Response(plain(result), status=200 if result.ok else 207)
