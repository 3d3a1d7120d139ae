"""One evaluation round: every cluster's rules measured, compared with their thresholds, and the
alerts brought in line (``evaluate_cluster``; ``start_round`` for beat).

Beat's ``tasks.alerts.evaluate`` runs on the poll worker, whose one slot also takes the 1 s operation
tick: it only hands each cluster to this process's ``Evaluator`` (``ALERTS_THREADS`` threads, apart
from the operations' pool) and returns at once. A cluster still being evaluated from an earlier round
is not handed again, and each cluster's reads are bounded by ``ALERTS_CLUSTER_TIMEOUT_S``: a cluster
that does not answer in time is alerted as unreachable (rule ``cluster_unreachable``) and never
delays the others. Its reads that need no Kafka (the client certificate, the capacity forecast, the
audit chain) are still measured; its Kafka rules keep their open alerts until Kafka answers again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection

from console import access
from console.alerts import core, lifecycle, measure, rules
from console.alerts.core import Measure
from console.clusters import actions as clusters
from console.crypto import SecretUnreadable
from console.kafka import KafkaGateway, heap
from console.models import Cluster

log = logging.getLogger(__name__)


def evaluate_cluster(
    cluster: Cluster,
    *,
    timeout_s: float | None = None,
    now: datetime | None = None,
    reader_of: Callable[[Cluster], tuple[Any, ThreadPoolExecutor | None]] | None = None,
    actor=None,
) -> lifecycle.Changes:
    """Measure every rule on ``cluster`` (Kafka's within ``timeout_s``, ALERTS_CLUSTER_TIMEOUT_S;
    through ``reader_of(cluster)``: the registry's gateway and threads of its own, or the
    evaluator's gateway and threads) and apply what was found to its alerts (as ``actor``, the
    system actor: the round's, or read here)."""
    effective = rules.settings_for(cluster)
    actor = actor or access.system_actor()
    bound = settings.ALERTS_CLUSTER_TIMEOUT_S if timeout_s is None else timeout_s
    measures = _bounded(cluster, reader_of or _registry_reader, bound)
    heap.give_back()  # the round's whole-cluster Metadata, freed: the poll worker idles at its size
    measures |= measure.without_kafka(cluster, time.time())
    evaluated, found = core.findings(measures, effective)
    return lifecycle.apply(
        cluster, evaluated=evaluated, found=found, settings=effective, now=now, actor=actor
    )


def _registry_reader(cluster: Cluster) -> tuple[Any, None]:
    return clusters.gateway_for(cluster), None


def _bounded(cluster: Cluster, reader_of, timeout_s: float) -> dict:
    """The Kafka rules' measures, read on a thread of their own (it asks Kafka only), or the
    cluster's unreachable measure when Kafka did not answer within ``timeout_s``."""
    box: dict = {}

    def run() -> None:
        try:
            box["measures"] = _measure(cluster, reader_of)
        except Exception as exc:  # noqa: BLE001 - a bug in one rule's read never stops the round
            log.exception("alerts: evaluating %s failed", cluster.name)
            box["error"] = f"the evaluation failed: {type(exc).__name__}"

    reader = threading.Thread(target=run, name=f"alerts-{cluster.pk}", daemon=True)
    reader.start()
    reader.join(timeout_s)
    if "measures" in box:
        return box["measures"]
    return unreachable(cluster, box.get("error") or f"no answer within {timeout_s:g} s")


def _measure(cluster: Cluster, reader_of) -> dict:
    try:
        gw, pool = reader_of(cluster)
        found = measure.measure(cluster, gw, pool=pool)
    except (measure.Unreachable, SecretUnreadable) as exc:
        return unreachable(cluster, str(exc))
    found["cluster_unreachable"] = core.one(Measure(0.0, "the cluster answers"))
    return found


def unreachable(cluster: Cluster, why: str) -> dict:
    """An unreachable cluster's measure (its other Kafka rules go unmeasured: their alerts stay)."""
    return {"cluster_unreachable": core.one(Measure(1.0, f"{cluster.name} cannot be reached: {why}"))}


class Evaluator:
    """This process's evaluation threads (one per process, made on first use) and its readers.

    It keeps, per cluster it evaluates, one gateway open between rounds, apart from the registry's
    ``KAFKA_CLIENTS_MAX`` least-recently-used cap (under that cap, 8, a round over more clusters
    closed and reopened every client each minute: connect, ApiVersions, SASL, Metadata again), and
    the threads its reads run on (``measure.READS``, started once instead of every round; a
    cluster that hangs holds only its own). Both are bounded by the registered clusters (a removed
    cluster's are closed at the next round, a changed connection's when it is next evaluated); a
    cluster costs its client's I/O thread and buffers and its idle read threads (see the bench's
    RSS line)."""

    def __init__(self, threads: int) -> None:
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="alerts-round")
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)  # told when a cluster is let go
        self._held: set[int] = set()
        self._readers: dict[int, tuple[KafkaGateway, ThreadPoolExecutor]] = {}

    def reader(self, cluster: Cluster) -> tuple[KafkaGateway, ThreadPoolExecutor]:
        """The evaluator's gateway of ``cluster`` (a new one when its connection changed) and the
        threads its reads run on."""
        conn = clusters.connection_for(cluster)
        with self._lock:
            old = self._readers.get(cluster.pk)
            if old is not None and old[0].conn == conn:
                return old
            self._readers[cluster.pk] = new = (KafkaGateway(conn), measure.reads_pool())
        if old is not None:
            _close(old)
        return new

    def keep_only(self, cluster_ids: set[int]) -> None:
        """Close the readers of clusters no longer registered."""
        with self._lock:
            gone = [self._readers.pop(pk) for pk in list(self._readers) if pk not in cluster_ids]
        for reader in gone:
            _close(reader)

    def submit(self, cluster_id: int, cluster: Cluster | None = None, actor=None) -> bool:
        """Evaluate the cluster on the pool (``cluster``: its row as the round read it, else read
        there; ``actor``: the round's system actor); False while an earlier round still holds it."""
        with self._lock:
            if cluster_id in self._held:
                return False
            self._held.add(cluster_id)
        self._pool.submit(self._run, cluster_id, cluster, actor)
        return True

    def idle(self, timeout_s: float) -> bool:
        """Wait until no cluster is held (True) or ``timeout_s`` passed (False)."""
        with self._done:
            return self._done.wait_for(lambda: not self._held, timeout_s)

    def _run(self, cluster_id: int, cluster: Cluster | None = None, actor=None) -> None:
        try:
            if cluster is None:
                cluster = Cluster.objects.filter(pk=cluster_id).first()
            if cluster is not None:
                evaluate_cluster(cluster, reader_of=self.reader, actor=actor)
        except Exception:  # noqa: BLE001 - the pool's future is never read: say it here
            log.exception("alerts: the round of cluster %s failed", cluster_id)
        finally:
            connection.close()
            with self._done:
                self._held.discard(cluster_id)
                self._done.notify_all()


def _close(reader: tuple[KafkaGateway, ThreadPoolExecutor]) -> None:
    reader[1].shutdown(wait=False)  # a read still in flight ends on its own (bounded by its timeout)
    reader[0].close()


_EVALUATOR: Evaluator | None = None
_CREATE = threading.Lock()


def evaluator() -> Evaluator:
    global _EVALUATOR
    with _CREATE:
        if _EVALUATOR is None:
            _EVALUATOR = Evaluator(settings.ALERTS_THREADS)
        return _EVALUATOR


def start_round() -> list[int]:
    """Beat's round: hand every cluster to the evaluator; the ids handed (not those still held).
    The clusters' rows and the system actor are read once here, for every cluster of the round."""
    pool = evaluator()
    rows = list(Cluster.objects.order_by("pk"))
    pool.keep_only({c.pk for c in rows})
    actor = access.system_actor() if rows else None
    return [c.pk for c in rows if pool.submit(c.pk, c, actor)]


def reset_memory() -> None:
    """Forget what this process kept between rounds (tests; a cluster's settings changed)."""
    measure.MEMORY.clear()
