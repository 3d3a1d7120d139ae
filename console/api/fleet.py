"""API: the fleet home's rows (every cluster the caller may see, from its summary), with the page's
filter and sort parameters, validated by the page's form."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from console.api.base import ApiView, form_data, paged, plain, reads
from console.fleet import home
from console.forms.fleet import FleetFilterForm

FLEET_PARAMS = [
    OpenApiParameter("q", str, required=False, description="text in the cluster's name or description"),
    OpenApiParameter("state", str, enum=list(home.STATES), required=False),
    OpenApiParameter("sort", str, enum=list(home.SORTS), required=False),
    OpenApiParameter("desc", bool, required=False),
]


class Fleet(ApiView):
    @reads("fleet_list", parameters=FLEET_PARAMS)
    def get(self, request):
        """One row per visible cluster: reachability, versions, controller, brokers, partition counts,
        running operations, held changes, open alerts (``open_alerts``, the highest severity among them
        ``alert_severity``), and when the figures were taken (``taken_at``)."""
        form = FleetFilterForm(request.query_params or None)
        if form.is_bound:
            form_data(form)  # 400 with the form's messages
        return Response(paged(home.fleet(request.user, **form.query()), request, plain))
