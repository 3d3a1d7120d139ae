"""API: an operation (the worker's unit of work any area starts) as it runs and ends."""

from __future__ import annotations

from django.http import Http404
from rest_framework.response import Response

from console import operations
from console.api.base import ApiView, plain, reads


def operation_json(op) -> dict:
    return {
        "id": op.pk,
        "kind": op.kind,
        "state": op.state,
        "cluster": op.cluster.name if op.cluster_id else None,
        "created_at": plain(op.created_at),
        "finished_at": plain(op.finished_at),
        "progress": op.progress,
        "progress_text": op.progress_text,
        # while a step watching Kafka cannot reach it: since, attempts, retry_every_s, error, text
        "lost_contact": operations.lost_contact(op),
        "result": plain(op.result),
        "error": op.error,
        "items": [
            {"resource": i.resource, "state": i.state, "progress": i.progress, "message": i.message}
            for i in op.items.all()[:1000]
        ],
    }


class OperationDetail(ApiView):
    @reads("operations_retrieve")
    def get(self, request, op_id: int):
        op = operations.get_visible(actor=request.user, op_id=op_id)
        if op is None:
            raise Http404("No such operation.")
        return Response(operation_json(op))
