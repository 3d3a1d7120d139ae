"""The submit-time conflict check between console reassignments (console_conflicts)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.models import Cluster, Operation
from console.models.reassignment import PartitionState, Reassignment, ReassignmentPartition
from console.reassignment.actions import console_conflicts

pytestmark = pytest.mark.django_db


def _reassignment(cluster, partitions, op_state="running", state=PartitionState.PENDING):
    op = Operation.objects.create(kind="reassignment.execute", cluster=cluster, state=op_state)
    r = Reassignment.objects.create(operation=op, cluster=cluster, partitions_total=len(partitions))
    ReassignmentPartition.objects.bulk_create(
        ReassignmentPartition(reassignment=r, topic=t, partition=p, original=[1], target=[2], state=state)
        for t, p in partitions
    )
    return r


def test_pending_partitions_held_by_another_unfinished_reassignment_name_the_oldest_holder(offline_cluster):
    other_cluster = Cluster.objects.create(name="elsewhere", bootstrap_servers="127.0.0.1:1")
    older = _reassignment(offline_cluster, [("a", 0), ("a", 1)], state=PartitionState.MOVING)
    newer = _reassignment(offline_cluster, [("a", 1), ("b", 0)], op_state="pending")
    _reassignment(offline_cluster, [("b", 1)], op_state="succeeded", state=PartitionState.MOVING)  # finished
    _reassignment(offline_cluster, [("b", 2)], state=PartitionState.DONE)  # that partition has settled
    _reassignment(other_cluster, [("b", 3)], state=PartitionState.MOVING)  # another cluster's partition
    mine = _reassignment(
        offline_cluster, [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2), ("b", 3), ("c", 0)]
    )
    assert console_conflicts(mine) == {("a", 0): older.pk, ("a", 1): older.pk, ("b", 0): newer.pk}
    # rows past pending (already submitted) are not checked again
    mine.partitions.filter(topic="a").update(state=PartitionState.MOVING)
    assert console_conflicts(mine) == {("b", 0): newer.pk}


def test_without_another_unfinished_reassignment_nothing_is_probed(offline_cluster):
    _reassignment(offline_cluster, [("a", 0)], op_state="succeeded", state=PartitionState.MOVING)
    mine = _reassignment(offline_cluster, [("a", 0), ("a", 1)])
    with CaptureQueriesContext(connection) as ctx:
        assert console_conflicts(mine) == {}
    (query,) = [q["sql"] for q in ctx.captured_queries]
    assert "console_reassignmentpartition" not in query  # one look at the reassignments, no row probed


def test_the_check_probes_the_topic_partition_index(offline_cluster):
    _reassignment(offline_cluster, [("b", 0)])  # another unfinished one: the rows are probed
    mine = _reassignment(offline_cluster, [("a", 0)])
    with CaptureQueriesContext(connection) as ctx:
        console_conflicts(mine)
    _exists, query = [q["sql"] for q in ctx.captured_queries]
    if connection.vendor != "sqlite":
        return  # the plan check reads SQLite's EXPLAIN QUERY PLAN
    with connection.cursor() as cur:
        cur.execute("EXPLAIN QUERY PLAN " + query)
        plan = " ".join(str(row) for row in cur.fetchall())
    assert "reassign_part_tp" in plan, plan


def test_a_plans_view_reads_only_its_partitions_and_equals_the_whole_view(kafka_cluster, sandbox):
    from console.clusters.actions import gateway_for
    from console.reassignment.actions import read_cluster
    from console.topics import cache as metadata_cache

    names = ["plan-view-a", "plan-view-b"]
    for name in names:
        sandbox.create_topic(name, partitions=4, replication_factor=2)
    try:
        plan = {(names[0], 1): (1, 2), (names[0], 3): (2, 3), (names[1], 0): (3, 1)}
        plan.update({("plan-view-gone", 0): (1, 2), (names[1], 9): (1, 2)})  # no such topic / partition
        metadata_cache.invalidate(kafka_cluster)
        named = read_cluster(kafka_cluster, cached=False, only=plan)
        # without a fresh snapshot a plan's topics are read by name: the cluster is not read whole
        assert metadata_cache.peek(kafka_cluster) is None
        metadata_cache.get_snapshot(kafka_cluster)
        part = read_cluster(kafka_cluster, only=plan)  # with one, from it
        topics = metadata_cache.peek(kafka_cluster).metadata.topics
        assert all(t._partitions is None for t in topics), "a plan's view built a topic's partitions"
        whole = read_cluster(kafka_cluster)  # the same snapshot, every partition built
        known = [tp for tp in plan if tp in whole.assignment]
        assert known == list(plan)[:3]
        for view in (named, part):
            assert view.assignment == {tp: whole.assignment[tp] for tp in known}
            assert view.leaders == {tp: whole.leaders[tp] for tp in known}
            assert all(isinstance(r, tuple) and r for r in view.assignment.values())
        assert part.topics == whole.topics and set(names) <= part.topics
        assert named.topics == set(names)  # the plan's topics that exist: "plan-view-gone" does not
    finally:
        gateway_for(kafka_cluster).delete_topics(names)


def test_a_plans_named_read_refuses_what_it_cannot_check():
    """A missing topic is left out (the checks say it does not exist); any other error on one of
    the plan's topics (not authorised, no answer) is raised, never read as "no such topic"."""
    from console.kafka import KafkaOperationError, TopicMetadata
    from console.reassignment.actions import _named_topics

    here = TopicMetadata("here", ())
    gone = KafkaOperationError(3, "UNKNOWN_TOPIC_OR_PARTITION", "no such topic")
    denied = KafkaOperationError(29, "TOPIC_AUTHORIZATION_FAILED", "not allowed")

    class Gateway:
        def __init__(self, answers):
            self.answers = answers

        def describe_topics(self, names):
            return {n: self.answers[n] for n in names}

    assert _named_topics(Gateway({"here": here, "gone": gone}), {"here", "gone"}) == {"here": here}
    with pytest.raises(KafkaOperationError) as caught:
        _named_topics(Gateway({"here": here, "secret": denied}), {"here", "secret"})
    assert caught.value.name == "TOPIC_AUTHORIZATION_FAILED"
