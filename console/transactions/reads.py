"""What the pages, API and CLI list and show of transactions (KIP-664), authorised: the paged list, one
transactional id, a topic's producers, and the hanging transactions as ``find-hanging`` finds them.

Reads need ``cluster.view``. The list is one ListTransactions per broker, kept as the gateway's plain
tuples, sliced, and only the page's rows are made into ``Transaction`` objects (a cluster's 100,000
transactions page as cheaply as a few; ``bench/bench_transactions_list.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from console import access
from console.changes.kinds import ChangeInvalid
from console.clusters.actions import gateway_for
from console.collector import paused as paused_gc
from console.kafka import KafkaOperationError
from console.kafka.transactions import ProducerState, TransactionDescription
from console.models import Cluster
from console.transactions import core
from console.transactions.core import OpenTxn, Transaction, TxnInputError

PAGE_SIZE = 200


class TxnInvalid(ChangeInvalid):
    """A transactions read or abort refused as asked (bad input, no such open transaction, the typed
    confirmation); nothing was sent to Kafka."""


def checked(make, *args, **kwargs):
    """A value made by one of ``core``'s checks, its errors as the area's refusal."""
    try:
        return make(*args, **kwargs)
    except TxnInputError as exc:
        raise TxnInvalid(exc.errors) from None


@dataclass(frozen=True)
class TxnList:
    """One page of the transactions: ``rows`` (the page only), ``total``, ``page`` of ``pages``."""

    rows: list[Transaction]
    total: int
    page: int
    pages: int
    per_page: int

    @property
    def count(self) -> int:
        return self.total


@dataclass(frozen=True)
class Hanging:
    """find-hanging's answer: the hanging transactions, how many partitions and open transactions
    were looked at, the threshold, and when (``now_ms``, for the durations)."""

    rows: list[OpenTxn]
    partitions: int
    open_count: int
    max_timeout_min: int
    now_ms: int

    def as_json(self) -> dict:
        return {
            "max_transaction_timeout_min": self.max_timeout_min,
            "partitions_searched": self.partitions,
            "open_transactions": self.open_count,
            "hanging": [t.as_json(self.now_ms) for t in self.rows],
        }


def list_page(
    *,
    actor,
    cluster: Cluster,
    page: int = 1,
    per_page: int = PAGE_SIZE,
    states=(),
    producer_ids=(),
    duration_ms: int = -1,
) -> TxnList:
    """One page of the cluster's transactions by transactional id (filters: states, producer ids,
    running longer than ``duration_ms``, ListTransactions v1)."""
    access.require(actor, cluster, access.VIEW)
    states = checked(core.check_states, states)
    pids = [checked(core.whole, p, "producer id") for p in producer_ids]
    if duration_ms is not None and duration_ms != -1:
        duration_ms = checked(core.whole, duration_ms, "duration (ms)")
    with paused_gc():
        rows = gateway_for(cluster).list_transactions(
            states=states, producer_ids=pids, duration_ms=-1 if duration_ms is None else duration_ms
        )
        shown, page, pages = core.page_of(rows, page, per_page)
    return TxnList(shown, len(rows), page, pages, max(1, per_page))


def describe(*, actor, cluster: Cluster, transactional_id: str) -> TransactionDescription | None:
    """One transactional id at its coordinator; None when it knows none (TRANSACTIONAL_ID_NOT_FOUND)."""
    access.require(actor, cluster, access.VIEW)
    tid = str(transactional_id or "")
    if not tid.strip():
        raise TxnInvalid(["give a transactional id"])
    answer = gateway_for(cluster).describe_transactions([tid]).get(tid)
    if isinstance(answer, KafkaOperationError):
        if answer.name == "TRANSACTIONAL_ID_NOT_FOUND":
            return None
        raise answer
    return answer


def producers(
    *, actor, cluster: Cluster, topic: str, partition: int | None = None, broker_id: int | None = None
) -> dict[int, tuple[ProducerState, ...] | KafkaOperationError]:
    """The active producers of a topic's partitions (or one), from the leaders (or one replica)."""
    access.require(actor, cluster, access.VIEW)
    topic = checked(core.check_topic, topic)
    if partition is not None:
        partition = checked(core.whole, partition, "partition", high=core.MAX_PARTITION)
    if broker_id is not None:
        broker_id = checked(core.whole, broker_id, "broker id", high=core.MAX_PARTITION)
    return gateway_for(cluster).describe_producers(
        topic, None if partition is None else [partition], broker_id=broker_id
    )


def producers_of(cluster: Cluster, topic: str, partition: int) -> tuple[ProducerState, ...]:
    """One partition's producers now (unauthorised: for the actions and the review); raises Kafka's error."""
    answer = gateway_for(cluster).describe_producers(topic, [partition]).get(partition)
    if answer is None:
        raise KafkaOperationError(3, "UNKNOWN_TOPIC_OR_PARTITION", f"no partition {topic}-{partition}")
    if isinstance(answer, KafkaOperationError):
        raise answer
    return answer


def _search_space(cluster: Cluster, topic: str | None, partition: int | None, broker_id: int | None):
    """find-hanging's partitions: the topic's (or one), or every partition the broker holds a replica
    of (internal topics included); ``{topic: [partition]}``."""
    gw = gateway_for(cluster)
    if topic is not None:
        if partition is not None:
            return {topic: [partition]}
        meta = gw.describe_topics([topic])[topic]
        if isinstance(meta, KafkaOperationError):
            raise meta
        return {topic: [p.id for p in meta.partitions if broker_id is None or broker_id in p.replicas]}
    md = gw.list_topics_metadata()
    out = {}
    for t in md.topics:
        parts = [p.id for p in t.partitions if broker_id in p.replicas]
        if parts:
            out[t.name] = parts
    return out


def find_hanging(
    *,
    actor,
    cluster: Cluster,
    topic: str | None = None,
    partition: int | None = None,
    broker_id: int | None = None,
    max_timeout_min: int = core.DEFAULT_MAX_TIMEOUT_MIN,
    now_ms: int | None = None,
) -> Hanging:
    """``kafka-transactions.sh find-hanging``: for a topic (or one of its partitions) or a broker."""
    access.require(actor, cluster, access.VIEW)
    if topic in ("", None) and broker_id in ("", None):
        raise TxnInvalid(["find-hanging needs a topic or a broker id to limit the search"])
    if partition not in ("", None) and topic in ("", None):
        raise TxnInvalid(["a partition needs its topic"])
    topic = None if topic in ("", None) else checked(core.check_topic, topic)
    partition = None if partition in ("", None) else checked(core.whole, partition, "partition", high=core.MAX_PARTITION)  # fmt: skip
    broker_id = None if broker_id in ("", None) else checked(core.whole, broker_id, "broker id", high=core.MAX_PARTITION)  # fmt: skip
    max_timeout_min = checked(core.whole, max_timeout_min, "maximum transaction timeout (minutes)", high=core.MAX_TIMEOUT_MIN)  # fmt: skip
    gw = gateway_for(cluster)
    space = _search_space(cluster, topic, partition, broker_id)
    found: list[OpenTxn] = []
    for name, parts in space.items():
        if broker_id is not None:
            answers = {
                p: a for (t, p), a in gw.producers_on_broker(broker_id, {name: parts}).items() if t == name
            }
        else:
            answers = gw.describe_producers(name, parts)
        for a in answers.values():
            if isinstance(a, KafkaOperationError):
                raise a
        found.extend(core.open_transactions(name, answers))  # type: ignore[arg-type]
    now = int(time.time() * 1000) if now_ms is None else now_ms
    candidates = core.candidates(found, now, max_timeout_min * 60_000)
    tids: dict[int, str] = {}
    descriptions: dict[str, TransactionDescription | None] = {}
    if candidates:
        pids = sorted({t.producer_id for t in candidates})
        wanted = set(pids)
        tids = {pid: tid for tid, _, pid, _ in gw.list_transactions(producer_ids=pids) if pid in wanted}
        for tid, answer in gw.describe_transactions(sorted(set(tids.values()))).items():
            if isinstance(answer, KafkaOperationError):
                if answer.name != "TRANSACTIONAL_ID_NOT_FOUND":
                    raise answer
                descriptions[tid] = None
            else:
                descriptions[tid] = answer
    rows = core.hanging(candidates, tids, descriptions)
    return Hanging(rows, sum(len(p) for p in space.values()), len(found), max_timeout_min, now)


def last_stable_offset(cluster: Cluster, topic: str, partition: int) -> int | None:
    """The partition's last stable offset now; None when it cannot be read."""
    try:
        answer = gateway_for(cluster).last_stable_offsets(topic, [partition]).get(partition)
    except KafkaOperationError:
        return None
    return answer if isinstance(answer, int) else None


def description_json(d: TransactionDescription, now_ms: int | None = None) -> dict:
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return {
        "transactional_id": d.transactional_id,
        "coordinator": d.coordinator,
        "state": d.state,
        "producer_id": d.producer_id,
        "producer_epoch": d.producer_epoch,
        "transaction_timeout_ms": d.timeout_ms,
        "transaction_start_time_ms": d.start_time_ms if d.start_time_ms >= 0 else None,
        "transaction_duration_ms": now - d.start_time_ms if d.start_time_ms >= 0 else None,
        "topic_partitions": [f"{t}-{p}" for t, p in d.partitions],
    }


def producer_json(s: ProducerState) -> dict:
    return {
        "producer_id": s.producer_id,
        "producer_epoch": s.producer_epoch,
        "coordinator_epoch": s.coordinator_epoch,
        "last_sequence": s.last_sequence,
        "last_timestamp": s.last_timestamp,
        "current_transaction_start_offset": s.txn_start_offset if s.txn_start_offset >= 0 else None,
    }
