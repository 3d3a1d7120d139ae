"""The brokers area: per-broker counts, log dirs and throttles, the broker page's partitions (paged),
unknown brokers as the console's 404, Kafka errors as a message, controller mode as unavailable."""

from __future__ import annotations

import re
import uuid

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from console.brokers import figures, query, throttling
from console.brokers import reads as broker_reads
from console.clusters.actions import gateway_for
from console.kafka import (
    ConfigChange,
    ConfigResource,
    KafkaOperationError,
    PartitionMetadata,
    TopicMetadata,
)
from console.reassignment import throttles
from tests.unit.matrix_world import kafka_restored
from tests.unit.quorum_helpers import register_controllers

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]
MiB = 1024 * 1024


@pytest.fixture
def restored(frozen):
    """The shared sandbox given back as it was (broker configs, new topics removed)."""
    with kafka_restored(frozen):
        yield frozen


def uniq(prefix: str = "brk") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def url(view: str, cluster, **kwargs) -> str:
    return reverse(view, kwargs={"name": cluster.name, **kwargs})


def row_of(body: str, broker: int) -> str:
    match = re.search(rf'<tr data-broker="{broker}">(.*?)</tr>', body, re.S)
    assert match, f"no row for broker {broker}"
    return match.group(1)


def cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


# -- pure parts --------------------------------------------------------------------------------------


def P(pid, leader, replicas, isr):  # noqa: N802 - reads like the type it builds
    return PartitionMetadata(pid, leader, tuple(replicas), tuple(isr))


def test_counts_per_broker_cover_replicas_leaders_under_replicated_out_of_isr_and_offline():
    topics = [
        TopicMetadata("a", (P(0, 1, [1, 2, 3], [1, 2, 3]), P(1, 2, [2, 3, 1], [2, 3]))),
        TopicMetadata("b", (P(0, -1, [3, 4], []), P(1, 4, [4], [4]))),
    ]
    counts = figures.count_by_broker(topics)
    assert counts[1] == figures.Counts(replicas=2, leaders=1, under_replicated=1, out_of_isr=1, offline=0)
    assert counts[2] == figures.Counts(replicas=2, leaders=1, under_replicated=1, out_of_isr=0, offline=0)
    assert counts[3] == figures.Counts(replicas=3, leaders=0, under_replicated=2, out_of_isr=1, offline=1)
    assert counts[4] == figures.Counts(replicas=2, leaders=1, under_replicated=1, out_of_isr=1, offline=1)


def test_throttled_replicas_are_read_per_broker_and_a_star_names_every_host():
    t, b = (lambda n: ConfigResource("TOPIC", n)), (lambda n: ConfigResource("BROKER", n))
    values = {
        (t("moving"), throttles.LEADER_REPLICAS): "0:1,1:2,junk,2:1",
        (t("moving"), throttles.FOLLOWER_REPLICAS): "0:3",
        (t("all"), throttles.LEADER_REPLICAS): "*",
        (t("all"), throttles.FOLLOWER_REPLICAS): None,
        (b("1"), throttles.LEADER_RATE): "10485760",
        (b("1"), throttles.FOLLOWER_RATE): None,
        (b("3"), throttles.FOLLOWER_RATE): "9223372036854775807",
    }
    down = KafkaOperationError(8, "BROKER_NOT_AVAILABLE", "gone")
    got = throttling.throttles_by_broker(values, {"all": {2, 3}, "moving": {1, 2, 3}}, {b("4"): down})
    assert got[1].leader_rate_text == "10 MiB/s" and got[1].follower_rate is None
    assert got[1].topics == (throttling.ThrottledTopic("moving", leader=(0, 2)),)
    assert [x.topic for x in got[2].topics] == ["all", "moving"]
    assert got[2].topic("all").leader_all and got[2].topic("all").leader_covers(7)
    assert got[2].topic("moving").leader_text == "1" and not got[2].topic("moving").follower_covers(1)
    assert got[3].follower_rate_text == "unlimited"
    assert got[3].topic("moving").follower == (0,) and got[3].topic("all").leader_text == "all"
    assert got[4].error is down and not got[4].active
    # Kafka slows a replica only when it is listed and its broker has the matching rate
    assert got[1].limits and not got[2].limits and got[3].limits
    assert not throttling.BrokerThrottles(leader_rate="1", topics=got[3].topics[1:]).limits
    assert 5 not in got


def test_the_partition_query_falls_back_on_bad_values_and_round_trips():
    q = query.PartitionQuery.from_params(
        {"q": "  orders ", "only": "nonsense", "sort": "size", "page": "-4", "per_page": "99999999"}
    )
    assert (q.topic, q.only, q.sort, q.page, q.per_page) == (
        "orders",
        "",
        "size",
        1,
        query.MAX_PER_PAGE,
    )
    again = query.PartitionQuery.from_params(dict(x.split("=") for x in q.querystring().split("&")))
    assert again == q
    assert q.querystring() == "q=orders&sort=size&per_page=1000"
    paged = query.PartitionQuery.from_params({"q": "a&b", "page": "7"})
    assert paged.querystring() == "q=a%26b&page=7" and paged.without_page == "q=a%26b"
    assert query.parse_broker_id("12") == 12
    assert [query.parse_broker_id(x) for x in ("-1", "1.0", "abc", "", "1" * 11)] == [None] * 5


# -- reads against the sandbox ------------------------------------------------------------------------


def test_every_broker_is_listed_with_counts_matching_the_metadata(personas, kafka_cluster):
    listing = broker_reads.list_brokers(actor=personas["viewer"], cluster=kafka_cluster)
    md = gateway_for(kafka_cluster).list_topics_metadata()
    expected = {b.id: 0 for b in md.brokers}
    leaders = dict(expected)
    for t in md.topics:
        for p in t.partitions:
            for r in p.replicas:
                expected[r] += 1
            leaders[p.leader] = leaders.get(p.leader, 0) + 1
    assert [b.id for b in listing.brokers] == sorted(expected)
    assert {b.id: b.counts.replicas for b in listing.brokers} == expected
    assert all(b.counts.leaders == leaders[b.id] for b in listing.brokers)
    for b in listing.brokers:
        assert b.live and b.log_dirs_error is None and len(b.log_dirs) == 1
        d = b.log_dirs[0]
        assert d.total_bytes and d.usable_bytes is not None and d.used_bytes == d.total_bytes - d.usable_bytes
    assert listing.partitions == sum(len(t.partitions) for t in md.topics)


def test_the_list_page_links_each_broker_to_its_page_and_its_configs(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    response = client.get(url("broker_list", kafka_cluster))
    assert response.status_code == 200
    body = response.content.decode().replace("\xa0", " ")
    for b in (1, 2, 3):
        row = row_of(body, b)
        assert url("broker_detail", kafka_cluster, broker=b) in row
        assert url("broker_configs", kafka_cluster, broker=b) in row
        assert " of 1.0 TiB" in re.sub(r"<[^>]+>", "", row)  # the sandbox's disks: 1 TiB each
    assert f'href="{url("broker_list", kafka_cluster)}">Brokers</a>' in body  # the cluster nav
    assert "Edit configs" not in body  # a viewer reads configs only


def test_it_labels_the_disk_figures_alike_on_the_list_and_on_the_broker_page(client, personas, kafka_cluster):
    """The list shows each log dir's file system (usable of total); the broker page shows the same
    figure under the same label, and Kafka's own data (its replicas' sizes) labelled apart."""
    client.force_login(personas["viewer"])
    listing = client.get(url("broker_list", kafka_cluster)).content.decode().replace("\xa0", " ")
    page = client.get(url("broker_detail", kafka_cluster, broker=2)).content.decode().replace("\xa0", " ")
    headers = re.search(r'<table class="grid" id="brokers">\s*<thead>(.*?)</thead>', listing, re.S).group(1)
    assert "Log dirs: file system space usable by Kafka" in re.sub(r"<[^>]+>", "", headers)
    listed = " ".join(cells(row_of(listing, 2))[7].split())
    shown = r"[\d.]+ \w+ usable of 1\.0 TiB \([\d.]+% in use or reserved\)"
    assert re.fullmatch("file system: " + shown, listed), listed
    cards = {
        label: " ".join(re.sub(r"<[^>]+>", "", value).split())
        for label, value in re.findall(
            r'<div class="label">([^<]*)</div><div class="value">(.*?)</div></div>', page, re.S
        )
    }
    assert re.fullmatch(shown, cards["File system"]), cards
    assert re.fullmatch(r"[\d.]+ \w+", cards["Kafka data (replica sizes)"]), cards
    assert "Data on disk" not in page
    dirs = re.search(r'<table class="grid" id="log-dirs">\s*<thead>(.*?)</thead>', page, re.S).group(1)
    assert re.findall(r"<th>(.*?)</th>", dirs) == [
        "Path",
        "Replicas",
        "Kafka data (replica sizes)",
        "File system in use or reserved",
        "File system size",
        "Usable by Kafka",
        "",
    ]
    note = re.compile(r'<p class="muted" id="disk-note">(.*?)</p>', re.S)
    assert note.search(listing).group(1) == note.search(page).group(1)
    assert "not only Kafka's data" in note.search(page).group(1).replace("&#x27;", "'")


def test_throttles_in_effect_show_on_the_list_and_on_the_broker_page(
    client, personas, kafka_cluster, restored
):
    name = uniq("thr")
    restored.create_topic(name, assignment=[[1, 2], [2, 1], [1, 3]])
    gw = gateway_for(kafka_cluster)
    result = gw.incremental_alter_configs(
        {
            ConfigResource("BROKER", "2"): [ConfigChange(throttles.LEADER_RATE, "SET", str(10 * MiB))],
            ConfigResource("TOPIC", name): [
                ConfigChange(throttles.LEADER_REPLICAS, "SET", "0:2,1:2"),
                ConfigChange(throttles.FOLLOWER_REPLICAS, "SET", "2:3"),
            ],
        }
    )
    assert not any(isinstance(v, KafkaOperationError) for v in result.values()), result
    client.force_login(personas["viewer"])
    body = client.get(url("broker_list", kafka_cluster)).content.decode()
    two, three, one = (" ".join(cells(row_of(body, b))[-2].split()) for b in (2, 3, 1))
    assert "10 MiB/s" in two and "1 topic names this broker" in two and "not limited" not in two
    assert "1 topic names this broker" in three and "MiB/s" not in three
    assert "no rate set here: not limited" in three
    assert one == "none"

    page = client.get(url("broker_detail", kafka_cluster, broker=2), {"q": name}).content.decode()
    throttled = re.search(r'<table class="grid" id="throttled-topics">(.*?)</table>', page, re.S).group(1)
    assert cells(re.search(rf'<tr data-topic="{name}">(.*?)</tr>', throttled, re.S).group(1)) == [
        name,
        "0, 1",
        "—",
    ]
    assert "10 MiB/s" in page
    row0 = re.search(rf'<tr data-tp="{name}-0">(.*?)</tr>', page, re.S).group(1)
    assert "leader-throttled" in row0
    only = client.get(url("broker_detail", kafka_cluster, broker=3), {"q": name, "only": "throttled"})
    assert re.findall(r'data-tp="([^"]+)"', only.content.decode()) == [f"{name}-2"]


def test_the_broker_page_pages_through_the_partitions_it_hosts(client, personas, kafka_cluster, restored):
    name = uniq("many")
    restored.create_topic(name, assignment=[[1, 2] if i % 2 else [2, 1] for i in range(25)])
    with restored.state.lock:
        for p in restored.state.topics[name].partitions:
            p.sizes = {1: 1000.0 * p.index, 2: 1000.0 * p.index}
    client.force_login(personas["viewer"])
    first = client.get(url("broker_detail", kafka_cluster, broker=1), {"q": name, "per_page": 10})
    assert first.status_code == 200
    body = first.content.decode()
    assert re.findall(r'data-tp="([^"]+)"', body) == [f"{name}-{i}" for i in range(10)]
    assert "1–10 of 25 partitions" in body and "Page 1 of 3" in body
    assert "page=2" in body and "per_page=10" in body

    last = client.get(url("broker_detail", kafka_cluster, broker=1), {"q": name, "per_page": 10, "page": 3})
    assert re.findall(r'data-tp="([^"]+)"', last.content.decode()) == [f"{name}-{i}" for i in range(20, 25)]

    detail = broker_reads.describe_broker(
        actor=personas["viewer"],
        cluster=kafka_cluster,
        broker="1",
        query=query.PartitionQuery(topic=name, only="leader", sort="size", per_page=5),
    )
    assert detail.total == 12 and detail.hosted >= 25  # broker 1 leads the odd partitions
    assert [r.partition for r in detail.rows] == [23, 21, 19, 17, 15]
    assert all(r.is_leader and r.in_isr and r.size == 1000 * r.partition for r in detail.rows)
    assert detail.rows[0].log_dir == detail.broker.log_dirs[0].path
    assert detail.broker.data_bytes >= sum(1000 * i for i in range(25))


def test_an_unknown_broker_is_the_consoles_404(client, personas, kafka_cluster):
    client.force_login(personas["admin"])
    for broker in ("999", "abc", "-1", "1.0"):
        response = client.get(url("broker_detail", kafka_cluster, broker=broker))
        assert response.status_code == 404, broker
        assert b"There is nothing here" in response.content
    with pytest.raises(broker_reads.UnknownBroker):
        broker_reads.describe_broker(actor=personas["admin"], cluster=kafka_cluster, broker="42")


def test_a_broker_that_is_down_is_shown_not_live_with_its_log_dirs_unreadable(
    client, personas, kafka_cluster, restored
):
    frozen = restored
    frozen.create_topic(uniq("down"), assignment=[[3, 1]])
    frozen.stop_broker(3)
    try:
        client.force_login(personas["viewer"])
        body = client.get(url("broker_list", kafka_cluster), {"refresh": "1"}).content.decode()
        three = row_of(body, 3)
        assert "not live" in three and "—" in cells(three)[1]
        page = client.get(url("broker_detail", kafka_cluster, broker=3))
        assert page.status_code == 200
        assert b"not among the live brokers" in page.content and b"BROKER_NOT_AVAILABLE" in page.content
    finally:
        frozen.start_broker(3)


def test_an_unreachable_cluster_is_a_message_not_a_500(client, personas, offline_cluster):
    client.force_login(personas["admin"])
    for view, kwargs in (("broker_list", {}), ("broker_detail", {"broker": "1"})):
        response = client.get(url(view, offline_cluster, **kwargs))
        assert response.status_code == 200
        assert b"NETWORK_EXCEPTION" in response.content and b"could not be read" in response.content


def test_controller_mode_says_the_page_is_unavailable_and_hides_the_link(client, personas, frozen):
    cluster = register_controllers(frozen, personas, name="brokers-ctl")
    client.force_login(personas["viewer"])
    response = client.get(url("broker_list", cluster))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'data-unavailable="controller-mode"' in body
    assert url("broker_list", cluster) + '"' not in body.split("<main>")[0]  # no nav link
    assert client.get(url("broker_detail", cluster, broker="1")).status_code == 200


def test_outsiders_do_not_see_the_cluster(client, personas, kafka_cluster):
    client.force_login(personas["outsider"])
    assert client.get(url("broker_list", kafka_cluster)).status_code == 404
    assert client.get(url("broker_detail", kafka_cluster, broker="1")).status_code == 404
    with pytest.raises(PermissionDenied):  # the service refuses too, whatever the view does
        broker_reads.list_brokers(actor=personas["outsider"], cluster=kafka_cluster)
