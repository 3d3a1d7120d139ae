"""The toy area's page: the topics and their retention, in the console's layout."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.template import engines
from django.template.response import TemplateResponse

from console.clusters import lookup
from tests.toy_area import actions

PAGE = engines["django"].from_string(
    """{% extends "base.html" %}{% block content %}<h1>Retention</h1>
<table class="table"><thead><tr><th>Topic</th><th>retention.ms</th></tr></thead><tbody>
{% for row in rows %}<tr><td>{{ row.topic }}</td><td>{{ row.retention_ms }}</td></tr>{% endfor %}
</tbody></table>{% endblock %}"""
)


@login_required
def retention_page(request, name: str):
    cluster = lookup.cluster_for(request.user, name)
    request.console_cluster = cluster
    rows = actions.list_retention(actor=request.user, cluster=cluster)
    return TemplateResponse(request, PAGE, {"cluster": cluster, "rows": rows})
