"""API: transactions (KIP-664) - the list (paged; filters: state, producer id, running longer than N
ms), one transactional id, a topic's producers, the hanging transactions as ``find-hanging`` finds
them, and an admin's abort by start offset (typed confirmation; held for review where the cluster holds
``transaction.abort``)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, PageQuery, page_json, query, reads, writes
from console.api.held import hold
from console.transactions import actions, core, held
from console.transactions import reads as txn_reads

INT32 = core.MAX_PARTITION


class ListQuery(PageQuery):
    state = serializers.CharField(required=False, default="", help_text="states, comma-separated")
    producer_id = serializers.IntegerField(required=False, min_value=0, default=None)
    duration_ms = serializers.IntegerField(
        required=False, min_value=0, default=None, help_text="only transactions running longer (v1)"
    )


class ProducersQuery(serializers.Serializer):
    topic = serializers.CharField(max_length=core.MAX_NAME)
    partition = serializers.IntegerField(required=False, min_value=0, max_value=INT32, default=None)
    broker_id = serializers.IntegerField(required=False, min_value=0, max_value=INT32, default=None)


class HangingQuery(serializers.Serializer):
    topic = serializers.CharField(required=False, max_length=core.MAX_NAME, default=None)
    partition = serializers.IntegerField(required=False, min_value=0, max_value=INT32, default=None)
    broker_id = serializers.IntegerField(required=False, min_value=0, max_value=INT32, default=None)
    max_transaction_timeout = serializers.IntegerField(
        required=False, min_value=0, max_value=core.MAX_TIMEOUT_MIN, default=core.DEFAULT_MAX_TIMEOUT_MIN,
        help_text="minutes (15 by default, as kafka-transactions.sh)",
    )  # fmt: skip


class AbortIn(serializers.Serializer):
    topic = serializers.CharField(max_length=core.MAX_NAME)
    partition = serializers.IntegerField(min_value=0, max_value=INT32)
    start_offset = serializers.IntegerField(min_value=0)
    confirm = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=300, help_text="'<topic>-<partition>', typed"
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


def _params(shape) -> list[OpenApiParameter]:
    return [OpenApiParameter(n, str, required=f.required) for n, f in shape().fields.items()]


class TxnList(ApiView):
    @reads("transactions_list", parameters=_params(ListQuery))
    def get(self, request, name: str):
        """The cluster's transactions by transactional id (ListTransactions of every broker)."""
        cluster = self.cluster(name, access.VIEW)
        q = query(ListQuery, request)
        listing = txn_reads.list_page(
            actor=request.user,
            cluster=cluster,
            page=q["page"],
            per_page=q.get("per_page") or settings.API_PAGE_SIZE,
            states=[s for s in q["state"].split(",") if s.strip()],
            producer_ids=[] if q["producer_id"] is None else [q["producer_id"]],
            duration_ms=-1 if q["duration_ms"] is None else q["duration_ms"],
        )
        return Response(page_json(listing, [t.as_json() for t in listing.rows]))


class TxnDetail(ApiView):
    @reads("transaction")
    def get(self, request, name: str, transactional_id: str):
        """One transactional id at its coordinator (404: the coordinator knows none)."""
        cluster = self.cluster(name, access.VIEW)
        d = txn_reads.describe(actor=request.user, cluster=cluster, transactional_id=transactional_id)
        if d is None:
            raise Http404("No such transactional id.")
        return Response(txn_reads.description_json(d))


class TxnProducers(ApiView):
    @reads("transaction_producers", parameters=_params(ProducersQuery))
    def get(self, request, name: str):
        """A topic's (or one partition's) active producers, as ``describe-producers`` shows them."""
        cluster = self.cluster(name, access.VIEW)
        q = query(ProducersQuery, request)
        got = txn_reads.producers(
            actor=request.user, cluster=cluster, topic=q["topic"], partition=q["partition"], broker_id=q["broker_id"]
        )  # fmt: skip
        out = {}
        for p, answer in got.items():
            if isinstance(answer, tuple):
                out[str(p)] = {"producers": [txn_reads.producer_json(s) for s in answer]}
            else:
                out[str(p)] = {"error": answer.as_json()}
        return Response({"topic": q["topic"], "partitions": out})


class TxnHanging(ApiView):
    @reads("transactions_hanging", parameters=_params(HangingQuery))
    def get(self, request, name: str):
        """``find-hanging`` for a topic (or one of its partitions) or a broker."""
        cluster = self.cluster(name, access.VIEW)
        q = query(HangingQuery, request)
        found = txn_reads.find_hanging(
            actor=request.user,
            cluster=cluster,
            topic=q["topic"],
            partition=q["partition"],
            broker_id=q["broker_id"],
            max_timeout_min=q["max_transaction_timeout"],
        )
        return Response(found.as_json())


class TxnAbort(ApiView):
    @writes("transaction_abort", (200, 207), request=AbortIn, held=True)
    def post(self, request, name: str):
        """Abort the open transaction starting at ``start_offset`` on the partition (``confirm``:
        '<topic>-<partition>'). 422: refused as asked (nothing sent); 207: Kafka refused the marker."""
        cluster = self.cluster(name, access.ADMINISTER)
        d = self.body(AbortIn)
        user = request.user
        args = (d["topic"], d["partition"], d["start_offset"])
        answer = hold(self, cluster, held.GATE, lambda: held.prepare(user, cluster, *args, d["confirm"]))
        if answer is not None:
            return answer
        result = actions.abort_transaction(
            actor=user, cluster=cluster, topic=args[0], partition=args[1], start_offset=args[2],
            confirmation=d["confirm"], source_ip=self.ip,
        )  # fmt: skip
        return Response(result.as_json(), status=200 if result.ok else 207)
