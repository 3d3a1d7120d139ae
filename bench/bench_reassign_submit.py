"""Reassignment submit: the user's path for a 10,000-partition plan vs what Kafka's own tool sends,
and the start POST and the preview each against their raw calls.

Sandbox: 30 brokers on 3 racks, 100,000 partitions (100 topics x 1,000, RF 3, sized logs), clock
stopped, in a process of its own (``harness.RemoteSandbox``), as a real cluster would be.

Gated (RESULT): the user's path, form post -> operation -> moving: ``POST /c/<c>/reassignments/new/``
through Django's test client with the plan as kafka-reassign-partitions JSON, a 50 MB/s throttle
and ``action=start`` (the form, the cluster read, validation, the Operation, its rows, the audit
events; answered with the redirect to the reassignment), then the worker's first two steps as the
runner drives them (claim, ``throttle``: ledger + IncrementalAlterConfigs, ``submit``: conflict
checks, AlterPartitionReassignments in batches, per-partition states) until every partition is
``moving``. Floor: the requests ``kafka-reassign-partitions.sh --execute --throttle 52428800``
sends for the same plan (``ReassignPartitionsCommand.executeAssignment`` in apache/kafka's tools):
ListPartitionReassignments (all), DescribeCluster (the broker ids exist), Metadata of the plan's
topics (the current replicas), one IncrementalAlterConfigs of every topic's
leader/follower.replication.throttled.replicas (sources / new destinations, computed from the
plan and the current replicas), IncrementalAlterConfigs of each involved broker's throttled rates
(one request per broker, all in flight, as the Java admin sends broker resources to the broker
itself), one AlterPartitionReassignments with the whole plan - plus one bulk INSERT of the plan
rows (topic, partition, original, target, state) into a table of the same SQLite database in one
transaction (what a console must remember). The ratio is the only goal (<= 1.5): an absolute time
measures the machine.

Two more goals (<= 1.5 each, printed before RESULT; exit 1 if missed), each in its own alternating
loop: the start POST alone (the redirect; no worker step) against its raw calls (DescribeCluster,
the Metadata, ListPartitionReassignments of the plan's partitions, the INSERT of the plan rows),
and the preview POST (``action=preview``: the checks and the diff page with sizes) against its
raw calls (DescribeCluster, ListPartitionReassignments of the plan's partitions, DescribeLogDirs of
each broker's own replicas of the plan, all in flight; no Metadata: the console's preview reads its
cached snapshot, the start re-reads Kafka).

The Metadata in the submit and start floors (the plan names every topic: the whole-cluster answer,
~3 MB) is read off a plain socket and not decoded (``raw_clients.Wire``): the console decodes it in
C, faster than confluent-kafka's ``list_topics`` (shown, not gated, for scale; the floor before
this change) or kafka-python, so a client's decoded read is no floor. The current replicas a floor
needs are taken from the estate's known assignment, checked once against Kafka before the runs:
a decode that costs nothing, which no console can go under. Everything else through kafka-python's
own client (``raw_clients.KpRaw``; confluent-kafka has no ListPartitionReassignments /
AlterPartitionReassignments).

Fresh plans, clean state: every run (either side) moves its own chunk of 10,000 partitions (ten
disjoint chunks, used in turn); right after each run, untimed, its reassignments are cancelled on
the sandbox, its throttles removed and its rows closed (console: the reassignment is finished,
its operation cancelled; floor: the bench table emptied), so no side ever sees another's open
reassignments or rows; then one Metadata read, untimed, so that the sandbox's answer is encoded
before the next run (it encodes it anew after a change, ~0.8 s at 100,000 partitions, which a real
broker serves from its metadata image). GC: setup frozen for both sides; the cyclic collector paused for the
floor's whole run, as the console pauses it for its start (the cluster read included) and its
throttle and submit steps (console.collector); 5 alternating runs; min / median / max.
Prints ``RESULT reassign_submit ratio=<console/floor> goal<=1.5`` last; exit 1 above.

With ``BENCH_KAFKA_BOOTSTRAP_SERVERS`` set, the older service-level comparison runs against that
real cluster instead (``main_real``).
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import (  # noqa: E402
    RemoteSandbox,
    alternate,
    fill_log_sizes,
    freeze,
    gate,
    gc_paused,
    setup_console,
    teardown,
)
from bench.raw_clients import KpRaw, Wire, confluent_admin  # noqa: E402

# The estate: 30 brokers / 100,000 partitions, or with BENCH_REASSIGN_SCALE=1m (read here, so the
# sandbox's spawned process builds the same) 200 brokers / 1,000,000 partitions (bench_progress_poll_1m).
SCALE_1M = os.environ.get("BENCH_REASSIGN_SCALE") == "1m"
BROKERS = 200 if SCALE_1M else 30
TOPICS = 1000 if SCALE_1M else 100
PARTITIONS_PER_TOPIC = 1000
MOVE = 10_000
CHUNKS = TOPICS * PARTITIONS_PER_TOPIC // MOVE
RUNS = 5
MB = 1024 * 1024
THROTTLE = 50 * MB
GOAL = 1.5


def no_queue(op_id: int, countdown: float | None = None) -> str:
    """The bench's dispatcher (settings.OPERATION_DISPATCHER): the bench runs the worker's steps itself."""
    return "bench"


def original(t: int, p: int) -> list[int]:
    """The estate's replicas of partition ``p`` of topic ``t`` (what build_sandbox assigns)."""
    first = (t * 7 + p) % BROKERS
    return [first + 1, (first + 10) % BROKERS + 1, (first + 20) % BROKERS + 1]


def build_sandbox(seed: str = "bench-reassign"):
    """30 brokers on 3 racks, 100,000 partitions with log sizes, the clock stopped."""
    from sandbox.cluster import SandboxCluster

    racks = [f"rack-{i % 3}" for i in range(BROKERS)]
    cluster = SandboxCluster(brokers=BROKERS, controllers=1, port=0, speed=0, seed=seed, racks=racks)
    cluster.start()
    for t in range(TOPICS):
        assignment = [original(t, p) for p in range(PARTITIONS_PER_TOPIC)]
        cluster.create_topic(
            f"bench-{t:03d}", partitions=PARTITIONS_PER_TOPIC, replication_factor=3, assignment=assignment
        )
    fill_log_sizes(cluster, seed=7)
    return cluster


def third_replica(first: int) -> int:
    """The moving replica's new broker index: three along from the original third (``first + 20``)
    on the rack neither other replica uses (racks are ``index % 3``). With 30 brokers that is
    ``first + 23`` round the ring; with 200 (not a multiple of 3) the ring's wrap changes racks, so
    the next index on the missing rack is taken."""
    if BROKERS % 3 == 0:
        return (first + 23) % BROKERS
    others = {first, (first + 10) % BROKERS}
    rack = ({0, 1, 2} - {i % 3 for i in others}).pop() if len({i % 3 for i in others}) == 2 else 0
    step = 3
    while True:
        index = (first + 20 + step) % BROKERS
        if index % 3 == rack and index not in others:
            return index
        step += 1


def plan_for(chunk: int, total: int = MOVE) -> dict[tuple[str, int], tuple[int, ...]]:
    """``total`` partitions (spread over every topic), each moving its last replica to a new broker
    on the same rack (rack spread kept)."""
    per_topic = total // TOPICS
    plan = {}
    for t in range(TOPICS):
        for i in range(per_topic):
            p = chunk * per_topic + i
            first = (t * 7 + p) % BROKERS
            reps = [first + 1, (first + 10) % BROKERS + 1, third_replica(first) + 1]
            plan[(f"bench-{t:03d}", p)] = tuple(reps)
    return plan


def setup(seed: str = "bench-reassign"):
    """Sandbox (own process), throwaway console, registered cluster; (sandbox, cluster, actor, gateway, client)."""
    sandbox = RemoteSandbox(build_sandbox, seed)
    client, cluster_row = setup_console(sandbox.bootstrap_servers, timeout_s=120)
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from console.clusters.actions import gateway_for

    actor = get_user_model().objects.get(username="bench")
    gw = gateway_for(cluster_row)
    gw.list_topics_metadata()  # connections up, like a long-lived worker
    # A live queue publishes in milliseconds; the bench runs no Redis: the worker's steps are run here.
    settings.OPERATION_DISPATCHER = "bench.bench_reassign_submit.no_queue"
    return sandbox, cluster_row, actor, gw, client


def console_submit(cluster_row, actor, plan, throttle: int | None = THROTTLE):
    """The service path without the form (progress_poll's setup, the real-cluster run): start,
    claim, throttle, submit; returns (seconds, reassignment)."""
    from console import operations
    from console.models.reassignment import Reassignment
    from console.reassignment import actions as reassignment
    from console.reassignment import worker as reassign_run

    start = time.perf_counter()
    op = reassignment.start_reassignment(actor=actor, cluster=cluster_row, proposed=plan, throttle=throttle)
    r = Reassignment.objects.select_related("cluster", "operation").get(operation=op)
    r.operation = operations.claim(op.pk, "bench")
    assert reassign_run._throttle(r) is None, "the throttles could not be set"
    reassign_run.submit(r)
    elapsed = time.perf_counter() - start
    moving = r.partitions.filter(state="moving").count()
    assert moving == len(plan), f"only {moving} of {len(plan)} partitions submitted"
    return elapsed, r


# -- the console's path ----------------------------------------------------------------------------


def start_post(client, cluster_row):
    """The start POST alone: the redirect to the new reassignment (no worker step)."""
    url = f"/c/{cluster_row.name}/reassignments/new/"

    def run(form: dict) -> int:
        response = client.post(url, {**form, "action": "start"})
        if response.status_code != 302:
            raise SystemExit(f"start answered {response.status_code}: {response.content[:800]!r}")
        return int(response["Location"].rstrip("/").rsplit("/", 1)[1])

    return run


def form_path(client, cluster_row):
    """POST start -> operation -> the worker's throttle and submit steps -> every partition moving."""
    from console.models.reassignment import Reassignment
    from console.operations.runner import Context, claim
    from console.reassignment import worker as reassign_run

    start = start_post(client, cluster_row)

    def run(form: dict) -> int:
        rid = start(form)
        r = Reassignment.objects.select_related("cluster", "operation").get(pk=rid)
        op = claim(r.operation_id, "bench")  # what the worker does first
        ctx = Context(op, "bench")
        for step in reassign_run.STEPS[:2]:  # throttle, submit: the runner's steps up to "moving"
            assert step.name in ("throttle", "submit"), step.name
            outcome = step.fn(ctx)
            assert outcome is None, (step.name, outcome)
        return rid

    return run


def preview(client, cluster_row):
    url = f"/c/{cluster_row.name}/reassignments/new/"

    def run(form: dict) -> None:
        response = client.post(url, {**form, "action": "preview"})
        if response.status_code != 200 or b"plan_sha256" not in response.content:
            raise SystemExit(f"preview answered {response.status_code}: {response.content[:800]!r}")

    return run


def console_cleanup(gw):
    """Untimed: cancel the run's reassignments on Kafka, take its throttles back, close its rows."""
    from console.kafka import TopicPartition
    from console.models import Operation, OperationState
    from console.models.reassignment import PartitionState, Reassignment, Stage
    from console.reassignment import throttles
    from console.reassignment.finish import close_rows
    from console.reassignment.store import set_stage

    def cleanup(form: dict, rid: int) -> None:
        r = Reassignment.objects.select_related("cluster", "operation").get(pk=rid)
        moving = r.partitions.filter(state="moving").count()
        assert moving == MOVE, f"only {moving} of {MOVE} partitions moving"
        tps = [TopicPartition(t, p) for t, p in r.partitions.values_list("topic", "partition")]
        bad = [
            tp
            for tp, v in gw.alter_partition_reassignments(dict.fromkeys(tps)).items()
            if v.__class__.__name__ != "Ok"
        ]
        assert not bad, bad[:3]
        out = throttles.remove_throttles(r, actor=None, reason="bench cleanup")
        assert all(v.get("ok") for v in out.values()), out
        close_rows(r, PartitionState.CANCELLED, "bench cleanup")
        set_stage(r, Stage.FINISHED)
        Operation.objects.filter(pk=r.operation_id).update(state=OperationState.CANCELLED)

    return cleanup


# -- the floor: what kafka-reassign-partitions.sh --execute --throttle sends --------------------


STEPS: dict[str, float] = defaultdict(float)  # the floor's time per request, summed over its runs


class ToolFloor:
    def __init__(self, bootstrap: str, db_path: str) -> None:
        import sqlite3

        self.kp = KpRaw(bootstrap)
        self.ck = confluent_admin(bootstrap)
        self.wire = Wire(bootstrap)
        self.db = sqlite3.connect(db_path, isolation_level=None)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS bench_plan_rows (id INTEGER PRIMARY KEY, topic TEXT NOT NULL, "
            "partition INTEGER NOT NULL, original TEXT NOT NULL, target TEXT NOT NULL, state TEXT NOT NULL)"
        )
        # The current replicas, as a decode of the Metadata answer that costs nothing would give
        # them: the estate's assignment, checked once against Kafka here.
        self.current = {
            (f"bench-{t:03d}", p): original(t, p) for t in range(TOPICS) for p in range(PARTITIONS_PER_TOPIC)
        }
        md = self.ck.list_topics(timeout=120)
        seen = {
            (t, p): list(x.replicas)
            for t, tm in md.topics.items()
            if t.startswith("bench-")
            for p, x in tm.partitions.items()
        }
        assert seen == self.current, "the estate's assignment is not what Kafka reports"

    def metadata(self, plan: dict) -> dict:
        """The Metadata of the plan's topics (here every topic: the whole-cluster answer) read off
        the wire, not decoded; the plan's current replicas (see __init__)."""
        from kafka.protocol.metadata import MetadataRequest

        self.wire.exchange([(0, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)])
        return {tp: self.current[tp] for tp in plan}

    def insert_rows(self, plan: dict, current: dict) -> None:
        """What a console must remember: the plan's rows, one bulk INSERT in one transaction."""
        rows = [
            (t, p, json.dumps(current[(t, p)]), json.dumps(list(target)), "moving")
            for (t, p), target in plan.items()
        ]
        self.db.execute("BEGIN")
        self.db.executemany(
            "INSERT INTO bench_plan_rows (topic, partition, original, target, state) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        self.db.execute("COMMIT")

    def _listed(self, plan: dict):
        from kafka.protocol.admin import ListPartitionReassignmentsRequest

        T = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
        by_topic = defaultdict(list)
        for t, p in plan:
            by_topic[t].append(p)
        return ListPartitionReassignmentsRequest(
            timeout_ms=60_000, topics=[T(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
        )

    def start(self, plan: dict) -> int:
        """The start POST's raw calls: DescribeCluster and ListPartitionReassignments of the plan's
        partitions in flight while the Metadata is read off the wire, then the INSERT of the rows."""
        from kafka.protocol.admin import DescribeClusterRequest

        answers = self.kp.start(
            [
                (DescribeClusterRequest(include_cluster_authorized_operations=False), None),
                (self._listed(plan), None),
            ]
        )
        current = self.metadata(plan)
        got = dict(answers)
        assert {b for reps in plan.values() for b in reps} <= {b.broker_id for b in got[0].brokers}
        assert got[1].error_code == 0 and not got[1].topics, "a reassignment is in progress"
        self.insert_rows(plan, current)
        return len(plan)

    def clear_rows(self, _plan: dict, _result) -> None:
        self.db.execute("DELETE FROM bench_plan_rows")

    def preview(self, plan: dict) -> dict:
        """The preview's raw calls: DescribeCluster, ListPartitionReassignments of the plan's
        partitions and DescribeLogDirs of each broker's own replicas of the plan, all in flight;
        the largest replica size per partition. No Metadata read: the console's preview takes the
        current replicas from its cached snapshot (the start re-reads them), so the floor takes
        them from what it knows as well."""
        from kafka.protocol.admin import DescribeClusterRequest, DescribeLogDirsRequest

        T = DescribeLogDirsRequest.DescribableLogDirTopic
        per_broker: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for t, p in plan:
            for b in self.current[(t, p)]:
                per_broker[b][t].append(p)
        asks = [
            (DescribeClusterRequest(include_cluster_authorized_operations=False), None),
            (self._listed(plan), None),
        ] + [
            (DescribeLogDirsRequest(topics=[T(topic=t, partitions=ps) for t, ps in tps.items()]), b)
            for b, tps in per_broker.items()
        ]
        answers = self.kp.start(asks)
        sizes: dict = {}
        for i, answer in answers:
            if i < 2:
                continue
            for d in answer.results:
                for t in d.topics:
                    for x in t.partitions:
                        key = (t.name, x.partition_index)
                        sizes[key] = max(sizes.get(key, 0), x.partition_size)
        assert len(sizes) == len(plan), (len(sizes), len(plan))
        return sizes

    def execute(self, plan: dict) -> dict:
        """The tool's requests for ``plan`` (partition -> target replicas); the brokers' throttles set."""
        from kafka.protocol.admin import (
            AlterPartitionReassignmentsRequest,
            DescribeClusterRequest,
            IncrementalAlterConfigsRequest,
            ListPartitionReassignmentsRequest,
        )

        kp = self.kp
        STEPS["runs"] += 1
        t0 = time.perf_counter()
        current_moves = kp.send(ListPartitionReassignmentsRequest(timeout_ms=60_000, topics=None))
        STEPS["list reassignments"] += time.perf_counter() - t0
        assert current_moves.error_code == 0 and not current_moves.topics, "a reassignment is in progress"
        nodes = {
            b.broker_id
            for b in kp.send(DescribeClusterRequest(include_cluster_authorized_operations=False)).brokers
        }
        involved = {b for reps in plan.values() for b in reps}
        assert involved <= nodes, involved - nodes
        topics = sorted({t for t, _ in plan})
        t0 = time.perf_counter()
        current = self.metadata(plan)  # the plan names every topic: the whole-cluster answer
        STEPS["metadata (wire)"] += time.perf_counter() - t0
        leader, follower, brokers = defaultdict(list), defaultdict(list), set()
        for (t, p), target in plan.items():
            sources = current[(t, p)]
            dests = [b for b in target if b not in sources]
            leader[t].extend(f"{p}:{b}" for b in sources)
            follower[t].extend(f"{p}:{b}" for b in dests)
            brokers.update(sources)
            brokers.update(dests)
        R = IncrementalAlterConfigsRequest.AlterConfigsResource
        C = R.AlterableConfig
        topic_request = IncrementalAlterConfigsRequest(
            resources=[
                R(
                    resource_type=2,
                    resource_name=t,
                    configs=[
                        C(
                            name="leader.replication.throttled.replicas",
                            config_operation=0,
                            value=",".join(leader[t]),
                        ),
                        C(
                            name="follower.replication.throttled.replicas",
                            config_operation=0,
                            value=",".join(follower[t]),
                        ),
                    ],
                )
                for t in topics
            ],
            validate_only=False,
        )
        t0 = time.perf_counter()
        answer = kp.send(topic_request)
        assert not any(r.error_code for r in answer.responses), answer
        STEPS["topic throttles"] += time.perf_counter() - t0
        rate = str(THROTTLE)
        broker_requests = [
            (
                IncrementalAlterConfigsRequest(
                    resources=[
                        R(
                            resource_type=4,
                            resource_name=str(b),
                            configs=[
                                C(name="leader.replication.throttled.rate", config_operation=0, value=rate),
                                C(name="follower.replication.throttled.rate", config_operation=0, value=rate),
                            ],
                        )
                    ],
                    validate_only=False,
                ),
                b,
            )
            for b in sorted(brokers)
        ]
        for answer in kp.send_many(broker_requests):
            assert not any(r.error_code for r in answer.responses), answer
        T = AlterPartitionReassignmentsRequest.ReassignableTopic
        P = T.ReassignablePartition
        t0 = time.perf_counter()
        by_topic = defaultdict(list)
        for (t, p), target in plan.items():
            by_topic[t].append(P(partition_index=p, replicas=list(target)))
        answer = kp.send(
            AlterPartitionReassignmentsRequest(
                timeout_ms=60_000, topics=[T(name=t, partitions=ps) for t, ps in by_topic.items()]
            )
        )
        assert answer.error_code == 0 and not any(
            p.error_code for t in answer.responses for p in t.partitions
        ), answer
        STEPS["alter reassignments"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        self.insert_rows(plan, current)
        STEPS["insert"] += time.perf_counter() - t0
        return {"brokers": sorted(brokers), "topics": topics}

    def cleanup(self, gw):
        from console.kafka import ConfigChange, ConfigResource, TopicPartition

        def run(plan: dict, done: dict) -> None:
            bad = [
                tp
                for tp, v in gw.alter_partition_reassignments(
                    {TopicPartition(t, p): None for t, p in plan}
                ).items()
                if v.__class__.__name__ != "Ok"
            ]
            assert not bad, bad[:3]
            changes = {
                ConfigResource("TOPIC", t): [
                    ConfigChange("leader.replication.throttled.replicas", "DELETE"),
                    ConfigChange("follower.replication.throttled.replicas", "DELETE"),
                ]
                for t in done["topics"]
            }
            changes.update(
                {
                    ConfigResource("BROKER", str(b)): [
                        ConfigChange("leader.replication.throttled.rate", "DELETE"),
                        ConfigChange("follower.replication.throttled.rate", "DELETE"),
                    ]
                    for b in done["brokers"]
                }
            )
            out = gw.incremental_alter_configs(changes)
            assert all(v.__class__.__name__ == "Ok" for v in out.values()), out
            self.db.execute("DELETE FROM bench_plan_rows")

        return run


def raw_submit(gw, plan) -> float:
    from console.kafka import TopicPartition
    from console.reassignment.worker import SUBMIT_BATCH

    items = [(TopicPartition(t, p), list(r)) for (t, p), r in plan.items()]
    start = time.perf_counter()
    for i in range(0, len(items), SUBMIT_BATCH):
        gw.alter_partition_reassignments(dict(items[i : i + SUBMIT_BATCH]))
    return time.perf_counter() - start


def main_real(bootstrap: str) -> None:
    """The same comparison against a real cluster (``BENCH_KAFKA_BOOTSTRAP_SERVERS``, 3+ brokers).

    A topic of 2 x (RUNS + 1) chunks of ``BENCH_REAL_PARTITIONS`` (default 1,000) RF 2 partitions
    is created; console and raw runs alternate over disjoint chunks, each moving every
    partition's second replica to the third broker, without throttles (real data would move).
    The topic is deleted at the end.
    """
    from console.kafka import NewTopic

    n = int(os.environ.get("BENCH_REAL_PARTITIONS", "1000"))
    _client, cluster_row = setup_console(bootstrap)
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from console.clusters.actions import gateway_for

    settings.OPERATION_DISPATCHER = "bench.bench_reassign_submit.no_queue"
    actor = get_user_model().objects.get(username="bench")
    gw = gateway_for(cluster_row)
    brokers = sorted(b.id for b in gw.describe_cluster().brokers)[:3]
    if len(brokers) < 3:
        raise SystemExit("the real-cluster run needs at least 3 brokers")
    name = f"bench-reassign-{os.getpid()}"
    chunks = 2 * (RUNS + 1)
    assign = [[brokers[p % 3], brokers[(p + 1) % 3]] for p in range(chunks * n)]
    created = gw.create_topics([NewTopic(name, -1, -1, assign, {})])[name]
    if created.__class__.__name__ != "Ok":
        raise SystemExit(f"could not create {name}: {created}")

    def plan(chunk: int) -> dict:
        return {(name, p): (assign[p][0], brokers[(p + 2) % 3]) for p in range(chunk * n, (chunk + 1) * n)}

    class _NoSandbox:
        def shutdown(self) -> None:
            pass

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # every partition has a leader before anything moves
            md = gw.describe_topics([name]).get(name)
            if getattr(md, "partitions", None) and all(p.leader >= 0 for p in md.partitions):
                break
            time.sleep(1)
        console_submit(cluster_row, actor, plan(0), throttle=None)  # warm-up (service path)
        raw_submit(gw, plan(1))
        console_times, raw_times = [], []
        for run in range(RUNS):
            console_times.append(console_submit(cluster_row, actor, plan(2 + 2 * run), throttle=None)[0])
            raw_times.append(raw_submit(gw, plan(3 + 2 * run)))
        c, r = statistics.median(console_times), statistics.median(raw_times)
        print(f"real cluster {bootstrap}: {n} partitions per run")
        print(f"console validate+submit: median {c:.3f}s ({console_times})")
        print(f"raw AlterPartitionReassignments batches: median {r:.3f}s ({raw_times})")
        ratio = c / r
    finally:
        gw.delete_topics([name])
        teardown(_NoSandbox())
    gate("reassign_submit", ratio, GOAL)


def start_cleanup(form: dict, rid: int) -> None:
    """Untimed, after a start alone: nothing reached Kafka; its rows closed, its operation cancelled."""
    from console.models import Operation, OperationState
    from console.models.reassignment import PartitionState, Reassignment, Stage
    from console.reassignment.finish import close_rows
    from console.reassignment.store import set_stage

    r = Reassignment.objects.select_related("cluster", "operation").get(pk=rid)
    assert r.partitions.count() == MOVE, r.partitions.count()
    close_rows(r, PartitionState.CANCELLED, "bench cleanup")
    set_stage(r, Stage.FINISHED)
    Operation.objects.filter(pk=r.operation_id).update(state=OperationState.CANCELLED)


def main() -> None:
    bootstrap = os.environ.get("BENCH_KAFKA_BOOTSTRAP_SERVERS")
    if bootstrap:
        return main_real(bootstrap)
    started = time.perf_counter()
    sandbox, cluster_row, actor, gw, client = setup()
    try:
        from django.db import connection

        from console.reassignment import planner

        floor = ToolFloor(sandbox.bootstrap_servers, connection.settings_dict["NAME"])
        chunks = itertools.count()

        def console_form() -> dict:
            plan = plan_for(next(chunks) % CHUNKS)
            return {"intent": "json", "plan_json": planner.export_plan(plan), "throttle_mb": "50"}

        def raw_plan() -> dict:
            return plan_for(next(chunks) % CHUNKS)

        print(
            f"sandbox (own process, 100,000 partitions) + console in {time.perf_counter() - started:.1f}s",
            flush=True,
        )
        ours, theirs = (
            "console: form post -> operation -> moving",
            "floor: kafka-reassign-partitions --execute --throttle + INSERT",
        )

        def settled(cleanup):
            """The cleanup, then one untimed Metadata read: the sandbox encodes its answer anew
            after a change (~0.8 s at 100,000 partitions, where Kafka serves it from its image),
            and neither side's next run should pay that."""

            def run(arg, result) -> None:
                cleanup(arg, result)
                floor.metadata({})

            return run

        freeze()
        m = alternate(
            {
                ours: (console_form, form_path(client, cluster_row), settled(console_cleanup(gw))),
                # the collector paused throughout, as the console pauses it for its start (the
                # cluster read included) and its throttle and submit steps
                theirs: (raw_plan, gc_paused(floor.execute), settled(floor.cleanup(gw))),
                # shown, not gated: the decoded read the floor's Metadata was before (for scale)
                "shown: confluent list_topics of the same Metadata (decoded)": gc_paused(
                    lambda: floor.ck.list_topics(timeout=120)
                ),
            },
            runs=RUNS,
        )
        m.report()
        print(m.ratios(ours, theirs))
        runs = STEPS.pop("runs")  # its warm-up run included
        print(
            "floor per request (mean of its runs): "
            + ", ".join(f"{k} {v / runs:.3f}s" for k, v in STEPS.items())
        )
        ratio = m.median(ours) / m.median(theirs)

        start_ours, start_floor = "console start POST (redirect)", "floor: the start's raw calls + INSERT"
        ms = alternate(
            {
                start_ours: (console_form, start_post(client, cluster_row), start_cleanup),
                start_floor: (raw_plan, gc_paused(floor.start), floor.clear_rows),
            },
            runs=RUNS,
        )
        ms.report()
        print(ms.ratios(start_ours, start_floor))
        preview_ours, preview_floor = "console preview POST (the diff page)", "floor: the preview's raw calls"
        mp = alternate(
            {
                preview_ours: (console_form, preview(client, cluster_row)),
                preview_floor: (raw_plan, gc_paused(floor.preview)),
            },
            runs=RUNS,
        )
        mp.report()
        print(mp.ratios(preview_ours, preview_floor))
        goals = [
            ("start POST / its raw calls (median)", ms.median(start_ours) / ms.median(start_floor), GOAL),
            (
                "preview POST / its raw calls (median)",
                mp.median(preview_ours) / mp.median(preview_floor),
                GOAL,
            ),
        ]
        from console.models.reassignment import Reassignment

        open_rows = Reassignment.objects.exclude(stage="finished").count()
        print(
            f"open reassignments left by the runs: {open_rows}; total wall {time.perf_counter() - started:.0f}s"
        )
    finally:
        teardown(sandbox)
    gate("reassign_submit", ratio, GOAL, goals)


if __name__ == "__main__":
    main()
