"""What each rule measures on one cluster (the imperative shell): its reads, turned into measures.

Every read is one the console already makes, taken as cheaply as it is correct:
- partitions: one Metadata (``partition_health``: the C decoder's per-topic counts, a topic's
  partitions unpacked only where its counts cannot answer); each topic's ``min.insync.replicas``
  (and its replica throttles) are read with one DescribeConfigs of the topics at most every
  ``ALERTS_CONFIGS_MAX_AGE_S`` (a topic new since then is asked at once), kept in this process:
  describing every topic each minute would cost more than the rest of the round together;
- brokers: ``broker_status`` (one DescribeCluster, each broker pinged meanwhile) and the brokers'
  certificate (the TLS probe, TLS only) - what the overview page reads, without its second
  DescribeCluster and its DescribeQuorum (the round asks the quorum once, below);
- the quorum voters' lag and the active controller's changes: DescribeQuorum;
- consumer groups: every group's committed offsets (one OffsetFetch per coordinator), the log ends of
  the partitions they consume (ListOffsets per leader), and for the lagging ones the record at the
  committed offset (``record_times``: one bounded Fetch per leader, at most ``TIME_LAG_READS`` a
  group, the most behind first);
- disk: the capacity forecast the pipeline publishes (``telemetry.capacity``), re-read at most every
  ``ALERTS_CONFIGS_MAX_AGE_S``;
- throttles: the brokers' rate overrides (one DescribeConfigs of the brokers) and the topics' replica
  throttles (with the min ISR above) where nothing is being reassigned (ListPartitionReassignments);
- the audit chain: the latest full verification and the anchor check (database and a file).

A read that fails leaves its rules unmeasured (None): their open alerts stay as they are. When the
cluster's Metadata cannot be read at all, the cluster is unreachable (``Unreachable``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings

from console.alerts import core
from console.alerts.core import Measure
from console.audit import anchor
from console.clusters import actions as clusters
from console.clusters.credentials import certificate_facts
from console.integrity import chain
from console.kafka import ConfigResource, KafkaOperationError, TopicPartition
from console.models import Cluster, OperationState
from console.reassignment.throttles import RATE_CONFIGS, REPLICA_CONFIGS, current_values
from console.telemetry import capacity, summary

log = logging.getLogger(__name__)

TIME_LAG_READS = 32  # a group's lagging partitions whose position record is read, the most behind first
TOPIC_KEYS = (summary.MIN_ISR, *REPLICA_CONFIGS)
TOPIC_OWN = ("DYNAMIC_TOPIC_CONFIG",)
READS = 6  # a cluster's reads in flight at once (the most ``measure`` starts before waiting)
CHAIN_CHECK_S = 30.0  # the audit chain's check is console-wide: one serves a round's clusters


def reads_pool() -> ThreadPoolExecutor:
    """Threads for one cluster's reads in flight together."""
    return ThreadPoolExecutor(READS, thread_name_prefix="alerts-reads")


class Unreachable(Exception):
    """The cluster's metadata could not be read: the round measures the cluster as unreachable."""


class _Memory:
    """What this process keeps between rounds, per cluster: topic configs and the forecast (with
    when they were read), and the quorum's leader epochs seen (controller changes)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.configs: dict[int, tuple[float, TopicConfigs | None, tuple[str, ...]]] = {}
        self.forecast: dict[int, tuple[float, list]] = {}
        self.epochs: dict[int, tuple[int, deque]] = {}
        self.chain: tuple[float, dict[str, Measure]] | None = None

    def clear(self) -> None:
        with self.lock:
            self.configs.clear()
            self.forecast.clear()
            self.epochs.clear()
            self.chain = None


MEMORY = _Memory()


def measure(
    cluster: Cluster, gw, *, now: float | None = None, pool: ThreadPoolExecutor | None = None
) -> dict[str, dict[str, Measure] | None]:
    """The measures of the rules that ask Kafka (``core.Measures``); raises ``Unreachable``. Only
    Kafka is asked, so this may run on a thread of its own: ``without_kafka`` measures the rest on
    the caller's. The reads run at once on ``pool`` (``READS`` threads at least; the evaluator keeps
    one per cluster, so a round starts no thread), else on threads of their own."""
    now = time.time() if now is None else now
    if cluster.controller_mode:
        return _controllers(cluster, gw, now, pool)
    out: dict[str, dict[str, Measure] | None] = {}
    with contextlib.nullcontext(pool) if pool is not None else reads_pool() as pool:
        # every read that needs no other's answer is in flight at once; the rest as soon as it can
        reading = pool.submit(gw.partition_health)
        brokers = pool.submit(_quiet, gw.broker_status)
        server = pool.submit(clusters.server_certificate_of, cluster)  # TLS only
        quorum = pool.submit(_quiet, gw.describe_quorum)
        committed = pool.submit(_quiet, _committed, gw)
        moving = pool.submit(_quiet, _moving, gw)
        try:
            health = reading.result()
        except KafkaOperationError as exc:
            raise Unreachable(exc.operator_text) from exc
        configs = pool.submit(_topic_configs, cluster, gw, health.topics, now)
        rates = pool.submit(_quiet, _broker_rates, gw, health.brokers)
        found = (
            _quiet(_groups, gw, health, committed.result(), now) if committed.result() is not None else None
        )
        out["group_lag"], out["group_time_lag"] = found if found is not None else (None, None)
        out["broker_down"] = _brokers(brokers.result())
        out["server_cert_expiry"] = _server_certificate(cluster, server.result(), now)
        out |= _quorum(cluster, quorum.result(), now)
        configs = configs.result()
        out |= _partitions(health, configs)
        out["throttles_left"] = _throttles(configs, moving.result(), rates.result())
    return out


def _controllers(
    cluster: Cluster, gw, now: float, pool: ThreadPoolExecutor | None
) -> dict[str, dict[str, Measure] | None]:
    """A cluster registered with its controllers (KIP-919): they answer DescribeCluster with
    themselves (not the brokers' registrations) and DescribeQuorum, not Metadata, groups or topic
    configs. So only the quorum's rules are measured; the broker, partition, group and throttle rules
    are not (never "resolved" by a connection that cannot see them: the same cluster registered with
    its brokers measures them). Unreachable only when the controllers answer neither."""
    with contextlib.nullcontext(pool) if pool is not None else reads_pool() as pool:
        brokers = pool.submit(_quiet, gw.broker_status)
        quorum = pool.submit(_quiet, gw.describe_quorum)
        states, described = brokers.result(), quorum.result()
    if not states and described is None:
        raise Unreachable(
            f"the controllers of {cluster.name} answered neither DescribeCluster nor DescribeQuorum"
        )
    out: dict[str, dict[str, Measure] | None] = dict.fromkeys(CONTROLLERS_CANNOT_ANSWER)
    out["server_cert_expiry"] = {} if not cluster.security_protocol.endswith("SSL") else None
    out |= _quorum(cluster, described, now)
    return out


#: The rules whose reads only brokers answer (their registrations, Metadata, groups, topic configs).
CONTROLLERS_CANNOT_ANSWER = (
    "broker_down",
    "under_replicated",
    "offline_partitions",
    "under_min_isr",
    "group_lag",
    "group_time_lag",
    "throttles_left",
)


def without_kafka(cluster: Cluster, now: float) -> dict[str, dict[str, Measure] | None]:
    """The rules measured without asking Kafka: the stored client certificate, the capacity
    forecast and the audit chain (measured for an unreachable cluster too)."""
    out: dict[str, dict[str, Measure] | None] = {"client_cert_expiry": {}}
    if cluster.security_protocol.endswith("SSL"):
        client = certificate_facts(cluster.client_certificate)
        if client:
            days = core.days_left(client[0].not_after.timestamp(), now)
            out["client_cert_expiry"] = core.certificate_measure("client", client[0].subject, days)
    out["disk_days_to_full"] = _disk(cluster, now)
    out["audit_chain_broken"] = audit_chain()
    return out


def _quiet(read, *args):
    """A read's answer, or None when Kafka refused it (its rules go unmeasured this round)."""
    try:
        return read(*args)
    except KafkaOperationError as exc:
        log.info("alert read %s failed: %s", getattr(read, "__name__", read), exc.operator_text)
        return None


@dataclass(frozen=True)
class TopicConfigs:
    """What the rules need of the topics' configs: each one's min ISR, and those with replica
    throttles of their own."""

    min_isr: dict[str, int]
    throttled: frozenset[str]

    def without(self, gone: set[str]) -> TopicConfigs:
        return TopicConfigs({t: v for t, v in self.min_isr.items() if t not in gone}, self.throttled - gone)


def _topic_configs(cluster: Cluster, gw, topics, now: float) -> TopicConfigs | None:
    """The topics' configs, kept in this process: asked again after ALERTS_CONFIGS_MAX_AGE_S, a topic
    new since then asked at once, a deleted one dropped."""
    with MEMORY.lock:
        read_at, known, names = MEMORY.configs.get(cluster.pk, (0.0, None, ()))
    fresh = known is not None and now - read_at < settings.ALERTS_CONFIGS_MAX_AGE_S
    if fresh and names == topics:  # the same topics as last round: nothing to ask
        return known
    wanted = sorted(set(topics) - set(names)) if fresh else list(topics)
    try:
        got = _read_topic_configs(gw, wanted)
    except KafkaOperationError as exc:
        log.info("alerts: topic configs of %s not read: %s", cluster.name, exc.operator_text)
        return None
    if fresh:
        kept = known.without(set(names) - set(topics))
        got = TopicConfigs(kept.min_isr | got.min_isr, kept.throttled | got.throttled)
    with MEMORY.lock:
        MEMORY.configs[cluster.pk] = (read_at if fresh else now, got, topics)
    return got


def _read_topic_configs(gw, topics: list[str]) -> TopicConfigs:
    min_isr: dict[str, int] = {}
    throttled = set()
    if topics:
        answers = gw.describe_configs(
            [ConfigResource("TOPIC", t) for t in topics], include_documentation=False, keys=list(TOPIC_KEYS)
        )
        for res, entries in answers.items():
            if isinstance(entries, KafkaOperationError):
                continue
            entry = entries.get(summary.MIN_ISR)
            if entry is not None and str(entry.value or "").isdigit():
                min_isr[res.name] = int(entry.value)
            for key in REPLICA_CONFIGS:
                entry = entries.get(key)
                if entry is not None and entry.value and entry.source in TOPIC_OWN:
                    throttled.add(res.name)
    return TopicConfigs(min_isr, frozenset(throttled))


def _partitions(health, configs: TopicConfigs | None) -> dict[str, dict[str, Measure] | None]:
    """The partition counts; under min ISR with each topic's minimum (as the snapshot's summary
    counts it), unmeasured while the minimums are unknown."""
    found = core.partition_measures(health.under_replicated, health.offline, 0)
    if configs is None:
        found["under_min_isr"] = None
        return found
    under = health.under_min_isr(configs.min_isr, summary.DEFAULT_MIN_ISR)
    found["under_min_isr"] = core.partition_measures(0, 0, under)["under_min_isr"]
    return found


def _brokers(states) -> dict[str, Measure] | None:
    """Each registered (or earlier seen) broker's state; unmeasured when none could be read."""
    if not states:
        return None
    return core.broker_measures((s.broker.id, s.state, s.detail) for s in states)


def _server_certificate(cluster: Cluster, server, now: float) -> dict[str, Measure] | None:
    """The brokers' certificate's days left: none without TLS, unmeasured when the probe read none."""
    if not cluster.security_protocol.endswith("SSL"):
        return {}
    if server is None:
        return None
    return core.certificate_measure(
        "brokers'", server.subject, core.days_left(server.not_after.timestamp(), now)
    )


def _quorum(cluster: Cluster, quorum, now: float) -> dict[str, dict[str, Measure] | None]:
    if quorum is None:
        return {"quorum_lag": None, "controller_change": None}
    window = settings.ALERTS_CONTROLLER_WINDOW_S
    with MEMORY.lock:
        last, changes = MEMORY.epochs.get(cluster.pk, (quorum.leader_epoch, deque()))
        if quorum.leader_epoch > last:
            changes.append(now)
        while changes and changes[0] < now - window:
            changes.popleft()
        MEMORY.epochs[cluster.pk] = (max(last, quorum.leader_epoch), changes)
        count = len(changes)
    return {
        "quorum_lag": core.quorum_measures((v.id, v.lag) for v in quorum.voters),
        "controller_change": core.controller_measure(count, quorum.leader_id, window),
    }


def _committed(gw) -> dict[str, dict[tuple[str, int], int]]:
    """Every consumer group's committed offsets."""
    return {
        group: {(tp.topic, tp.partition): o for tp, o in offsets.items()}
        for group, offsets in gw.list_consumer_group_offsets().items()
        if not isinstance(offsets, KafkaOperationError)
    }


def _groups(gw, health, committed, now: float) -> tuple[dict[str, Measure], dict[str, Measure]]:
    """(lag in messages, lag in time) of every consumer group."""
    leaders = health.leaders(tp for offsets in committed.values() for tp in offsets)
    ends = {}
    if leaders:
        for tp, answer in gw.list_offsets(list(leaders), "latest", leaders=leaders).items():
            if not isinstance(answer, KafkaOperationError):
                ends[(tp.topic, tp.partition)] = answer.offset
    lags = core.group_lags(committed, ends)
    times = _position_times(gw, committed, lags, leaders)
    return core.group_measures(lags), core.time_lag_measures(lags, times, committed, int(now * 1000))


def _position_times(gw, committed, lags, leaders) -> dict[tuple[str, str, int], int | None]:
    """The timestamp of the record at each lagging group's committed offset, by (group, topic,
    partition); groups at the same position share one read."""
    wanted: dict[tuple[str, int, int], list[str]] = {}
    for group, per in lags.items():
        behind = sorted((tp for tp, lag in per.items() if lag > 0), key=lambda tp: -per[tp])
        for tp in behind[:TIME_LAG_READS]:
            wanted.setdefault((*tp, committed[group][tp]), []).append(group)
    out: dict[tuple[str, str, int], int | None] = {}
    pending = sorted(wanted)
    while pending:  # one offset per partition a Fetch: partitions read at two positions take two
        this, later, taken = [], [], set()
        for key in pending:
            (later if key[:2] in taken else this).append(key)
            taken.add(key[:2])
        positions = {TopicPartition(t, p): o for t, p, o in this}
        answers = gw.record_times(positions, leaders)
        for t, p, o in this:
            stamp = answers.get(TopicPartition(t, p))
            for group in wanted[(t, p, o)]:
                out[(group, t, p)] = stamp if isinstance(stamp, int) else None
        pending = later
    return out


def _moving(gw) -> set[str]:
    """The topics being reassigned."""
    return {tp.topic for tp in gw.list_partition_reassignments()}


def _broker_rates(gw, brokers) -> int:
    """Rate overrides on the brokers or on the cluster default."""
    resources = [ConfigResource("BROKER", str(b)) for b in brokers] + [ConfigResource("BROKER", "")]
    return sum(1 for value in current_values(gw, resources, RATE_CONFIGS, strict=False).values() if value)


def _throttles(configs, moving, rate_count) -> dict[str, Measure] | None:
    """Throttles left behind: replica throttles on topics not being reassigned, and rate overrides
    while nothing is (a rate is harmless while a move uses it)."""
    if configs is None or moving is None or rate_count is None:
        return None
    topics = sorted(configs.throttled - moving)
    left = len(topics) + (0 if moving else rate_count)
    text = f"{left} throttle setting(s) with no reassignment running"
    if topics:
        text += f" (topics {', '.join(topics[:5])}{', ...' if len(topics) > 5 else ''})"
    return core.one(Measure(left, text, {"topics": topics[:50], "broker_rates": 0 if moving else rate_count}))


def _disk(cluster: Cluster, now: float) -> dict[str, Measure] | None:
    with MEMORY.lock:
        read_at, brokers = MEMORY.forecast.get(cluster.pk, (0.0, None))
    if brokers is None or now - read_at >= settings.ALERTS_CONFIGS_MAX_AGE_S:
        try:
            report = capacity.capacity_report(cluster)
        except (OSError, ValueError) as exc:
            log.info("alerts: capacity forecast of %s not read: %s", cluster.name, exc)
            return None
        brokers = [(b["broker"], b.get("days_to_full")) for b in report.brokers] if report.has_data else []
        with MEMORY.lock:
            MEMORY.forecast[cluster.pk] = (now, brokers)
    return core.disk_measures(brokers)


def audit_chain(max_age_s: float | None = None) -> dict[str, Measure]:
    """Broken (1) when the latest full verification failed or the anchor file contradicts the
    chain. Console-wide: one check serves every cluster of a round (kept ``max_age_s``)."""
    now = time.monotonic()
    max_age_s = CHAIN_CHECK_S if max_age_s is None else max_age_s
    with MEMORY.lock:
        if MEMORY.chain is not None and now - MEMORY.chain[0] < max_age_s:
            return MEMORY.chain[1]
    problems = []
    latest = chain.latest_verify()
    if latest is not None and latest.state == OperationState.FAILED:
        problems.append(f"the full verification #{latest.pk} failed: {latest.error}"[:200])
    check = anchor.check_latest()
    if check.level == "failure":
        problems.append(check.message[:200])
    text = "; ".join(problems) or "the audit chain is intact"
    found = core.one(Measure(1.0 if problems else 0.0, text))
    with MEMORY.lock:
        MEMORY.chain = (now, found)
    return found
