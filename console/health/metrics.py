"""/metrics: Prometheus text for the whole deployment, from several processes.

Two kinds of figures, gathered differently:

* **Events counted where they happen** - requests by view (django-prometheus' middleware, in each web
  process) and Kafka calls by cluster, gateway method and error (this module's gateway observer, in
  every process that calls Kafka: web workers, Celery workers, the CLI). gunicorn runs several web
  processes and the Celery workers are others, so prometheus_client runs in multiprocess mode: each
  process writes its counters to files in PROMETHEUS_MULTIPROC_DIR and a scrape adds up every file there
  (``MultiProcessCollector``). The processes of one host share that directory.
* **State read at scrape time** from the database and Redis, which every process shares: operations by
  kind and state, poll lag, queue depth, notification deliveries by state, the audit chain's status,
  beat's last tick. Any web process answers these the same, on any host.

A source that cannot be read is left out and ``console_metrics_source_up{source=...}`` says 0; the
scrape itself still answers.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from datetime import datetime

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    values,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from console import operations
from console.health import store
from console.kafka import CALL_OBSERVERS, ClusterConnection, parse_addresses

log = logging.getLogger(__name__)

if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    # Each process's files are named by host and pid, so containers sharing the directory (where pids
    # repeat) never write one file. Set before any metric exists (console/apps.py imports this first).
    values.ValueClass = values.MultiProcessValue(lambda: f"{socket.gethostname()}-{os.getpid()}")

KAFKA_CALLS = Counter(
    "console_kafka_calls",
    "Calls to Kafka through the console's gateway, by cluster and gateway method",
    ["cluster", "api"],
)
KAFKA_ERRORS = Counter(
    "console_kafka_call_errors",
    "Gateway calls that ended in an error, by cluster, gateway method and Kafka error name",
    ["cluster", "api", "error"],
)
KAFKA_SECONDS = Histogram(
    "console_kafka_call_duration_seconds",
    "How long gateway calls took, by cluster and gateway method",
    ["cluster", "api"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


def _observe(conn: ClusterConnection, api: str, seconds: float, error: str) -> None:
    cluster = conn.address_text  # named at scrape time (cluster_names): the gateway knows no names
    KAFKA_CALLS.labels(cluster, api).inc()
    KAFKA_SECONDS.labels(cluster, api).observe(seconds)
    if error:
        KAFKA_ERRORS.labels(cluster, api, error).inc()


def observe_gateway() -> None:
    """Count every gateway call in this process (called once at start-up, console/apps.py)."""
    if _observe not in CALL_OBSERVERS:
        CALL_OBSERVERS.append(_observe)


def cluster_names() -> dict[str, str]:
    """The gateway's address text of each registered cluster -> the cluster's name."""
    from console.models import Cluster
    from console.models.clusters import canonical_endpoints

    names = {}
    for name, servers, controllers in Cluster.objects.values_list(
        "name", "bootstrap_servers", "bootstrap_controllers"
    ):
        try:
            addresses = parse_addresses(canonical_endpoints(servers or controllers))
        except ValueError:
            continue
        names[",".join(f"{host}:{port}" for host, port in addresses)] = name
    return names


class _Counted(Collector):
    """The counters of every process (or of this one outside multiprocess mode), clusters by name."""

    def collect(self) -> Iterator[Metric]:
        directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        families = MultiProcessCollector(None, directory).collect() if directory else REGISTRY.collect()
        try:
            names = cluster_names()
        except Exception:  # noqa: BLE001 - addresses stay as they are
            names = {}
        for family in families:
            if family.name.startswith("console_kafka_"):
                family.samples = _renamed(family.samples, names)
            yield family


def _renamed(samples: list, names: dict[str, str]) -> list:
    """Samples with the cluster label as the cluster's name, merged where two addresses name one cluster."""
    merged: dict[tuple, object] = {}
    for sample in samples:
        labels = dict(sample.labels)
        labels["cluster"] = names.get(labels.get("cluster", ""), labels.get("cluster", ""))
        key = (sample.name, tuple(sorted(labels.items())))
        found = merged.get(key)
        merged[key] = (
            sample._replace(labels=labels)
            if found is None
            else found._replace(value=found.value + sample.value)  # type: ignore[attr-defined]
        )
    return list(merged.values())


def _operations() -> Iterator[Metric]:
    states = GaugeMetricFamily("console_operations", "Operations by kind and state", labels=["kind", "state"])
    for (kind, state), n in sorted(operations.counts_by_kind_and_state().items()):
        states.add_metric([kind, state], n)
    yield states
    due, lag = operations.poll_lag()
    yield GaugeMetricFamily("console_operations_due", "Waiting operations due and not yet taken", value=due)
    yield GaugeMetricFamily(
        "console_operations_poll_lag_seconds",
        "How late the oldest due operation is (0 when none is due): the tick runs them every second",
        value=lag,
    )


def _redis() -> Iterator[Metric]:
    from django.conf import settings

    depth = GaugeMetricFamily(
        "console_celery_queue_length", "Messages waiting in each Celery queue", labels=["queue"]
    )
    for queue, n in store.queue_lengths(settings.WORKER_QUEUES).items():
        depth.add_metric([queue], n)
    yield depth
    tick = store.last_tick()
    if tick is not None:
        yield GaugeMetricFamily(
            "console_beat_last_tick_timestamp_seconds",
            "When beat's operation tick last ran (Unix time)",
            value=tick,
        )


def _notifications() -> Iterator[Metric]:
    from django.db.models import Count

    from console.models import NotificationDelivery

    found = dict(NotificationDelivery.objects.order_by().values_list("state").annotate(n=Count("pk")))
    family = GaugeMetricFamily(
        "console_notify_deliveries",
        "Notification deliveries by outcome (pending, sending, delivered, failed): rows kept",
        labels=["outcome"],
    )
    for state in ("pending", "sending", "delivered", "failed"):
        family.add_metric([state], found.get(state, 0))
    yield family


def _audit() -> Iterator[Metric]:
    from console.integrity import chain

    head_id, signed = chain.last_verified()
    verified = signed.id if signed else 0
    yield GaugeMetricFamily("console_audit_chain_head_event", "The newest audit event's id", value=head_id)
    yield GaugeMetricFamily(
        "console_audit_chain_verified_event",
        "The last event of the chain's last successful check (the signed verified-up-to marker; 0: none)",
        value=verified,
    )
    yield GaugeMetricFamily(
        "console_audit_chain_unverified_events",
        "Events after the last successful check",
        value=head_id - verified,
    )
    if signed is not None:
        yield GaugeMetricFamily(
            "console_audit_chain_verified_timestamp_seconds",
            "When the chain last checked out (Unix time); checked hourly with the anchor",
            value=datetime.fromisoformat(signed.at).timestamp(),
        )
    last = chain.latest_verify()
    if last is not None and last.finished_at is not None:
        yield GaugeMetricFamily(
            "console_audit_chain_full_verify_ok",
            "The last full re-verification (audit.verify) found the chain intact (1) or not (0)",
            value=1 if (last.result or {}).get("ok") else 0,
        )


SOURCES: dict[str, Callable[[], Iterator[Metric]]] = {
    "operations": _operations,
    "redis": _redis,
    "notifications": _notifications,
    "audit": _audit,
}


class _State(Collector):
    """The figures read at scrape time; one unreadable source does not spoil the others."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "console_metrics_source_up", "Whether a source could be read for this scrape", labels=["source"]
        )
        for source, read in SOURCES.items():
            try:
                families = list(read())
            except Exception as exc:  # noqa: BLE001 - reported as the source being down
                log.warning("metrics: %s could not be read: %s", source, type(exc).__name__)
                up.add_metric([source], 0)
                continue
            up.add_metric([source], 1)
            yield from families
        yield up
        yield GaugeMetricFamily(
            "console_metrics_scrape_timestamp_seconds", "When this scrape was made", value=time.time()
        )


def render() -> tuple[bytes, str]:
    """The Prometheus text of the whole deployment, and its content type."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Counted())
    registry.register(_State())
    return generate_latest(registry), CONTENT_TYPE_LATEST
