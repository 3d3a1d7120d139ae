"""Dry run + execute of a 10,000-partition offset reset vs the minimal raw calls for the same result.

Estate (``group_setup.build_reset_estate``, the sandbox in a process of its own, clock stopped):
10 brokers, 10 topics x 1,000 partitions, one empty group ``bench-reset`` with a committed offset
in the middle of every partition's log. Before every timed run (console or raw) the offsets are
put back in the middle, outside the timing, and the runs alternate ``--to-earliest`` and
``--to-latest``: every run moves all 10,000 offsets (never a no-op reset).

Console side: ``actions.preview_reset`` (the dry run) then ``actions.reset_offsets`` (execute:
typed confirmation, the plan again, the empty-group check, the audited OffsetCommit). Both sides
know the partition leaders (the console's cached topic snapshot, kept from expiring).

Floor (gated): the least a console can send for the same two steps, the calls
``kafka-consumer-groups.sh --reset-offsets`` makes - ``--dry-run``: DescribeGroups (is the group
empty?) + OffsetFetch (current offsets) + ListOffsets of only the log bound the mode needs
(earliest for --to-earliest, latest for --to-latest; the new offsets), all in flight together;
``--execute``: the same reads again (the group and the log may have moved since the dry run) +
the OffsetCommit. Through the faster (this run's medians) of kafka-python's own client
(``raw_clients.KpRaw``) and blocking sockets with kafka-python's codecs. Shown, not gated: the
console's execute alone against the raw --execute alone, and the bare OffsetCommit of the 10,000
offsets (kafka-python, sockets, confluent-kafka) - the issue's old floor, which no console can
meet: the reads any reset needs are ~4-6x it - and the same two steps reading both log bounds (the
console's preview shows lag before and after, which needs the log end in --to-earliest too).

7 alternating runs; setup frozen with ``gc.freeze()``, one process and one collector setting for
both sides; min / median / max and per-run ratios printed, then where the console's time goes
(one run timed call by call, and a profile).
Prints ``RESULT group_reset ratio=<console/minimal calls> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.group_setup import (  # noqa: E402
    RESET_GROUP,
    RESET_PARTITIONS,
    RESET_TOPICS,
    Phases,
    RemoteGroupSandbox,
    SocketClient,
    committed_at,
    profile_top,
)
from bench.harness import Runs, freeze, gate  # noqa: E402
from bench.raw_clients import KpRaw, raw_list_offsets  # noqa: E402

RUNS = 7
GOAL = 1.5
TARGETS = ("to-earliest", "to-latest")  # alternated: every run moves every offset
BARE = ("bare OffsetCommit, kafka-python", "bare OffsetCommit, sockets", "bare OffsetCommit, confluent-kafka")
FULL = (
    "raw dry run + execute (2x reads, one bound + OffsetCommit), kafka-python",
    "raw dry run + execute, sockets",
)
EXECUTE = "raw --execute alone (reads, one bound + OffsetCommit), kafka-python"
BOTH_BOUNDS = "raw dry run + execute reading both log bounds, sockets"
TIMESTAMP = {"to-earliest": -2, "to-latest": -1}  # ListOffsets: the one log bound each mode needs


def partitions() -> list[tuple[str, int]]:
    return [(f"reset-{t:03d}", p) for t in range(RESET_TOPICS) for p in range(RESET_PARTITIONS)]


def mid_offsets() -> dict[tuple[str, int], int]:
    return {
        (f"reset-{t:03d}", p): committed_at(t, p)
        for t in range(RESET_TOPICS)
        for p in range(RESET_PARTITIONS)
    }


# -- raw requests (kafka-python's protocol classes) -----------------------------------------------


def commit_request(offsets: dict[tuple[str, int], int]):
    from kafka.protocol.consumer.group import OffsetCommitRequest

    topic_cls = OffsetCommitRequest.OffsetCommitRequestTopic
    part_cls = topic_cls.OffsetCommitRequestPartition
    by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for (t, p), o in offsets.items():
        by_topic[t].append((p, o))
    return OffsetCommitRequest(
        group_id=RESET_GROUP,
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        topics=[
            topic_cls(
                name=t,
                partitions=[
                    part_cls(partition_index=p, committed_offset=o, committed_metadata="") for p, o in ps
                ],
            )
            for t, ps in by_topic.items()
        ],
        max_version=9,
    )


def check_commit(response) -> int:
    errors = sum(1 for t in response.topics for p in t.partitions if p.error_code)
    assert not errors, f"{errors} partitions refused the commit"
    return sum(len(t.partitions) for t in response.topics)


def _reads(coordinator: int, by_leader: dict[int, dict[str, list[int]]], target: str, both: bool = False):
    """The reads of one reset step: DescribeGroups + OffsetFetch to the coordinator, ListOffsets of
    the one log bound ``target`` needs to every leader, all in flight together (none depends on
    another)."""
    from kafka.protocol.admin.groups import DescribeGroupsRequest
    from kafka.protocol.consumer.group import OffsetFetchRequest

    group_cls = OffsetFetchRequest.OffsetFetchRequestGroup

    asks = [
        (DescribeGroupsRequest(groups=[RESET_GROUP], include_authorized_operations=False), coordinator),
        (
            OffsetFetchRequest(
                groups=[group_cls(group_id=RESET_GROUP, topics=None)],
                require_stable=False,
                min_version=8,
                max_version=9,
            ),
            coordinator,
        ),
    ]
    for ts in (-2, -1) if both else (TIMESTAMP[target],):  # both: earliest, then latest
        asks += [(raw_list_offsets(bt, ts), b) for b, bt in by_leader.items()]
    return asks


def raw_reset_step(send_many, coordinator, by_leader, target: str, commit: bool, both: bool = False) -> int:
    """One step of kafka-consumer-groups --reset-offsets done with raw calls: the reads, the new
    offsets (log start or end), and with ``commit`` the OffsetCommit. ``both``: both log bounds
    read, as a preview showing lag before and after needs."""
    answers = send_many(_reads(coordinator, by_leader, target, both))
    described, fetched, bounds = answers[0], answers[1], answers[2:]
    if both:
        half = len(bounds) // 2
        bounds = bounds[:half] if target == "to-earliest" else bounds[half:]
    assert not described.groups[0].members
    current = {
        (t.name, p.partition_index): p.committed_offset
        for t in fetched.groups[0].topics
        for p in t.partitions
    }
    new = {(t.name, p.partition_index): p.offset for r in bounds for t in r.topics for p in t.partitions}
    assert len(new) == len(current) == RESET_PARTITIONS * RESET_TOPICS
    if commit:
        return check_commit(send_many([(commit_request(new), coordinator)])[0])
    return len(new)


def confluent_commit(admin, offsets) -> int:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    req = ConsumerGroupTopicPartitions(
        RESET_GROUP, [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
    )
    got = admin.alter_consumer_group_offsets([req], request_timeout=60)[RESET_GROUP].result()
    bad = [tp for tp in got.topic_partitions if tp.error]
    assert not bad, bad[:3]
    return len(got.topic_partitions)


# -- the bench -------------------------------------------------------------------------------------


def main() -> None:
    from bench.harness import setup_console, teardown

    os.environ["TOPIC_METADATA_CACHE_S"] = "86400"  # leaders known on both sides, as in the list bench
    started = time.perf_counter()
    sandbox = RemoteGroupSandbox("reset")
    sock = admin = None
    try:
        _client, cluster = setup_console(sandbox.bootstrap_servers)
        logging.getLogger("kafka").setLevel(logging.ERROR)
        print(f"sandbox (own process) + console set up in {time.perf_counter() - started:.1f}s", flush=True)
        from confluent_kafka.admin import AdminClient
        from django.contrib.auth import get_user_model

        from console.audit import outcomes as outcomes_log
        from console.clusters.actions import gateway_for
        from console.groups import actions, core
        from console.groups.core import ResetSpec
        from console.topics import cache as metadata_cache

        actor = get_user_model().objects.get(username="bench")
        gw = gateway_for(cluster)
        kp = KpRaw(sandbox.bootstrap_servers)  # kafka-python's own client, not the console's transport
        snap = metadata_cache.get_snapshot(cluster)
        by_leader: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for t in {t for t, _ in partitions()}:
            for x in snap.by_name[t].partitions:
                by_leader[x.leader][t].append(x.id)
        coordinator = gw._coordinator_of(RESET_GROUP)
        addresses = {b.node_id: (b.host, b.port) for b in kp.manager.cluster.brokers()}
        sock = SocketClient(addresses, kp.manager.broker_version_data)
        admin = AdminClient({"bootstrap.servers": sandbox.bootstrap_servers})
        admin.list_topics(timeout=60)

        mid = mid_offsets()

        def restore() -> None:
            """Outside the timing: every committed offset back in the middle of its log."""
            check_commit(kp.send_many([(commit_request(mid), coordinator)])[0])

        bounds = {}
        for target in TARGETS:
            restore()
            plan = actions.preview_reset(
                actor=actor, cluster=cluster, group_id=RESET_GROUP, spec=ResetSpec(mode=target)
            ).plan
            assert plan.changed == len(mid), (target, plan.changed)
            bounds[target] = plan.offsets

        def console(target: str) -> tuple[float, float]:
            spec = ResetSpec(mode=target)
            t0 = time.perf_counter()
            preview = actions.preview_reset(actor=actor, cluster=cluster, group_id=RESET_GROUP, spec=spec)
            t1 = time.perf_counter()
            result = actions.reset_offsets(
                actor=actor, cluster=cluster, group_id=RESET_GROUP, spec=spec, confirmation=RESET_GROUP
            )
            t2 = time.perf_counter()
            assert preview.plan.changed == len(mid) and result.all_ok and result.ok_count == len(mid)
            return t1 - t0, t2 - t1

        def both_steps(send_many, both: bool = False):
            def run(target: str) -> None:
                raw_reset_step(send_many, coordinator, by_leader, target, False, both)  # --dry-run
                raw_reset_step(send_many, coordinator, by_leader, target, True, both)  # --execute

            return run

        floors = {
            BARE[0]: lambda target: check_commit(
                kp.send_many([(commit_request(bounds[target]), coordinator)])[0]
            ),
            BARE[1]: lambda target: check_commit(
                sock.send_many([(commit_request(bounds[target]), coordinator)])[0]
            ),
            BARE[2]: lambda target: confluent_commit(admin, bounds[target]),
            "raw reads only (a dry run), kafka-python": lambda target: raw_reset_step(
                kp.send_many, coordinator, by_leader, target, False
            ),
            EXECUTE: lambda target: raw_reset_step(kp.send_many, coordinator, by_leader, target, True),
            FULL[0]: both_steps(kp.send_many),
            FULL[1]: both_steps(sock.send_many),
            BOTH_BOUNDS: both_steps(sock.send_many, both=True),
        }
        for fn in floors.values():  # warm-up
            restore()
            fn("to-earliest")
        restore()
        console("to-latest")

        freeze()  # setup out of the cyclic collector, for both sides
        m = Runs()
        for run in range(RUNS):
            target = TARGETS[run % 2]  # fresh state: from the middle of the log to one end, alternately

            def run_console(target=target) -> None:
                restore()
                dry, execute = console(target)
                m.add("console dry run + execute", dry + execute)
                m.add("console dry run (preview_reset)", dry)
                m.add("console execute (reset_offsets)", execute)

            def run_floors(target=target) -> None:
                for name, fn in floors.items():
                    restore()
                    t = time.perf_counter()
                    fn(target)
                    m.add(name, time.perf_counter() - t)

            # which side goes first alternates between runs
            for step in (run_console, run_floors) if run % 2 == 0 else (run_floors, run_console):
                step()

        # Where the console's time goes: one more run with its calls timed one by one, and a profile.
        restore()
        targets = [
            (gw, "_find_coordinators"),
            (gw, "describe_consumer_groups"),
            (gw, "list_consumer_group_offsets"),
            (gw, "list_offsets"),
            (gw, "alter_consumer_group_offsets"),
            (metadata_cache, "get_snapshot"),
            (core, "plan_reset"),
            (outcomes_log, "requested"),
            (outcomes_log, "settle"),
        ]
        with Phases(targets) as ph:
            dry, execute = console("to-earliest")
        print(f"\none console run: dry run {dry:.3f}s + execute {execute:.3f}s; inside them:")
        inner = 0.0
        for name, ts in ph.times.items():
            own = sum(ts)
            if name != "_find_coordinators":  # counted inside describe and commit
                inner += own
            print(f"  {name:<30} x{len(ts)}  {own:.3f}s")
        print(
            f"  {'(the rest: actions.py, offsets.log_offsets_each, core)':<30}     {dry + execute - inner:.3f}s"
        )
        restore()
        print("\nprofile of one console dry run + execute (console code, by cumulative time):")
        print(profile_top(lambda: console("to-latest"), 24, "console/"))
        restore()

        for name in m.times:
            print(m.line(name, name))
        bare = min(BARE, key=m.median)
        full = min(FULL, key=m.median)
        print(f"floor: {full} (the fastest of the minimal calls for dry run + execute)")
        print(m.ratios("console dry run + execute", full))
        print(m.ratios("console execute (reset_offsets)", EXECUTE) + " (shown, not gated)")
        print(m.ratios("console dry run + execute", bare) + " (shown: the issue's old floor, not gated)")
        c = m.median("console dry run + execute")
        print(
            m.ratios("console dry run + execute", BOTH_BOUNDS)
            + " (shown: both bounds, as the console's lag column needs)"
        )
        print(f"that floor is {m.median(full) / m.median(bare):.1f}x the bare OffsetCommit")
        ratio = c / m.median(full)
    finally:
        admin = None  # librdkafka's client goes before the sandbox, without reconnect noise
        if sock is not None:
            sock.close()
        teardown(sandbox)
    gate("group_reset", ratio, GOAL)


if __name__ == "__main__":
    main()
