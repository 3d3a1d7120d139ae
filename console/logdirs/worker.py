"""The ``logdir.move`` kind: its steps, run by the one runner (console/operations).

record throttle → set throttle → submit (AlterReplicaLogDirs per broker) → move (one DescribeLogDirs
per broker a run, until every future replica has replaced its current one) → restore throttle →
finish; a cancel switches to revert (each replica asked back to the dir it is in, which drops its
future replica) → restore throttle → finish cancelled.

The intra-broker throttle (``replica.alter.log.dirs.io.max.bytes.per.second``, per broker) is a
ledger in the operation's ``data["throttles"]``: the previous value (the broker's own dynamic
value, or none) is recorded by one step and saved before the next step sets the new one, so a
worker killed in between never takes its own value for the previous one; restoring sets exactly
that previous value back (or deletes the override). Restoring cannot be skipped: the step raises
while any broker still owes it (waiting out a Kafka that cannot be reached), the give-up hook tries
once more, and what is still owed stays visible in the operation's data and error.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from django.db import transaction

from console import access, operations
from console.audit import store as audit
from console.clusters.actions import gateway_for
from console.formatting import human_bytes
from console.kafka import ConfigChange, ConfigResource, KafkaOperationError, TopicPartition
from console.logdirs import audit_names, core
from console.logdirs.actions import IO_RATE, KIND
from console.models import Operation, OperationState
from console.operations import Done, Kind, Step, Wait
from console.operations.core import is_lost_contact

POLL_S = 2.0
# Kafka's answers per replica (ReplicaManager.alterReplicaLogDirs, KafkaApis): final for that replica
REPLICA_ERRORS = frozenset(
    {
        "LOG_DIR_NOT_FOUND",
        "KAFKA_STORAGE_ERROR",
        "REPLICA_NOT_AVAILABLE",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "INVALID_TOPIC_EXCEPTION",
        "CLUSTER_AUTHORIZATION_FAILED",
    }
)
RESUBMIT_AFTER = 3  # polls without a future replica before the move is asked again


class ThrottlesOwed(Exception):
    """A broker's throttle could not be taken back yet (retried until it is)."""


log = logging.getLogger(__name__)


def _moves(ctx) -> list[core.Move]:
    return [core.move_from_json(m) for m in ctx.op.params.get("moves", [])]


def _brokers(moves: list[core.Move]) -> list[int]:
    return sorted({m.broker for m in moves})


def _actor(ctx):
    return ctx.op.created_by or access.system_actor()


def record_throttle(ctx) -> None:
    """Read and keep each broker's own value of the throttle before anything is set."""
    rate = ctx.op.params.get("throttle")
    if not rate or ctx.data.get("throttles"):
        return
    brokers = _brokers(_moves(ctx))
    res = [ConfigResource("BROKER", str(b)) for b in brokers]
    answers = gateway_for(ctx.op.cluster).describe_configs(res, include_documentation=False, keys=[IO_RATE])
    ledger = {}
    for r in res:
        entries = answers[r]
        if isinstance(entries, KafkaOperationError):
            raise entries
        entry = entries.get(IO_RATE)
        own = entry is not None and entry.source == "DYNAMIC_BROKER_CONFIG"
        ledger[r.name] = {"previous": entry.value if own else None, "value": str(rate), "state": "recorded"}
    ctx.data["throttles"] = ledger


def set_throttle(ctx) -> Done | None:
    ledger = ctx.data.get("throttles") or {}
    todo = {b: e for b, e in ledger.items() if e["state"] == "recorded"}
    if not todo:
        return None
    results = gateway_for(ctx.op.cluster).incremental_alter_configs(
        {ConfigResource("BROKER", b): [ConfigChange(IO_RATE, "SET", e["value"])] for b, e in todo.items()}
    )
    failed = {}
    for b, e in todo.items():
        got = results[ConfigResource("BROKER", b)]
        if isinstance(got, KafkaOperationError):
            failed[b] = f"{got.name}: {got.operator_text}"
        else:
            e["state"] = "set"
    with transaction.atomic():
        audit.record(
            actor=_actor(ctx),
            action=audit_names.THROTTLE_SET,
            cluster=ctx.op.cluster,
            targets=[f"broker:{b}" for b in sorted(todo)],
            params={"config": IO_RATE, "rate": ctx.op.params.get("throttle")},
            before={b: e["previous"] for b, e in todo.items()},
            after={b: e["value"] for b, e in todo.items() if b not in failed},
            outcomes={f"broker:{b}": {"ok": b not in failed, "message": failed.get(b, "set")} for b in todo},
            outcome="success" if not failed else "failure",
            operation=ctx.op,
        )
    if failed:  # nothing is moved; what was set is taken back by the restore step, then it fails
        ctx.data["abort"] = (
            "Could not set the throttle: "
            + "; ".join(f"broker {b}: {t}" for b, t in sorted(failed.items()))
            + ". Nothing was moved."
        )
    return None


def _whole_failure(results: dict) -> KafkaOperationError | None:
    """The error that failed a whole request (every replica the same error object), if any."""
    errs = list(results.values())
    if errs and all(isinstance(e, KafkaOperationError) for e in errs) and len({id(e) for e in errs}) == 1:
        return errs[0]
    return None


def _send(ctx, moves: list[core.Move], back_to: dict[str, str] | None = None) -> dict[str, str]:
    """AlterReplicaLogDirs per broker (the target, or ``back_to[key]``); {key: error text} refused."""
    gw = gateway_for(ctx.op.cluster)
    by_broker: dict[int, dict[TopicPartition, core.Move]] = defaultdict(dict)
    for m in moves:
        by_broker[m.broker][TopicPartition(m.topic, m.partition)] = m
    refused = {}
    for broker, tps in sorted(by_broker.items()):
        dirs = {tp: (back_to or {}).get(m.key, m.target) for tp, m in tps.items()}
        results = gw.alter_replica_log_dirs(broker, dirs)
        whole = _whole_failure(results)
        if whole is not None and whole.name not in REPLICA_ERRORS:
            raise whole  # the request failed (not Kafka's answer per replica): retried
        for tp, got in results.items():
            if isinstance(got, KafkaOperationError):
                refused[tps[tp].key] = f"{got.name}: {got.operator_text}"
    return refused


def submit(ctx) -> None:
    if ctx.data.get("abort"):
        return
    moves = [m for m in _moves(ctx) if m.key not in ctx.data.get("failed", {})]
    refused = _send(ctx, moves)
    failed = ctx.data.setdefault("failed", {})
    for key, text in refused.items():
        failed[key] = text
        ctx.set_item(key, state=OperationState.FAILED, message=text)
    for m in moves:
        if m.key not in refused:
            ctx.set_item(m.key, state=OperationState.RUNNING, message="submitted")
    ctx.data["submitted"] = True


def _read(ctx, moves: list[core.Move]) -> dict[int, tuple[core.Dir, ...]]:
    parts: dict[int, list[TopicPartition]] = defaultdict(list)
    for m in moves:
        parts[m.broker].append(TopicPartition(m.topic, m.partition))
    answers = gateway_for(ctx.op.cluster).describe_log_dirs(None, parts)
    out = {}
    for b, a in answers.items():
        if isinstance(a, KafkaOperationError):
            raise a  # lost contact (or a broker down): the move goes on in Kafka, we wait
        out[b] = tuple(
            core.Dir(
                d.path,
                d.error is not None,
                d.total_bytes,
                d.usable_bytes,
                {
                    (tp.topic, tp.partition): core.Replica(r.size, r.offset_lag, r.is_future)
                    for tp, r in d.replicas.items()
                },
            )
            for d in a
        )
    return out


def watch(ctx) -> Wait | None:
    """One poll: each move's progress from its broker's dirs; done when every one has ended."""
    failed = ctx.data.setdefault("failed", {})
    done = ctx.data.setdefault("done", {})
    moves = [m for m in _moves(ctx) if m.key not in failed and m.key not in done]
    if not moves or ctx.data.get("abort"):
        return None
    dirs = _read(ctx, moves)
    live = ctx.data.setdefault("progress", {})
    waits = ctx.data.setdefault("waits", {})
    again = []
    for m in moves:
        pr = core.progress(m, dirs[m.broker])
        live[m.key] = pr.as_json()
        if pr.state == core.DONE:
            done[m.key] = pr.size
            ctx.set_item(m.key, state=OperationState.SUCCEEDED, progress=1.0, message=f"in {m.target}")
        elif pr.state == core.GONE:
            failed[m.key] = f"broker {m.broker} no longer reports a replica of {m.topic}-{m.partition}"
            ctx.set_item(m.key, state=OperationState.FAILED, message=failed[m.key])
        else:
            text = (
                f"copying {human_bytes(pr.copied)} of {human_bytes(pr.size)} to {m.target}"
                if pr.state == core.COPYING
                else f"waiting for broker {m.broker} to start the copy"
            )
            ctx.set_item(m.key, state=OperationState.RUNNING, progress=pr.fraction, message=text)
            if pr.state == core.WAITING:
                waits[m.key] = waits.get(m.key, 0) + 1
                if waits[m.key] % RESUBMIT_AFTER == 0:
                    again.append(m)
    if again:
        for key, text in _send(ctx, again).items():
            failed[key] = text
            ctx.set_item(key, state=OperationState.FAILED, message=text)
    total = len(ctx.op.params.get("moves", []))
    copied = sum(live.get(k, {}).get("copied_bytes", 0) for k in live)
    size = sum(live.get(k, {}).get("size_bytes", 0) for k in live) or 1
    ended = len(done) + len(failed)
    text = f"{ended} of {total} replica(s) ended; {human_bytes(copied)} of {human_bytes(size)} copied"
    ctx.heartbeat(progress=min(1.0, copied / size), text=text)
    if ended >= total:
        return None
    return Wait(POLL_S, text)


def restore_throttle(ctx) -> None:
    """Take every broker's throttle back to its recorded previous value (or remove it)."""
    ledger = ctx.data.get("throttles") or {}
    todo = {b: e for b, e in ledger.items() if e["state"] in ("recorded", "set")}
    if not todo:
        return
    changes = {
        ConfigResource("BROKER", b): [
            ConfigChange(IO_RATE, "SET", e["previous"])
            if e["previous"] is not None
            else ConfigChange(IO_RATE, "DELETE")
        ]
        for b, e in todo.items()
    }
    results = gateway_for(ctx.op.cluster).incremental_alter_configs(changes)
    owed = {}
    for b, e in todo.items():
        got = results[ConfigResource("BROKER", b)]
        if isinstance(got, KafkaOperationError):
            owed[b] = got
        else:
            e["state"] = "restored"
    done = {b: e for b, e in todo.items() if b not in owed}
    if done:
        with transaction.atomic():
            audit.record(
                actor=_actor(ctx),
                action=audit_names.THROTTLE_RESTORE,
                cluster=ctx.op.cluster,
                targets=[f"broker:{b}" for b in sorted(done)],
                params={"config": IO_RATE},
                before={b: e["value"] for b, e in done.items()},
                after={b: e["previous"] for b, e in done.items()},
                outcome="success",
                operation=ctx.op,
            )
    if owed:
        first = next(iter(owed.values()))
        if is_lost_contact(first):
            raise first
        raise ThrottlesOwed(
            "the throttle is still owed on "
            + ", ".join(f"broker {b} ({e.name})" for b, e in sorted(owed.items()))
        )


def _result(ctx) -> dict:
    return {
        "moves": ctx.data.get("progress", {}),
        "done": sorted(ctx.data.get("done", {})),
        "failed": ctx.data.get("failed", {}),
        "throttles": ctx.data.get("throttles") or {},
    }


def finish(ctx) -> Done:
    if ctx.data.get("abort"):
        return Done(OperationState.FAILED, result=_result(ctx), error=ctx.data["abort"])
    failed = ctx.data.get("failed", {})
    outcomes = {
        m.key: {"ok": m.key not in failed, "message": failed.get(m.key, f"in {m.target}")}
        for m in _moves(ctx)
    }
    if failed:
        return Done(
            OperationState.FAILED,
            result=_result(ctx),
            outcomes=outcomes,
            error="; ".join(f"{k}: {t}" for k, t in sorted(failed.items())),
        )
    return Done(OperationState.SUCCEEDED, result=_result(ctx), outcomes=outcomes)


def revert(ctx) -> None:
    """Ask each unfinished replica back to the dir it is in: Kafka drops its future replica."""
    done, failed = ctx.data.get("done", {}), ctx.data.get("failed", {})
    moves = [m for m in _moves(ctx) if m.key not in done and m.key not in failed]
    if not moves or not ctx.data.get("submitted"):
        return
    dirs = _read(ctx, moves)
    back = {}
    for m in moves:
        home, _, _ = core.where(dirs[m.broker], (m.topic, m.partition))
        if home is not None and home.path != m.target:
            back[m.key] = home.path
    refused = _send(ctx, [m for m in moves if m.key in back], back_to=back)
    for m in moves:
        if m.key in back and m.key not in refused:
            ctx.set_item(m.key, state=OperationState.CANCELLED, message=f"stays in {back[m.key]}")
    ctx.data["reverted"] = sorted(set(back) - set(refused))


def finish_cancelled(ctx) -> Done:
    return Done(OperationState.CANCELLED, result=_result(ctx))


def give_up(ctx, error: str) -> None:
    """Before the operation ends errored: one more try at taking the throttle back."""
    try:
        restore_throttle(ctx)
    except Exception:  # noqa: BLE001 - best effort: what is owed stays in the data
        pass


operations.register(
    Kind(
        KIND,
        steps=(
            Step("record throttle", record_throttle),
            Step("set throttle", set_throttle),
            Step("submit", submit, cancellable=False),
            Step("move", watch, watches_kafka=True),
            Step("restore throttle", restore_throttle, cancellable=False, watches_kafka=True),
            Step("finish", finish),
        ),
        cancel_steps=(
            Step("revert", revert, watches_kafka=True),
            Step("restore throttle", restore_throttle, cancellable=False, watches_kafka=True),
            Step("finish", finish_cancelled),
        ),
        give_up=give_up,
    )
)


class _Ended:
    """What ``restore_throttle`` needs of an ended operation: the operation and its data."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.data = op.data


def sweep_owed_throttles() -> list[int]:
    """The throttle janitor's part for moves between log dirs (beat, with the reassignments'): a move
    that ended errored while its throttle was still owed (Kafka did not answer when it gave up) has it
    taken back once Kafka answers again, exactly as its own last step would. The ids taken back."""
    done = []
    for op in Operation.objects.filter(kind=KIND, state=OperationState.ERRORED).select_related("cluster"):
        ledger = (op.data or {}).get("throttles") or {}
        if not any(e.get("state") in ("recorded", "set") for e in ledger.values()):
            continue
        ended = _Ended(op)
        try:
            restore_throttle(ended)
        except Exception:  # noqa: BLE001 - still unreachable or refused: owed, tried again next beat
            log.info("log-dir move %s: its throttle is still owed", op.pk)
        op.data = ended.data
        op.save(update_fields=["data"])  # the ledger only: the operation stays errored
        if all(e.get("state") not in ("recorded", "set") for e in ledger.values()):
            done.append(op.pk)
    return done
