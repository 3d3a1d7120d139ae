"""The reassignment tests' world on the shared sandbox: topics holding data on given brokers, a move
started by the operator, a broker whose metadata lags, and the throttle configs taken back after."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable

from console.kafka.types import TopicMetadata
from console.models.reassignment import Reassignment
from console.reassignment import actions as reassignment
from console.reassignment import throttles

MB = 1024 * 1024
_names = itertools.count()


def make_topic(sandbox, assignment, mb_per_partition=10, name: str = "") -> str:
    """A topic with ``assignment``'s replicas (one list per partition), ``mb_per_partition`` of data
    each, and a produce rate of zero after a second (so a move's bytes are known)."""
    name = name or f"reassign-t{next(_names)}"
    sandbox.create_topic(
        name, partitions=len(assignment), replication_factor=len(assignment[0]), assignment=assignment
    )
    sandbox.produce_synthetic(name, mb_per_partition * MB * len(assignment))
    sandbox.advance(1)
    sandbox.produce_synthetic(name, 0)
    return name


def start(personas, cluster, plan, throttle=1 * MB, **kw):
    """The operator starts moving ``plan`` ({(topic, partition): replicas}): its Operation and Reassignment."""
    op = reassignment.start_reassignment(
        actor=personas["operator"], cluster=cluster, proposed=plan, throttle=throttle, **kw
    )
    return op, Reassignment.objects.get(operation=op)


def kafka_plan(moves: dict[tuple[str, int], list[int]]) -> dict:
    """Kafka's reassignment JSON document for ``moves`` ({(topic, partition): replicas})."""
    partitions = [{"topic": t, "partition": p, "replicas": r} for (t, p), r in moves.items()]
    return {"version": 1, "partitions": partitions}


def plan_file(tmp_path, moves: dict[tuple[str, int], list[int]], name: str = "plan.json") -> str:
    """Kafka's reassignment JSON for ``moves``, written to a file."""
    path = tmp_path / name
    path.write_text(json.dumps(kafka_plan(moves)))
    return str(path)


def clear_throttles(sandbox) -> None:
    """Take every replication-throttle config off the shared sandbox (a test ending mid-move leaves
    them; later modules, the Brokers page or the fault matrix, start from a cluster without any)."""
    state = sandbox.state
    with state.lock:
        for t in state.topics.values():
            for config in throttles.REPLICA_CONFIGS:
                t.configs.pop(config, None)
        for configs in state.broker_configs.values():
            for config in throttles.RATE_CONFIGS:
                configs.pop(config, None)


class LaggingMetadata:
    """A ``gateway_for`` whose gateways answer Metadata for ``topic`` with the replicas ``replicas`` the
    first ``answers`` times, as a broker that has not yet applied the metadata log does on real Kafka;
    ``stale_answers`` counts those served."""

    def __init__(self, gateway_for: Callable, topic: str, replicas: tuple[int, ...], answers: int = 2):
        self.gateway_for, self.topic, self.replicas, self.answers = gateway_for, topic, replicas, answers
        self.stale_answers = 0

    def __call__(self, cluster) -> _LaggingGateway:
        return _LaggingGateway(self, self.gateway_for(cluster))


class _LaggingGateway:
    def __init__(self, lag: LaggingMetadata, gw):
        self._lag, self._gw = lag, gw

    def __getattr__(self, name):
        return getattr(self._gw, name)

    def describe_topics(self, names):
        lag, answer = self._lag, self._gw.describe_topics(names)
        md = answer.get(lag.topic)
        if lag.stale_answers < lag.answers and md is not None and not isinstance(md, Exception):
            lag.stale_answers += 1
            parts = tuple(dataclasses.replace(p, replicas=lag.replicas) for p in md.partitions)
            answer[lag.topic] = TopicMetadata(md.name, parts, md.internal, md.topic_id)
        return answer
