"""Aborting a hanging transaction, as ``kafka-transactions.sh abort --topic T --partition P
--start-offset O`` does: DescribeProducers of the partition finds the producer whose open transaction
starts at O, then an ABORT marker (WriteTxnMarkers) goes to the partition's leader with that
producer's id and epoch and its coordinator epoch (-1 unknown: 0), as Kafka's ``Admin.abortTransaction``.

Kafka authorises WriteTxnMarkers as CLUSTER_ACTION on the cluster - what brokers and coordinators do
to each other - so the console asks ``cluster.admin`` of the actor, then change control
(``transaction.abort``), then the typed confirmation (``topic-partition``). The start offset must be a
current open transaction's on that partition, or nothing is sent. "Requested" is audited with the
producer and the partition's last stable offset before; the outcome after, with the last stable
offset and the partition's producers read again (``confirmed``: no open transaction starts at that
offset any more). An abort is never undone: the transaction's records are skipped by every
read_committed consumer.
"""

from __future__ import annotations

from dataclasses import dataclass

from console import access
from console.audit import outcomes
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError
from console.models import Cluster
from console.transactions import audit_names, core, reads
from console.transactions.reads import TxnInvalid

GATE = "transaction.abort"  # the policy kind (declared in held.py)


def confirmation_problem(topic: str, partition: int, confirmation: str | None) -> str:
    expected = f"{topic}-{partition}"
    if (confirmation or "").strip() != expected:
        return f"Type the topic-partition ('{expected}') to confirm the abort; nothing was aborted."
    return ""


@dataclass(frozen=True)
class AbortResult:
    """What an abort did: the spec sent, Kafka's refusal (``error``), the partition's last stable
    offset before and after, ``confirmed``: its producers no longer show the transaction open."""

    spec: core.AbortSpec
    error: KafkaOperationError | None
    lso_before: int | None
    lso_after: int | None
    confirmed: bool
    event_id: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def message(self) -> str:
        s = self.spec
        where = f"{s.topic}-{s.partition}"
        if self.error is not None:
            return f"{where}: {self.error.name}: {self.error.operator_text}"
        return (
            f"Aborted producer {s.producer_id}'s transaction at offset {s.start_offset} on {where}; "
            f"last stable offset {self.lso_before} -> {self.lso_after}."
        )

    def as_json(self) -> dict:
        return {
            **self.spec.as_json(),
            "ok": self.ok,
            "confirmed": self.confirmed,
            "message": self.message,
            "last_stable_offset_before": self.lso_before,
            "last_stable_offset_after": self.lso_after,
            "error": None if self.error is None else self.error.as_json(),
        }


def _targets(kwargs) -> list[str]:
    topic, partition = kwargs.get("topic"), kwargs.get("partition")
    return [f"partition:{topic}-{partition}"] if topic else []


def spec_for(cluster: Cluster, topic: str, partition: int, start_offset: int) -> core.AbortSpec:
    """The producer to abort, from the partition's producers now; TxnInvalid when no open transaction
    starts at ``start_offset``."""
    found = core.abort_spec(topic, partition, start_offset, reads.producers_of(cluster, topic, partition))
    if isinstance(found, str):
        raise TxnInvalid([found])
    return found


@refused_as(audit_names.TRANSACTION_ABORT, TxnInvalid, targets=_targets)
def abort_transaction(
    *,
    actor,
    cluster: Cluster,
    topic,
    partition,
    start_offset,
    confirmation: str | None,
    source_ip: str | None = None,
    on_behalf_of: str = "",
    request_id: str = "",
) -> AbortResult:
    """Abort the open transaction starting at ``start_offset`` on the partition, after the typed
    confirmation. TxnInvalid before anything reaches Kafka's WriteTxnMarkers."""
    access.require(actor, cluster, access.ADMINISTER)
    gate.check(actor, cluster, GATE)
    topic, partition, start_offset = reads.checked(
        core.check_partition_target, topic, partition, start_offset
    )
    problem = confirmation_problem(topic, partition, confirmation)
    if problem:
        raise TxnInvalid([problem])
    spec = spec_for(cluster, topic, partition, start_offset)
    target = f"partition:{topic}-{partition}"
    lso_before = reads.last_stable_offset(cluster, topic, partition)
    params = spec.as_json()
    req = outcomes.requested(
        actor=actor,
        action=audit_names.TRANSACTION_ABORT,
        cluster=cluster,
        targets=[target],
        params=params,
        source_ip=source_ip,
        on_behalf_of=on_behalf_of,
        request_id=request_id,
    )
    error = None
    try:
        gateway_for(cluster).write_abort_marker(
            topic, partition, spec.producer_id, spec.producer_epoch, spec.coordinator_epoch
        )
    except KafkaOperationError as exc:
        error = exc
    lso_after = reads.last_stable_offset(cluster, topic, partition)
    try:
        now = reads.producers_of(cluster, topic, partition)
        confirmed = not any(s.txn_start_offset == start_offset for s in now)
        after_open = core.pin(now)
    except KafkaOperationError:
        confirmed, after_open = False, "unknown"
    if error is not None and error.retriable and confirmed:
        error = None  # Kafka answered late (or not at all) but the transaction is closed
    entry = outcomes.change_outcome(error, dry_run=False)
    entry.update(confirmed=confirmed)
    event_id = outcomes.settle(
        req,
        targets=[target],
        params=params,
        before={
            "last_stable_offset": lso_before,
            "open_transactions": f"{spec.producer_id}/{spec.producer_epoch}@{start_offset}",
        },
        after={"last_stable_offset": lso_after, "open_transactions": after_open},
        outcomes={f"{topic}-{partition}": entry},
    )
    return AbortResult(spec, error, lso_before, lso_after, confirmed, event_id)


def _reread(cluster: Cluster, targets: list[str], params) -> dict:
    """For the audit reconciler: the partition's open transactions and last stable offset now."""
    topic, partition = params["topic"], int(params["partition"])
    return {
        "last_stable_offset": reads.last_stable_offset(cluster, topic, partition),
        "open_transactions": core.pin(reads.producers_of(cluster, topic, partition)),
    }


outcomes.register_reader(audit_names.TRANSACTION_ABORT, _reread)
