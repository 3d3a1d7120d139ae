"""A cluster's summary row (``ClusterSummary``): what its latest look at Kafka found, written where
the console reads Kafka anyway, so the fleet home reads only this table.

- The telemetry snapshot (``snapshots.collect_snapshot``): the partition counts from the snapshot's
  own layout and configs (``partition_counts``), the consumer groups from the groups
  it listed, and the cluster's facts (``read_facts``: the overview's brokers, their states and the
  active controller; ApiVersions' features; one DescribeAcls) read beside the snapshot's requests.
  A controller-mode connection has no snapshot: its summary holds what the controllers answer.

Only a whole look writes the row, so every figure in it is of one time (``taken_at``): the overview
page's fresher counts are not written in, as the row's under-min-ISR, versions and principals would
then be older than the time it shows.

When Kafka cannot be reached the row says so (``reachable`` false, the operator's text of the error)
and keeps the last good figures with the time they were taken. The fleet home (``console/fleet``)
reads the rows; it sits above this area (its search reads the snapshots), so the rows are written here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from django.utils import timezone

from console import access
from console.clusters import actions as clusters
from console.kafka import KafkaOperationError
from console.models import Cluster, ClusterSummary

#: ``metadata.version`` feature levels and the name Kafka gives each (``MetadataVersion`` in Kafka's
#: server-common: ``IBP_3_3_IV3(7, "3.3", "IV3")`` ... ``IBP_4_2_IV1(29, "4.2", "IV1")``).
METADATA_VERSIONS: dict[int, str] = {
    1: "3.0-IV1",
    2: "3.1-IV0",
    3: "3.2-IV0",
    4: "3.3-IV0",
    5: "3.3-IV1",
    6: "3.3-IV2",
    7: "3.3-IV3",
    8: "3.4-IV0",
    9: "3.5-IV0",
    10: "3.5-IV1",
    11: "3.5-IV2",
    12: "3.6-IV0",
    13: "3.6-IV1",
    14: "3.6-IV2",
    15: "3.7-IV0",
    16: "3.7-IV1",
    17: "3.7-IV2",
    18: "3.7-IV3",
    19: "3.7-IV4",
    20: "3.8-IV0",
    21: "3.9-IV0",
    22: "4.0-IV0",
    23: "4.0-IV1",
    24: "4.0-IV2",
    25: "4.0-IV3",
    26: "4.1-IV0",
    27: "4.1-IV1",
    28: "4.2-IV0",
    29: "4.2-IV1",
}

#: How many of the topics under min ISR a summary names (the overview's list; the count covers all).
UNDER_MIN_ISR_TOPICS = 20

#: The minimum ISR Kafka applies to a topic that sets none and whose brokers set none.
DEFAULT_MIN_ISR = 1


def metadata_version_name(level: int | None) -> str:
    """A finalized ``metadata.version`` level as Kafka names it ("4.1-IV1"); "" when not finalized."""
    if level is None or level < 1:
        return ""
    return METADATA_VERSIONS.get(level, f"level {level}")


def kafka_release(supported_max: int | None) -> str:
    """The Kafka release of a broker whose newest supported ``metadata.version`` level is
    ``supported_max``: a broker supports up to its own release's latest level, so this names the
    software the brokers run ("4.1"), where the finalized level only says what the cluster has been
    upgraded to. "" when the broker reports no range; a level newer than the table names itself."""
    if supported_max is None or supported_max < 1:
        return ""
    name = METADATA_VERSIONS.get(supported_max)
    return name.split("-")[0] if name else f"newer than {METADATA_VERSIONS[max(METADATA_VERSIONS)][:3]}"


def version_key(text: str) -> tuple:
    """A version name as a sort key ("4.10" after "4.9", "3.9-IV0" before "4.0-IV0"); "" sorts first."""
    return tuple(int(n) for n in re.findall(r"\d+", text or ""))


@dataclass(frozen=True)
class PartitionCounts:
    """The health counts of one snapshot's partitions."""

    topics: int
    partitions: int
    under_replicated: int  # ISR shorter than the replica list
    offline: int  # no leader
    under_min_isr: int  # ISR shorter than the topic's min.insync.replicas
    #: the topics with the most of those, ``(name, partitions)``, most first (the overview lists them)
    under_min_isr_topics: tuple[tuple[str, int], ...] = ()


def partition_counts(layout, min_isr: Mapping[str, int]) -> PartitionCounts:
    """Counts over a ``PartitionLayout`` (flat arrays, one row per partition). ``min_isr`` is each
    topic's effective ``min.insync.replicas`` (its own, else the brokers' default, as DescribeConfigs
    of the topic answers it); a topic without an answer counts with Kafka's default of 1.

    Under min ISR is counted as the topic list counts it (``topics.reads``): a partition whose ISR is
    shorter than its topic's minimum (a partition without a leader is counted as offline; under KRaft
    its ISR keeps its last member, so under a minimum of 2 or more it is counted here too). The
    arrays are read through numpy (no int object per partition: a million rows in milliseconds)."""
    rows = len(layout)
    if rows == 0:
        return PartitionCounts(len(layout.topics), 0, 0, 0, 0)
    replicas = np.diff(np.frombuffer(layout.replica_offsets, dtype=np.int32))
    isr = np.diff(np.frombuffer(layout.isr_offsets, dtype=np.int32))
    leaderless = np.frombuffer(layout.leader, dtype=np.int32) < 0
    per_topic = np.fromiter(
        (min_isr.get(name, DEFAULT_MIN_ISR) for name in layout.topics),
        dtype=np.int32,
        count=len(layout.topics),
    )
    topic_index = np.frombuffer(layout.topic_index, dtype=np.int32)
    short = isr < per_topic[topic_index]
    per = np.bincount(topic_index[short], minlength=len(layout.topics))
    worst = np.argsort(-per, kind="stable")[:UNDER_MIN_ISR_TOPICS]
    return PartitionCounts(
        topics=len(layout.topics),
        partitions=rows,
        under_replicated=int(np.count_nonzero(isr < replicas)),
        offline=int(np.count_nonzero(leaderless)),
        under_min_isr=int(np.count_nonzero(short)),
        under_min_isr_topics=tuple((layout.topics[i], int(per[i])) for i in worst if per[i]),
    )


def principal_counts(principals) -> list[list]:
    """``[[principal, bindings], ...]`` sorted by principal, from each binding's principal."""
    return [[p, n] for p, n in sorted(Counter(principals).items())]


#: The topic config the snapshot asks for beside retention, to count partitions under min ISR.
MIN_ISR = "min.insync.replicas"
#: Kafka's answer to DescribeAcls on a cluster without an authorizer.
NO_AUTHORIZER = "SECURITY_DISABLED"


@dataclass(frozen=True)
class Facts:
    """What a cluster answers besides its partitions: brokers (controllers, in controller mode), the
    active controller, versions, ACL principals. ``error`` is set when the cluster did not answer."""

    error: str = ""
    controller_id: int | None = None
    brokers_up: int = 0
    brokers_total: int = 0
    kafka_version: str = ""
    metadata_version: str = ""
    principals: list | None = None  # None: not read (keep what the row has)


def _versions(gateway) -> tuple[str, str]:
    """(Kafka release, finalized metadata.version) from ApiVersions' features; blank when unknown."""
    try:
        feature = gateway.describe_features().get("metadata.version")
    except KafkaOperationError:
        return "", ""
    if feature is None:
        return "", ""
    return kafka_release(feature.supported_max), metadata_version_name(feature.finalized_max)


def _principals(gateway) -> list | None:
    """Every ACL binding's principal, counted (one DescribeAcls of everything); [] without an
    authorizer; None when the console may not read them (the row keeps what it had)."""
    try:
        bindings = gateway.describe_acls()
    except KafkaOperationError as exc:
        return [] if exc.name == NO_AUTHORIZER else None
    return principal_counts(b.principal for b in bindings)


def _from_overview(overview) -> Facts:
    if overview.error is not None:
        return Facts(error=overview.error.operator_text)
    states = overview.brokers or ()
    total = len(states) if states else len(overview.info.brokers)
    up = sum(s.state == "up" for s in states) if states else total
    return Facts(controller_id=overview.active_controller, brokers_up=up, brokers_total=total)


def read_facts(cluster: Cluster, gateway, actor=None) -> Facts:
    """The cluster's facts, read at once: the overview (brokers' states, active controller), the
    features and the ACLs. ``actor``: who reads (the system actor by default; resolved by the caller
    when this runs on a helper thread, so the thread needs no database)."""
    actor = actor or access.system_actor()
    with ThreadPoolExecutor(2, thread_name_prefix="summary") as pool:
        versions = pool.submit(_versions, gateway)
        principals = pool.submit(_principals, gateway)
        facts = _from_overview(clusters.overview(actor=actor, cluster=cluster))
        kafka_version, metadata_version = versions.result()
        return Facts(
            facts.error,
            facts.controller_id,
            facts.brokers_up,
            facts.brokers_total,
            kafka_version,
            metadata_version,
            principals.result(),
        )


def min_isr_of(configs: Mapping) -> dict[str, int]:
    """Each topic's effective ``min.insync.replicas`` from ``{ConfigResource: {name: value} | error}``
    (``gateway.config_values``): the topic's own value, else the one it inherits from its brokers
    or the cluster default, as Kafka reports it for the topic."""
    out: dict[str, int] = {}
    for resource, values in configs.items():
        value = values.get(MIN_ISR) if isinstance(values, dict) else None
        if value is not None and str(value).isdigit():
            out[resource.name] = int(value)
    return out


def write(
    cluster: Cluster,
    facts: Facts,
    *,
    taken_at: datetime | None = None,
    counts: PartitionCounts | None = None,
    consumer_groups: int | None = None,
) -> ClusterSummary:
    """Write the cluster's row: the facts, and the counts and groups when given (else the row keeps
    its own). With ``facts.error`` only reachability and the error change (``unreachable``)."""
    taken_at = taken_at or timezone.now()
    if facts.error:
        return unreachable(cluster, facts.error, at=taken_at)
    values: dict = {
        "taken_at": taken_at,
        "reachable": True,
        "error": "",
        "controller_id": facts.controller_id,
        "brokers_up": facts.brokers_up,
        "brokers_total": facts.brokers_total,
    }
    values |= {k: getattr(facts, k) for k in ("kafka_version", "metadata_version") if getattr(facts, k)}
    if facts.principals is not None:
        values["principals"] = facts.principals
    if counts is not None:
        values |= {
            "topics": counts.topics,
            "partitions": counts.partitions,
            "under_replicated": counts.under_replicated,
            "offline": counts.offline,
            "under_min_isr": counts.under_min_isr,
            "under_min_isr_topics": [list(t) for t in counts.under_min_isr_topics],
        }
    if consumer_groups is not None:
        values["consumer_groups"] = consumer_groups
    row, _ = ClusterSummary.objects.update_or_create(cluster=cluster, defaults=values)
    return row


def write_snapshot(
    cluster: Cluster,
    facts: Facts,
    *,
    taken_at: datetime,
    layout,
    configs: Mapping,
    consumer_groups: int | None,
) -> ClusterSummary:
    """A telemetry snapshot's summary: its partitions counted from its layout and configs. Its own
    reads answered, so the cluster is reachable even where the overview's failed (then the brokers
    are the live ones its Metadata named, the controller unknown)."""
    if facts.error:
        live = len(layout.brokers)
        facts = replace(facts, error="", controller_id=None, brokers_up=live, brokers_total=live)
    counts = partition_counts(layout, min_isr_of(configs))
    return write(cluster, facts, taken_at=taken_at, counts=counts, consumer_groups=consumer_groups)


def unreachable(cluster: Cluster, error: str, *, at: datetime | None = None) -> ClusterSummary:
    """Kafka could not be reached: the row says why, and keeps its last good figures and their time
    (a cluster never reached gets a row of its own, taken ``at`` now, with no figures)."""
    error = error[: ClusterSummary._meta.get_field("error").max_length]
    row, created = ClusterSummary.objects.get_or_create(
        cluster=cluster, defaults={"taken_at": at or timezone.now(), "reachable": False, "error": error}
    )
    if not created:
        ClusterSummary.objects.filter(pk=row.pk).update(reachable=False, error=error)
        row.reachable, row.error = False, error
    return row
