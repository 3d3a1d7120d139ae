"""API: leader elections (the preferred-leader imbalance; preferred or unclean elections)."""

from __future__ import annotations

from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api.base import ApiView, plain, reads, writes
from console.api.held import hold
from console.api.operations import operation_json
from console.reassignment import elections
from console.reassignment import held as reassignment_held


class Elections(ApiView):
    @reads("elections_imbalance")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        return Response(
            {
                **plain(elections.leader_imbalance(cluster)),
                "unclean_confirmation": elections.unclean_confirmation(cluster),
            }
        )

    @writes("elections_start", (200, 202), request=s.ElectionIn, held=True)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        d = self.body(s.ElectionIn)
        chosen = elections.partitions_to_elect(
            request.user,
            cluster,
            d["election_type"],
            [(p["topic"], p["partition"]) for p in d["partitions"]] if "partitions" in d else None,
        )
        held = hold(
            self, cluster, "election",
            lambda: reassignment_held.prepare_election(request.user, cluster, d["election_type"], chosen, d["confirmation"]),
        )  # fmt: skip
        if held is not None:
            return held
        op = elections.start_election(
            actor=request.user,
            cluster=cluster,
            election_type=d["election_type"],
            partitions=chosen,
            confirmation=d["confirmation"],
            source_ip=self.ip,
        )
        return Response(operation_json(op), status=202)
