"""API: a broker's log dirs (path, total and usable bytes, replicas, moves in progress) and moves of
replicas between the dirs of one broker (KIP-113 AlterReplicaLogDirs): a dry run, or the move (a
``logdir.move`` Operation; 202 with its id), its progress; held for review where the cluster holds
``logdir.move``."""

from __future__ import annotations

from django.http import Http404
from rest_framework import serializers
from rest_framework.response import Response

from console import access
from console.api.base import ApiView, query, reads, writes
from console.api.held import hold
from console.kafka import KafkaOperationError
from console.logdirs import actions, core, held
from console.logdirs import reads as ld_reads
from console.models import Operation


class DirsQuery(serializers.Serializer):
    search = serializers.CharField(required=False, allow_blank=True, default="", max_length=249)
    limit = serializers.IntegerField(required=False, min_value=0, max_value=10_000, default=200)


class MoveIn(serializers.Serializer):
    moves = serializers.JSONField(
        required=False,
        default=None,
        help_text='[{"topic": "t", "partition": 0, "broker": 1, "dir": "/var/lib/kafka/data-1"}]',
    )
    plan = serializers.JSONField(
        required=False,
        default=None,
        help_text='kafka-reassign-partitions.sh\'s plan with "log_dirs" (replicas as they are now)',
    )
    throttle = serializers.IntegerField(
        required=False, default=None, help_text="replica.alter.log.dirs.io.max.bytes.per.second while moving"
    )
    dry_run = serializers.BooleanField(required=False, default=False)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    break_glass = serializers.CharField(required=False, allow_blank=True, default="")


def _moves(cluster, d) -> list[core.Move]:
    if (d["moves"] is None) == (d["plan"] is None):
        raise ld_reads.LogDirInvalid(['Give either "moves" or "plan".'])
    if d["plan"] is not None:
        return ld_reads.plan_file_moves(cluster, d["plan"])
    raw = d["moves"]
    if not isinstance(raw, list) or not raw:
        raise ld_reads.LogDirInvalid(['"moves" must be a non-empty list.'])
    out = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict):
            raise ld_reads.LogDirInvalid([f"moves[{i}] is not an object."])
        out.extend(
            ld_reads.checked(
                core.form_moves,
                m.get("broker"),
                m.get("topic") or "",
                [m.get("partition")],
                m.get("dir") or "",
            )
        )
    return sorted(set(out))


class BrokerLogDirs(ApiView):
    @reads("broker_log_dirs")
    def get(self, request, name: str, broker: int):
        """A broker's log dirs: path, total/usable bytes, replicas and their size (``search``: topics
        containing it, ``limit`` a dir), and the moves in progress (future replicas)."""
        cluster = self.cluster(name, access.VIEW)
        q = query(DirsQuery, request)
        try:
            view = ld_reads.describe(
                actor=request.user, cluster=cluster, broker=broker, search=q["search"], limit=q["limit"]
            )
        except KafkaOperationError as exc:
            if exc.name == "BROKER_NOT_AVAILABLE":
                raise Http404(f"Broker {broker} is not live.") from None
            raise
        body = view.as_json()
        for out, v in zip(body["log_dirs"], view.dirs, strict=True):
            out["replica_list"] = [{"topic": t, "partition": p, "size_bytes": s} for t, p, s in v.rows]
        return Response(body)


class LogDirMoves(ApiView):
    @writes("log_dir_moves", (200, 202), request=MoveIn, held=True)
    def post(self, request, name: str):
        """A dry run (``dry_run``: each replica's dir now -> target, the bytes to copy, the problems) or
        the move (202: the operation's id; follow it at ``log-dir-moves/<id>/``). 422: refused as asked
        (nothing sent)."""
        cluster = self.cluster(name, access.MANAGE_REASSIGNMENTS)
        d = self.body(MoveIn)
        user = request.user
        moves = _moves(cluster, d)
        if d["dry_run"]:
            plan = ld_reads.dry_run(actor=user, cluster=cluster, moves=moves)
            return Response({**plan.as_json(), "dry_run": True})
        answer = hold(self, cluster, held.GATE, lambda: held.prepare(user, cluster, moves, d["throttle"]))
        if answer is not None:
            return answer
        op = actions.move_replicas(
            actor=user, cluster=cluster, moves=moves, throttle=d["throttle"], source_ip=self.ip
        )
        return Response(ld_reads.move_json(op), status=202)


class LogDirMove(ApiView):
    @reads("log_dir_move")
    def get(self, request, name: str, op_id: int):
        """A move's progress: per replica the bytes copied of its size, its state; the throttle ledger."""
        cluster = self.cluster(name, access.VIEW)
        try:
            op = actions.get_move(actor=request.user, cluster=cluster, op_id=op_id)
        except Operation.DoesNotExist:
            raise Http404("No such move.") from None
        return Response(ld_reads.move_json(op))
