"""Health and metrics of the deployment: /healthz (the process answers), /readyz (the database, Redis,
a worker on each queue, beat's tick) and /metrics (Prometheus text). docs/operations-health.md.

``checks`` runs the readiness checks (django-health-check), ``metrics`` gathers the Prometheus figures
(prometheus_client, multiprocess), ``access`` decides who may read them, ``store`` keeps beat's last
tick in Redis.
"""

from __future__ import annotations

from console.health.access import allowed
from console.health.checks import Readiness, readiness
from console.health.metrics import observe_gateway, render
from console.health.store import record_tick

__all__ = ["Readiness", "allowed", "observe_gateway", "readiness", "record_tick", "render"]
