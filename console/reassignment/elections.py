"""Leader elections (KIP-460): preferred for selected or all imbalanced partitions; unclean for admins."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from console import access, operations
from console.audit.refusals import refused_as
from console.changes import gate
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, TopicPartition
from console.models import Operation, OperationState
from console.operations import Done, Kind, Step
from console.reassignment import audit_names
from console.reassignment.actions import ELECT_KIND

PREFERRED = "PREFERRED"
UNCLEAN = "UNCLEAN"
MAX_ITEMS = 2000  # partitions listed one per item; larger elections keep only the summary


class ElectionRefused(ValueError):
    """An election the operator must correct (permission, confirmation, empty selection)."""


@dataclass(frozen=True)
class Imbalance:
    """Partitions whose leader is not the preferred replica, counted per preferred broker."""

    partitions: list[tuple[str, int]]
    per_broker: dict[int, int]
    leaders_per_broker: dict[int, int]
    total: int


def leader_imbalance(cluster) -> Imbalance:
    """One metadata fetch: which partitions are not led by their preferred replica."""
    md = gateway_for(cluster).list_topics_metadata()
    off: list[tuple[str, int]] = []
    per_broker: Counter[int] = Counter()
    leaders: Counter[int] = Counter({b.id: 0 for b in md.brokers})
    total = 0
    for t in md.topics:
        for p in t.partitions:
            total += 1
            if p.leader >= 0:
                leaders[p.leader] += 1
            if p.replicas and p.leader != p.replicas[0]:
                off.append((t.name, p.id))
                per_broker[p.replicas[0]] += 1
    return Imbalance(off, dict(sorted(per_broker.items())), dict(sorted(leaders.items())), total)


def unclean_confirmation(cluster) -> str:
    """The text an admin types to confirm an unclean election."""
    return f"unclean {cluster.name}"


def partitions_to_elect(actor, cluster, election_type: str, chosen) -> list[tuple[str, int]] | None:
    """The partitions an election covers: those chosen; for a preferred election with none chosen,
    every partition not led by its preferred replica now (read only for those who may elect: anyone
    else is refused by ``start_election`` before it reads). An unclean election without a choice stays
    None (refused: it names its partitions)."""
    if chosen is not None or election_type.upper() != PREFERRED:
        return chosen
    if not access.can(actor, cluster, access.MANAGE_REASSIGNMENTS):
        return []
    return leader_imbalance(cluster).partitions or []


@refused_as(
    audit_names.ELECTION_START,
    ElectionRefused,
    targets=lambda k: sorted({f"topic:{t}" for t, _ in k.get("partitions") or ()}),
)
def start_election(
    *,
    actor,
    cluster,
    election_type: str,
    partitions: Iterable[tuple[str, int]] | None,
    confirmation: str = "",
    source_ip: str | None = None,
) -> Operation:
    """Queue a preferred (operators) or unclean (admins, typed confirmation) leader election."""
    election_type = election_type.upper()
    if election_type == UNCLEAN:
        access.require(actor, cluster, access.ADMINISTER)
        if confirmation.strip() != unclean_confirmation(cluster):
            raise ElectionRefused(
                f"Type '{unclean_confirmation(cluster)}' to confirm: an unclean election can lose committed data."
            )
    elif election_type == PREFERRED:
        access.require(actor, cluster, access.MANAGE_REASSIGNMENTS)
    else:
        raise ElectionRefused(f"Unknown election type {election_type!r}.")
    gate.check(actor, cluster, "election")
    chosen = None if partitions is None else sorted(set(partitions))
    if chosen is not None and not chosen:
        raise ElectionRefused("Select at least one partition (or every imbalanced partition).")
    if election_type == UNCLEAN and chosen is None:
        raise ElectionRefused("An unclean election needs an explicit list of partitions.")
    items = [f"{t}-{p}" for t, p in chosen] if chosen is not None and len(chosen) <= MAX_ITEMS else []
    params = {
        "type": election_type,
        "partitions": [[t, p] for t, p in chosen] if chosen is not None else None,
    }
    return operations.start(
        actor=actor,
        kind=ELECT_KIND,
        cluster=cluster,
        params=params,
        items=items,
        # the topics first, so each topic's "Recent changes" lists the election
        targets=[
            *(f"topic:{t}" for t in sorted({t for t, _ in chosen or ()})[:50]),
            *items[:50],
        ]
        or [f"cluster:{cluster.name}"],
        source_ip=source_ip,
    )


def _elect(ctx) -> Done:
    """One ElectLeaders call; each partition's own outcome (not needed counts as done).

    A failed call (Kafka unreachable) raises: the runner retries it with backoff, then errors.
    """
    op = ctx.op
    election_type = op.params.get("type", PREFERRED)
    chosen = op.params.get("partitions")
    tps = None if chosen is None else [TopicPartition(t, int(p)) for t, p in chosen]
    results = gateway_for(op.cluster).elect_leaders(election_type, tps)
    outcomes = {}
    for tp, res in sorted(results.items(), key=lambda kv: (kv[0].topic, kv[0].partition)):
        key = f"{tp.topic}-{tp.partition}"
        if isinstance(res, KafkaOperationError):
            ok = res.name == "ELECTION_NOT_NEEDED"
            outcomes[key] = {"ok": ok, "error": res.name, "message": res.operator_text}
        else:
            ok = True
            outcomes[key] = {"ok": True, "message": "leader elected"}
        ctx.set_item(
            key,
            state=OperationState.SUCCEEDED if ok else OperationState.FAILED,
            progress=1.0,
            message=outcomes[key]["message"],
        )
    failed = [k for k, v in outcomes.items() if not v["ok"]]
    return Done(
        OperationState.FAILED if failed else OperationState.SUCCEEDED,
        error=f"{len(failed)} of {len(outcomes)} partitions could not elect a leader" if failed else "",
        result={
            "elected": sum(1 for v in outcomes.values() if v["ok"] and "error" not in v),
            "not_needed": sum(1 for v in outcomes.values() if v.get("error") == "ELECTION_NOT_NEEDED"),
            "failed": len(failed),
        },
        outcomes=outcomes if len(outcomes) <= MAX_ITEMS else {k: outcomes[k] for k in failed[:MAX_ITEMS]},
    )


operations.register(Kind(ELECT_KIND, (Step("elect", _elect),)))
