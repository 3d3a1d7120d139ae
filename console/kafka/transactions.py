"""Transactions (KIP-664): ListTransactions, DescribeTransactions, DescribeProducers and the admin's
abort (WriteTxnMarkers), as ``kafka-transactions.sh list|describe|describe-producers|abort`` ask them.

Everything goes over the kafka-python request client (``self._kp``) with its protocol classes, so
every connection the console supports works unchanged. ListTransactions is asked of every broker
(each lists the transactional ids it coordinates), all in flight together; DescribeTransactions goes
to each id's coordinator (one batched FindCoordinator, key type 1); DescribeProducers to each
partition's leader (or the broker named, as ``--broker-id``: any replica answers); the abort's
WriteTxnMarkers to the partition's leader, as Kafka's ``Admin.abortTransaction``. The list comes back
as plain tuples (``TxnRow``): a cluster's 100,000 transactions are decoded once and only the page
shown is made into objects, by the transactions area.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import GatewayBase
from .errors import KafkaOperationError, from_code

__all__ = ["ProducerState", "TransactionDescription", "TransactionsMixin", "TxnRow"]

TxnRow = tuple[str, int, int, str]  # (transactional id, coordinator, producer id, state)
_BATCH = 500  # partitions per DescribeProducers, as find-hanging batches them
_TXN_KEY = 1  # FindCoordinator's key type for a transactional id


@dataclass(frozen=True)
class TransactionDescription:
    """One transactional id at its coordinator (DescribeTransactions)."""

    transactional_id: str
    coordinator: int
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_time_ms: int  # -1: no transaction in progress
    partitions: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ProducerState:
    """An active producer at one partition (DescribeProducers); -1 where Kafka has no value."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    txn_start_offset: int


class TransactionsMixin(GatewayBase):
    """list_transactions, describe_transactions, describe_producers, last_stable_offsets,
    write_abort_marker."""

    def list_transactions(
        self,
        *,
        states: Sequence[str] = (),
        producer_ids: Sequence[int] = (),
        duration_ms: int = -1,
    ) -> list[TxnRow]:
        """Every broker's ListTransactions, merged and sorted by transactional id. ``duration_ms`` >= 0
        (transactions running longer) needs ListTransactions v1 (Kafka 3.8+): an older broker refuses
        with UNSUPPORTED_VERSION. An unknown state filter is Kafka's to report: it lists nothing."""
        from kafka.protocol.admin.transactions import ListTransactionsRequest

        self._require_brokers("listing transactions")
        brokers = self._kp.broker_ids(fresh=True)
        kwargs: dict[str, Any] = {
            "state_filters": list(states),
            "producer_id_filters": [int(p) for p in producer_ids],
            "duration_filter": int(duration_ms),
            "transactional_id_pattern": None,
        }
        if duration_ms >= 0:
            kwargs["min_version"] = 1
        answers = self._kp.send_many([(ListTransactionsRequest(**kwargs), b) for b in brokers])
        rows: list[TxnRow] = []
        for broker, answer in zip(brokers, answers, strict=True):
            if isinstance(answer, KafkaOperationError):
                raise answer.with_message(f"{answer.message} (listing transactions on broker {broker})")
            err = from_code(answer.error_code)
            if err is not None:
                raise err.with_message(f"{err.message} (listing transactions on broker {broker})")
            rows.extend(
                (s.transactional_id, broker, s.producer_id, s.transaction_state)
                for s in answer.transaction_states
            )
        rows.sort()
        return rows

    def _txn_coordinators(self, ids: Iterable[str]) -> dict[str, int | KafkaOperationError]:
        from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest

        found = self._kp.send(
            FindCoordinatorRequest(key_type=_TXN_KEY, coordinator_keys=list(ids), min_version=4)
        )
        out: dict[str, int | KafkaOperationError] = {}
        for c in found.coordinators:
            err = from_code(c.error_code, c.error_message)
            out[c.key] = c.node_id if err is None else err
        return out

    def describe_transactions(
        self, transactional_ids: Sequence[str]
    ) -> dict[str, TransactionDescription | KafkaOperationError]:
        """Each id's transaction at its coordinator; TRANSACTIONAL_ID_NOT_FOUND for an id it does
        not know."""
        from kafka.protocol.admin.transactions import DescribeTransactionsRequest

        self._require_brokers("describing transactions")
        ids = list(dict.fromkeys(transactional_ids))
        if not ids:
            return {}
        coordinators = self._txn_coordinators(ids)
        out: dict[str, TransactionDescription | KafkaOperationError] = {}
        by_node: dict[int, list[str]] = {}
        for tid in ids:
            c = coordinators.get(tid)
            if isinstance(c, int):
                by_node.setdefault(c, []).append(tid)
            else:
                out[tid] = c or KafkaOperationError(
                    15, "COORDINATOR_NOT_AVAILABLE", f"no coordinator for '{tid}'"
                )
        nodes = sorted(by_node)
        answers = self._kp.send_many(
            [(DescribeTransactionsRequest(transactional_ids=by_node[n]), n) for n in nodes]
        )
        for node, answer in zip(nodes, answers, strict=True):
            if isinstance(answer, KafkaOperationError):
                out.update((tid, answer) for tid in by_node[node])
                continue
            for s in answer.transaction_states:
                err = from_code(s.error_code)
                if err is not None:
                    out[s.transactional_id] = err.with_message(f"{err.message} ('{s.transactional_id}')")
                    continue
                parts = tuple(sorted((t.topic, p) for t in s.topics for p in t.partitions))
                out[s.transactional_id] = TransactionDescription(
                    s.transactional_id,
                    node,
                    s.transaction_state,
                    s.producer_id,
                    s.producer_epoch,
                    s.transaction_timeout_ms,
                    s.transaction_start_time_ms,
                    parts,
                )
        return {tid: out[tid] for tid in ids if tid in out}

    def describe_producers(
        self, topic: str, partitions: Sequence[int] | None = None, broker_id: int | None = None
    ) -> dict[int, tuple[ProducerState, ...] | KafkaOperationError]:
        """Each partition's active producers, from its leader (or ``broker_id``, a replica).
        ``partitions`` None: every partition of the topic. Raises UNKNOWN_TOPIC_OR_PARTITION when the
        topic does not exist."""
        self._require_brokers("describing producers")
        leaders = self._topic_leaders(topic)  # type: ignore[attr-defined]
        wanted = sorted(leaders) if partitions is None else [int(p) for p in partitions]
        out: dict[int, tuple[ProducerState, ...] | KafkaOperationError] = {}
        by_node: dict[int, list[int]] = {}
        for p in wanted:
            node = broker_id if broker_id is not None else leaders.get(p)
            if p not in leaders:
                out[p] = KafkaOperationError(3, "UNKNOWN_TOPIC_OR_PARTITION", f"no partition {topic}-{p}")
            elif node is None or node < 0:
                out[p] = KafkaOperationError(5, "LEADER_NOT_AVAILABLE", f"{topic}-{p} has no leader", True)
            else:
                by_node.setdefault(node, []).append(p)
        asks = {n: {topic: parts} for n, parts in by_node.items()}
        for (_, p), answer in self._producers_by_node(asks).items():
            out[p] = answer
        return {p: out[p] for p in wanted if p in out}

    def producers_on_broker(
        self, broker_id: int, partitions: Mapping[str, Sequence[int]]
    ) -> dict[tuple[str, int], tuple[ProducerState, ...] | KafkaOperationError]:
        """DescribeProducers of many topics' partitions asked of one broker (a replica of each), in
        requests of at most 500 partitions, as ``find-hanging --broker-id`` asks."""
        self._require_brokers("describing producers")
        flat = [(t, int(p)) for t, parts in sorted(partitions.items()) for p in parts]
        out: dict[tuple[str, int], tuple[ProducerState, ...] | KafkaOperationError] = {}
        for i in range(0, len(flat), _BATCH):
            batch: dict[str, list[int]] = {}
            for t, p in flat[i : i + _BATCH]:
                batch.setdefault(t, []).append(p)
            out.update(self._producers_by_node({broker_id: batch}))
        return out

    def _producers_by_node(
        self, asks: Mapping[int, Mapping[str, Sequence[int]]]
    ) -> dict[tuple[str, int], tuple[ProducerState, ...] | KafkaOperationError]:
        from kafka.protocol.admin.transactions import DescribeProducersRequest as D

        nodes = sorted(asks)
        requests = [
            (D(topics=[D.TopicRequest(name=t, partition_indexes=list(ps)) for t, ps in asks[n].items()]), n)
            for n in nodes
        ]
        out: dict[tuple[str, int], tuple[ProducerState, ...] | KafkaOperationError] = {}
        for node, answer in zip(nodes, self._kp.send_many(requests), strict=True):
            if isinstance(answer, KafkaOperationError):
                out.update(((t, p), answer) for t, ps in asks[node].items() for p in ps)
                continue
            for t in answer.topics:
                for r in t.partitions:
                    err = from_code(r.error_code, getattr(r, "error_message", None))
                    out[(t.name, r.partition_index)] = (
                        err.with_message(f"{err.message} ({t.name}-{r.partition_index} on broker {node})")
                        if err is not None
                        else tuple(
                            ProducerState(
                                s.producer_id,
                                s.producer_epoch,
                                s.last_sequence,
                                s.last_timestamp,
                                s.coordinator_epoch,
                                s.current_txn_start_offset,
                            )
                            for s in r.active_producers
                        )
                    )
        return out

    def last_stable_offsets(
        self, topic: str, partitions: Sequence[int]
    ) -> dict[int, int | KafkaOperationError]:
        """Each partition's last stable offset (ListOffsets latest, READ_COMMITTED, to its leader)."""
        from kafka.protocol.consumer import ListOffsetsRequest as L

        self._require_brokers("reading last stable offsets")
        leaders = self._topic_leaders(topic)  # type: ignore[attr-defined]
        out: dict[int, int | KafkaOperationError] = {}
        by_node: dict[int, list[int]] = {}
        for p in partitions:
            node = leaders.get(p, -1)
            if node < 0:
                out[p] = KafkaOperationError(5, "LEADER_NOT_AVAILABLE", f"{topic}-{p} has no leader", True)
            else:
                by_node.setdefault(node, []).append(p)
        nodes = sorted(by_node)
        T, P = L.ListOffsetsTopic, L.ListOffsetsTopic.ListOffsetsPartition
        asks = [
            (
                L(
                    replica_id=-1,
                    isolation_level=1,
                    topics=[
                        T(name=topic, partitions=[P(partition_index=p, timestamp=-1) for p in by_node[n]])
                    ],
                ),
                n,
            )
            for n in nodes
        ]
        for node, answer in zip(nodes, self._kp.send_many(asks), strict=True):
            if isinstance(answer, KafkaOperationError):
                out.update((p, answer) for p in by_node[node])
                continue
            for t in answer.topics:
                for r in t.partitions:
                    err = from_code(r.error_code)
                    out[r.partition_index] = r.offset if err is None else err
        return {p: out[p] for p in partitions if p in out}

    def write_abort_marker(
        self, topic: str, partition: int, producer_id: int, producer_epoch: int, coordinator_epoch: int
    ) -> None:
        """Abort a producer's open transaction on one partition: WriteTxnMarkers (an ABORT marker) to
        the partition's leader, as Kafka's ``Admin.abortTransaction``. Kafka authorises it as
        CLUSTER_ACTION on the cluster. Raises Kafka's refusal."""
        from kafka.protocol.producer.transaction import WriteTxnMarkersRequest as W

        self._require_brokers("aborting a transaction")
        leader = self._topic_leaders(topic).get(partition)  # type: ignore[attr-defined]
        if leader is None:
            raise KafkaOperationError(3, "UNKNOWN_TOPIC_OR_PARTITION", f"no partition {topic}-{partition}")
        if leader < 0:
            raise KafkaOperationError(5, "LEADER_NOT_AVAILABLE", f"{topic}-{partition} has no leader", True)
        marker = W.WritableTxnMarker(
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            transaction_result=False,
            topics=[W.WritableTxnMarker.WritableTxnMarkerTopic(name=topic, partition_indexes=[partition])],
            coordinator_epoch=coordinator_epoch,
        )
        answer = self._kp.send(W(markers=[marker]), leader)
        for m in answer.markers:
            for t in m.topics:
                for r in t.partitions:
                    err = from_code(r.error_code)
                    if err is not None:
                        raise err.with_message(f"{err.message} ({topic}-{partition})")
