"""One alert evaluation round of every rule over a fleet, against the raw reads it needs.

World: ``bench/fleet_world.py``: CLUSTERS (50) sandbox clusters of PARTITIONS (100,000) partitions on
BROKERS (3) brokers each (RF 3, sized logs: end offsets), served by one sandbox process of their own,
registered in a throwaway console. On each cluster a consumer group commits GROUP_PARTITIONS (100)
partitions LAG (10) records behind their end, so the group rules read offsets and records.

Console side: one round as beat starts it (``evaluate.start_round``: every cluster handed to the
evaluator's ALERTS_THREADS threads), timed until the evaluator is idle: per cluster the rules' settings,
the live reads (Metadata of every partition, the overview's DescribeCluster, broker pings,
DescribeQuorum and TLS probe, DescribeQuorum again for the voters, the groups' OffsetFetch,
ListOffsets of their partitions and a Fetch of the lagging ones' records, ListPartitionReassignments,
the brokers' DescribeConfigs), the counts, the forecast and audit-chain checks, and the lifecycle's
database work. The topics' min ISR is read once per ALERTS_CONFIGS_MAX_AGE_S: the warm-up round
reads it, the timed rounds are the steady state (as every round but one in ten minutes is).

Floor (``raw_clients.Wire``): the same requests, every cluster's at once, written to plain sockets
held open across runs, every answer read whole into a buffer and nothing decoded (Metadata v12 of all
topics, DescribeCluster v2, DescribeQuorum v1, ApiVersions v3 to each broker, ListGroups v4 to each
broker, OffsetFetch v8 of the group, ListOffsets v7 of its partitions and Fetch v12 of its lagging
ones per leader, ListPartitionReassignments v0, DescribeConfigs v4 of each broker and the default).
RUNS (5) alternating runs after a warm-up of each, medians gated: round / floor <= 1.5. Also printed
(diagnostics, not gated): the CPU seconds of this process and of the sandbox's per call of each side.
Prints ``RESULT alerts_eval ratio=<round/floor> goal<=1.5`` last; exit 1 above.
Smaller runs: ``BENCH_FLEET_CLUSTERS=5 BENCH_ALERTS_PARTITIONS=20000``.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.fleet_world import TOPIC_PREFIX, FleetWorld, fleet_size  # noqa: E402
from bench.harness import compare, gate, gc_paused  # noqa: E402
from bench.raw_clients import Wire  # noqa: E402

CLUSTERS = fleet_size(50)
PARTITIONS = int(os.environ.get("BENCH_ALERTS_PARTITIONS", "100000"))
PER_TOPIC = 100
BROKERS = 3
GROUP = "bench.consumer"
GROUP_PARTITIONS = 100
LAG = 10
TIME_LAG_READS = 32
RUNS = 5
GOAL = 1.5
ROUND_TIMEOUT_S = 900.0
ROUND, FLOOR = "console evaluation round", "raw socket reads (every cluster at once)"


def group_offsets() -> dict[tuple[str, int], int]:
    """The bench group's partitions (the first topics'), committed at 0 until ``commit`` moves them."""
    return {(f"{TOPIC_PREFIX}{p // PER_TOPIC:05d}", p % PER_TOPIC): 0 for p in range(GROUP_PARTITIONS)}


def commit_behind(world: FleetWorld) -> dict[str, dict]:
    """Each cluster's group LAG records behind its partitions' ends; returns, per cluster, what the
    floor asks: {"leaders": {(topic, p): leader}, "ends": {(topic, p): end}, "coordinator": id}."""
    from console.clusters.actions import gateway_for
    from console.kafka import TopicPartition

    plans = {}
    for name in world.names:
        gw = gateway_for(world.clusters[name])
        tps = [TopicPartition(t, p) for t, p in group_offsets()]
        ends = {(tp.topic, tp.partition): v.offset for tp, v in gw.list_offsets(tps, "latest").items()}
        committed = {tp: max(0, ends[tp] - LAG) for tp in ends}
        world.call_on(name, "add_group", GROUP, None, committed)
        layout = gw.partition_layout()
        leaders = {tp: layout.leader[layout.row_of(*tp)] for tp in committed}
        (listing,) = [g for g in gw.list_consumer_groups() if g.group_id == GROUP]
        plans[name] = {"leaders": leaders, "committed": committed, "coordinator": listing.coordinator}
    return plans


def raw_requests(plan: dict, brokers: list[int]) -> list:
    """``[(broker index, request, version)]``: one cluster's round of reads, all in flight at once."""
    from kafka.protocol.admin import (
        DescribeClusterRequest,
        DescribeConfigsRequest,
        DescribeQuorumRequest,
        ListPartitionReassignmentsRequest,
    )
    from kafka.protocol.admin.groups import ListGroupsRequest
    from kafka.protocol.consumer.group import OffsetFetchRequest
    from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

    from bench.raw_clients import raw_list_offsets
    from console.kafka.alert_reads import fetch_request

    index = {b: i for i, b in enumerate(brokers)}
    q = DescribeQuorumRequest.TopicData
    out = [
        (0, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12),
        (1, DescribeClusterRequest(include_cluster_authorized_operations=False, endpoint_type=1, include_fenced_brokers=True), 2),
        (2, DescribeQuorumRequest(topics=[q(topic_name="__cluster_metadata", partitions=[q.PartitionData(partition_index=0)])]), 1),
        (0, ListPartitionReassignmentsRequest(timeout_ms=60_000, topics=None), 0),
    ]  # fmt: skip
    g = OffsetFetchRequest.OffsetFetchRequestGroup
    out.append(
        (
            index[plan["coordinator"]],
            OffsetFetchRequest(groups=[g(group_id=GROUP, topics=None)], require_stable=False),
            8,
        )
    )
    res = DescribeConfigsRequest.DescribeConfigsResource
    for b in brokers:
        out.append(
            (index[b], ApiVersionsRequest(client_software_name="bench", client_software_version="1"), 3)
        )
        out.append((index[b], ListGroupsRequest(states_filter=[]), 4))
        rates = ["leader.replication.throttled.rate", "follower.replication.throttled.rate"]
        names = [str(b)] + ([""] if b == brokers[0] else [])  # and the cluster-wide default, once
        configs = [res(resource_type=4, resource_name=n, configuration_keys=rates) for n in names]
        out.append(
            (
                index[b],
                DescribeConfigsRequest(
                    resources=configs, include_synonyms=False, include_documentation=False
                ),
                4,
            )
        )
    by_leader: dict[int, dict] = {}
    for (topic, p), leader in plan["leaders"].items():
        by_leader.setdefault(leader, {}).setdefault(topic, []).append(p)
    behind = sorted(plan["committed"])[:TIME_LAG_READS]
    for leader, parts in by_leader.items():
        out.append((index[leader], raw_list_offsets(parts, -1), 7))
        reads: dict[str, list] = {}
        for tp in behind:
            if plan["leaders"][tp] == leader:
                reads.setdefault(tp[0], []).append((tp[1], plan["committed"][tp]))
        if reads:
            out.append((index[leader], fetch_request(reads, 64 * 1024), 12))
    return out  # fmt: skip


def main() -> None:
    os.environ.setdefault("ALERTS_CLUSTER_TIMEOUT_S", "600")
    with FleetWorld.start(CLUSTERS, partitions=PARTITIONS, per_topic=PER_TOPIC, brokers=BROKERS, sized=True, timeout_s=300) as world:  # fmt: skip
        from console.alerts import evaluate
        from console.models.alerts import Alert

        plans = commit_behind(world)
        brokers = (
            sorted(world.described[world.names[0]]["brokers"])
            if "brokers" in world.described[world.names[0]]
            else [1, 2, 3]
        )
        wires = {name: Wire(world.servers[name], sockets_per_broker=8) for name in world.names}
        requests = {name: raw_requests(plans[name], brokers) for name in world.names}
        sizes = {name: wires[name].exchange(requests[name]) for name in world.names}
        print(
            f"{CLUSTERS} clusters x {PARTITIONS:,} partitions: {sum(map(sum, sizes.values())) / 1e6:.1f} MB of answers a round"
        )

        pool = evaluate.evaluator()
        cpu = CpuSeconds(world.sandbox._proc.pid)

        @cpu.counted(ROUND)
        def one_round() -> None:
            assert len(evaluate.start_round()) == CLUSTERS, "a cluster was still held"
            assert pool.idle(ROUND_TIMEOUT_S), "the round did not end"

        @cpu.counted(FLOOR)
        def floor() -> None:
            exchange_all(wires, requests)

        before = rss_mb()
        started = time.perf_counter()
        one_round()  # the topics' min ISR read once (kept for ALERTS_CONFIGS_MAX_AGE_S)
        print(f"first round (reads the topics' configs too): {time.perf_counter() - started:.2f}s")
        fired = sorted(set(Alert.objects.values_list("rule", flat=True)))
        print(f"alerts after a round: {Alert.objects.count()} ({', '.join(fired)})")
        cpu.clear()  # the runs' only
        ratio = compare({ROUND: one_round}, {FLOOR: gc_paused(floor)}, runs=RUNS)
        cpu.report()
        print(
            f"RSS: {before:.0f} MB before the first round, {rss_mb():.0f} MB after the runs (the evaluator's open gateways)"
        )
        for wire in wires.values():
            wire.close()
    gate("alerts_eval", ratio, GOAL)


class CpuSeconds:
    """CPU seconds of this process (the console's side, or the floor's sockets) and of the sandbox's
    process per call of each side (diagnostics only: two reads of /proc around the call)."""

    def __init__(self, sandbox_pid: int) -> None:
        self.sandbox_pid = sandbox_pid
        self.seen: dict[str, list[tuple[float, float]]] = {}

    def _sandbox(self) -> float:
        with open(f"/proc/{self.sandbox_pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def counted(self, name: str):
        def wrap(fn):
            def call():
                ours, theirs = time.process_time(), self._sandbox()
                fn()
                self.seen.setdefault(name, []).append((time.process_time() - ours, self._sandbox() - theirs))

            return call

        return wrap

    def clear(self) -> None:
        self.seen.clear()

    def report(self) -> None:
        import statistics

        for name, rows in self.seen.items():
            rows = rows[1:]  # after compare's warm-up call
            ours = statistics.median(r[0] for r in rows)
            theirs = statistics.median(r[1] for r in rows)
            print(
                f"CPU a call (median of {len(rows)}): {name}: this process {ours:.3f}s, the sandbox {theirs:.3f}s"
            )


def rss_mb() -> float:
    """This process's resident memory now (MB)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def exchange_all(wires: dict, requests: dict) -> None:
    """Every cluster's requests in flight together (one thread a cluster: their sockets are apart)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(wires)) as threads:
        list(threads.map(lambda name: wires[name].exchange(requests[name]), wires))


if __name__ == "__main__":
    main()
