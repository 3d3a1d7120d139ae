"""The deployment's probes: /healthz (open: the process answers), /readyz and /metrics (a token or an
allowed network, console.health.access). docs/operations-health.md."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from console import health

REFUSED = "send Authorization: Bearer <CONSOLE_METRICS_TOKEN>, or ask from CONSOLE_METRICS_ALLOWED_NETWORKS"


@never_cache
@require_GET
def healthz(request):
    """Liveness: this process answers requests. Asks nothing else, so a load balancer may call it often."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request):
    """Readiness: 200 when every check passes, 503 naming each check that failed and why."""
    if not health.allowed(request):
        return JsonResponse({"status": "refused", "error": REFUSED}, status=403)
    report = health.readiness()
    return JsonResponse(report.as_json(), status=200 if report.ok else 503)


@never_cache
@require_GET
def metrics(request):
    """Prometheus text: counters of every process of this host, state read from the database and Redis."""
    if not health.allowed(request):
        return HttpResponse(REFUSED + "\n", status=403, content_type="text/plain; charset=utf-8")
    body, content_type = health.render()
    return HttpResponse(body, content_type=content_type)
