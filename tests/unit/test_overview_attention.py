"""The cluster overview answers "is this cluster OK, and what needs me?" from what the console keeps:
partition problems by topic, brokers down, the most lagging groups, running operations and changes
waiting for approval, recent changes, disk headroom - and reads nothing more from Kafka for it."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.urls import reverse
from django.utils import timezone

from console.kafka.types import QuorumReplica, TopicHealth
from console.overview import core
from console.requests import actions as requests
from console.telemetry import newest
from console.telemetry import snapshots as telemetry
from console.topics import cache as metadata_cache
from pipeline import lake
from tests.unit.matrix_world import kafka_restored
from tests.unit.reassign_world import clear_throttles, make_topic, start

pytestmark = pytest.mark.django_db
MB = 1024 * 1024


# -- the pure ranking ------------------------------------------------------------------------------


def test_it_ranks_topics_offline_first_then_under_min_isr_then_under_replicated():
    found = [
        ("under", TopicHealth(3, 2, 2, 0, (1, 1, 2))),
        ("offline", TopicHealth(2, 1, 0, 1, (0, 1))),
        ("min-isr", TopicHealth(2, 3, 1, 0, (1, 3))),
    ]
    got = core.problems(found, {"min-isr": 2, "under": 1})
    assert got == core.Problems(
        topics=(
            core.TopicProblem("offline", 2, 1, 0, None),
            core.TopicProblem("min-isr", 2, 0, 1, 1),
            core.TopicProblem("under", 3, 0, 2, 0),
        ),
        count=3,
        min_isr_unknown=1,
    )
    assert core.problems(found, {}, shown=1).more == 2


def test_it_counts_under_min_isr_only_where_the_minimum_is_known():
    assert core.under_min_isr(TopicHealth(3, 3, 1, 0, (3, 1, 2)), 2) == 1
    assert core.under_min_isr(TopicHealth(3, 3, 1, 0, (3, 1, 2)), None) is None
    assert core.under_min_isr(TopicHealth(4, 1, 0, 0), 2) == 4  # a minimum above the replication factor
    assert core.under_min_isr(TopicHealth(4, 3, 0, 0), 2) == 0
    assert core.min_isr_of({"min.insync.replicas": "2"}) == 2
    assert core.min_isr_of({"min.insync.replicas": None}) is None
    assert core.min_isr_of(None) is None


def test_it_names_the_voters_behind_the_leader_by_more_than_the_threshold():
    voters = [QuorumReplica(1, 100, 0, None, None), QuorumReplica(2, 50, 50, None, None)]
    voters.append(QuorumReplica(3, 0, 2000, None, None))
    assert [v.id for v in core.lagging_voters(voters, leader=1, threshold=10)] == [3, 2]
    assert core.lagging_voters(voters, leader=1, threshold=1000) == [voters[2]]


def test_it_adds_up_a_brokers_log_dirs_from_the_newest_snapshot_in_the_file(tmp_path):
    old, new = datetime(2026, 5, 4, 12, 0, tzinfo=UTC), datetime(2026, 5, 4, 12, 5, tzinfo=UTC)
    rows = [
        (old, 1, "/a", 5, 100, 90, None),
        (new, 1, "/a", 10, 100, 60, None),
        (new, 1, "/b", 20, 100, 40, None),
        (new, 2, "/a", 30, None, None, "KIP-827 not supported"),
    ]
    names = ["ts", "broker", "log_dir", "size_bytes", "total_bytes", "usable_bytes", "error"]
    table = pa.Table.from_pylist([{"schema_version": 1, **dict(zip(names, r, strict=True))} for r in rows])
    pq.write_table(table.cast(lake.BROKERS), tmp_path / "snap.parquet")
    got = newest.read_log_dirs(tmp_path / "snap.parquet")
    assert got.ts == new
    assert got.rows == (
        newest.LogDirUse(1, 30, 200, 100),
        newest.LogDirUse(2, 30, None, None, "KIP-827 not supported"),
    )
    assert got.rows[0].used_percent == 50.0 and got.rows[1].used_ratio is None
    assert [b.broker for b in core.fullest(got.rows)] == [1, 2]


# -- the page on the sandbox -----------------------------------------------------------------------


@pytest.fixture
def world(frozen, kafka_cluster, personas, telemetry_lake, run_operation):
    """Broker 3 stopped under a topic it led, a group far behind, a move running, a request waiting,
    and a telemetry snapshot taken before the broker stopped."""
    with kafka_restored(frozen):
        tag = uuid.uuid4().hex[:8]
        broken = f"ova.broken.{tag}"
        frozen.create_topic(broken, assignment=[[3, 1], [3], [1, 2]])
        min_isr = f"ova.min-isr.{tag}"  # in sync, but its minimum asks for more replicas than it has
        frozen.create_topic(min_isr, partitions=3, configs={"min.insync.replicas": "2"})
        busy = make_topic(frozen, [[1, 3]], mb_per_partition=40, name=f"ova.busy.{tag}")
        from sandbox.state import Group

        group = f"ova.group.{tag}"
        with frozen.state.lock:
            frozen.state.groups[group] = Group(group, offsets={(busy, 0): 0})
        op, _ = start(personas, kafka_cluster, {(busy, 0): [1, 2]})
        op = run_operation(op.pk)  # throttle and submit, then the move waits for Kafka
        req = requests.submit_request(
            actor=personas["requester"],
            cluster=kafka_cluster,
            kind="topic.create",
            payload={"name": f"team-a.ova-{tag}", "partitions": 1, "replication_factor": 1, "configs": {}},
            reason="overview test",
        )
        telemetry.collect_snapshot(cluster=kafka_cluster, now=timezone.now())
        metadata_cache.clear()
        frozen.stop_broker(3)
        try:
            yield {"broken": broken, "min_isr": min_isr, "group": group, "op": op, "request": req}
        finally:
            frozen.start_broker(3)
            clear_throttles(frozen)


def section(body: str, section_id: str) -> str:
    found = re.search(rf'<section[^>]*id="{section_id}"[^>]*>(.*?)</section>', body, re.S)
    assert found, section_id
    return found.group(1)


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_it_shows_what_needs_attention_and_reads_nothing_more_from_kafka(
    client, personas, kafka_cluster, world, gateway_calls
):
    client.force_login(personas["admin"])
    url = reverse("cluster_overview", kwargs={"name": kafka_cluster.name})
    first = client.get(url)
    assert set(gateway_calls) == {
        "broker_status",
        "describe_cluster",
        "describe_quorum",
        "list_topics_metadata",
    }
    gateway_calls.clear()
    second = client.get(url)
    assert (
        gateway_calls == []
    )  # within the snapshot's life the whole page, attention included, is kept figures
    body = second.content.decode()
    assert first.status_code == second.status_code == 200

    quorum = text(section(body, "attention-quorum"))
    leader = second.context["controller_id"]
    assert f"Leader {leader} (epoch" in quorum and "3 voters" in quorum, quorum
    assert "every voter within 1,000 records of the leader" in quorum

    verdict = text(section(body, "overview-verdict"))
    assert verdict.startswith("Needs attention:")
    assert "1 broker down or fenced" in verdict and "with partition problems" in verdict

    row = re.search(rf'<tr data-topic="{re.escape(world["broken"])}">(.*?)</tr>', body, re.S)
    assert row, "the broken topic is listed"
    assert text(row.group(1)) == f"{world['broken']} 3 1 unknown 1"  # p1 offline, p0 short of a replica

    under_min = re.search(r'<p class="muted" id="attention-min-isr">(.*?)</p>', body, re.S).group(1)
    assert f'data-min-isr-topic="{world["min_isr"]}">{world["min_isr"]}</a> (3)' in under_min
    assert "(telemetry snapshot of" in under_min

    groups = section(body, "attention-groups")
    lag = re.search(rf'<tr data-group="{re.escape(world["group"])}">(.*?)</tr>', groups, re.S)
    assert lag, "the lagging group is listed"
    assert 'class="lag lag-over"' in lag.group(1)  # over the group_lag rule's 10,000 messages
    assert re.search(r">\d{1,3}(,\d{3})+<", lag.group(1)), "the lag is grouped by thousands"

    work = section(body, "attention-work")
    op = world["op"]
    assert f'data-operation="{op.pk}"' in work and f"reassignment.execute #{op.pk}" in text(work)
    assert "Running" in text(work)
    assert f'data-request="{world["request"].pk}"' in work and "team-a.ova-" in work

    changes = text(section(body, "attention-changes"))
    assert "reassignment.execute.requested" in changes and "request.submit" in changes

    headroom = section(body, "attention-headroom")
    assert re.findall(r'data-broker="(\d+)"', headroom) and "From the telemetry snapshot of" in headroom


def test_a_min_isr_the_topic_list_read_counts_the_topic_under_it(
    client, personas, kafka_cluster, world, gateway_calls
):
    client.force_login(personas["viewer"])
    url = reverse("cluster_overview", kwargs={"name": kafka_cluster.name})
    client.get(url)
    metadata_cache.remember_configs(
        metadata_cache.peek(kafka_cluster), {world["broken"]: {"min.insync.replicas": "2"}}
    )
    gateway_calls.clear()
    body = client.get(url).content.decode()
    assert gateway_calls == []
    row = re.search(rf'<tr data-topic="{re.escape(world["broken"])}">(.*?)</tr>', body, re.S)
    assert text(row.group(1)) == f"{world['broken']} 3 1 2 1"  # ISRs of 1, 1 (its last member) and 2
    assert "attention-changes" not in body  # a viewer does not read the audit trail


@pytest.fixture
def healthy_cluster(db):
    """A sandbox of its own, registered: the session's shared sandbox carries other tests' topics,
    some of them under-replicated or offline by design."""
    from console.clusters.actions import gateway_for
    from console.models import Cluster
    from sandbox.testing import running_sandbox

    with running_sandbox(brokers=3, controllers=3, port=0, seed="overview-healthy") as fresh:
        cluster = Cluster.objects.create(
            name="healthy", bootstrap_servers=fresh.bootstrap_servers, request_timeout_s=5
        )
        yield cluster
        gateway_for(cluster).close()


def test_a_healthy_cluster_says_it_is_ok(client, healthy_cluster, fresh_metadata_cache, gateway_calls):
    from tests.conftest import make_personas

    client.force_login(make_personas(healthy_cluster)["viewer"])
    body = client.get(reverse("cluster_overview", kwargs={"name": healthy_cluster.name})).content.decode()
    verdict = text(section(body, "overview-verdict"))
    assert verdict.startswith("OK: every broker up"), verdict
