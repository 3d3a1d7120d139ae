"""API: the brokers of a cluster and one broker's partitions and log dirs."""

from __future__ import annotations

from django.http import Http404
from rest_framework.response import Response

from console.api.base import ApiView, plain, reads
from console.brokers import query as broker_query
from console.brokers import reads as broker_reads


class BrokerList(ApiView):
    @reads("brokers_list")
    def get(self, request, name: str):
        listing = broker_reads.list_brokers(actor=request.user, cluster=self.cluster(name))
        return Response(plain(listing))


class BrokerDetail(ApiView):
    @reads("brokers_retrieve")
    def get(self, request, name: str, broker: str):
        cluster = self.cluster(name, needs="log_dirs")
        q = broker_query.PartitionQuery.from_params(request.query_params)
        try:
            detail = broker_reads.describe_broker(actor=request.user, cluster=cluster, broker=broker, query=q)
        except broker_reads.UnknownBroker:
            raise Http404("No such broker.") from None
        return Response(plain(detail))
