"""One broker down, stopped (refusing connections) or frozen (accepting them, answering nothing, as a
SIGSTOP'd Kafka does): every page answers within the connect timeout plus one request, and the
overview names the broker. A controller-registered cluster whose controller restarts recovers, and
its connection errors are logged a bounded number of times."""

from __future__ import annotations

import logging
import re
import time

import pytest
from django.urls import reverse

from console.kafka import ClusterConnection, KafkaOperationError, close_all, get_gateway
from console.kafka.errlog import RUNS
from console.models import Cluster
from console.topics import cache as topic_cache
from sandbox.testing import running_sandbox

pytestmark = pytest.mark.django_db

CONNECT_S = 1.5
REQUEST_S = 6.0
#: the connect timeout plus one request (a request answers in well under a second here)
BOUND_S = CONNECT_S + 1.5


@pytest.fixture
def kafka():
    with running_sandbox(brokers=3, controllers=1, port=0, speed=0) as cluster:
        cluster.create_topic("fo.rf3", partitions=6, replication_factor=3)
        cluster.create_topic("fo.rf1", partitions=3, replication_factor=1)
        yield cluster
        close_all()


@pytest.fixture
def admin_client(client, django_user_model, settings):
    settings.KAFKA_CONNECT_TIMEOUT_S = CONNECT_S
    user = django_user_model.objects.create_superuser("fo-admin", "fo@example.com", "pw-fo-admin-123")
    client.force_login(user)
    return client


def register(kafka, **where) -> Cluster:
    return Cluster.objects.create(
        name="fo", request_timeout_s=REQUEST_S, **(where or {"bootstrap_servers": kafka.bootstrap_servers})
    )


def pages(cluster: Cluster) -> list[str]:
    name = cluster.name
    return [
        reverse("cluster_overview", kwargs={"name": name}),
        reverse("topic_list", kwargs={"name": name}) + "?refresh=1",
        reverse("topic_detail", kwargs={"name": name, "topic": "fo.rf3"}),
        reverse("broker_list", kwargs={"name": name}) + "?refresh=1",
        reverse("quorum_page", kwargs={"name": name}),
    ]


def timed_pages(client, cluster: Cluster) -> dict[str, tuple[float, int, str]]:
    out = {}
    for url in pages(cluster):
        started = time.monotonic()
        response = client.get(url)
        out[url] = (round(time.monotonic() - started, 2), response.status_code, response.content.decode())
    return out


def warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def down_box(body: str) -> str:
    found = re.search(r'<div class="error-box" id="brokers-down">(.*?)</div>', body, re.S)
    return " ".join(found.group(1).split()) if found else ""


def overview_down(kafka, broker: int, state: str) -> str:
    host, port = kafka.bootstrap_servers.split(",")[broker - 1].split(":")
    return f"<p><strong>1 broker down or unreachable:</strong> {broker} ({host}:{port}, {state})</p>"


@pytest.mark.parametrize("fault", ["frozen", "frozen-then-fenced", "stopped"])
def test_it_answers_every_page_within_the_connect_timeout_with_a_broker_down(kafka, admin_client, fault):
    """Fresh clients each round (a console process that starts, or a gateway re-created after a
    settings change): the bootstrap, DescribeCluster (librdkafka sent it to Metadata's "controller",
    a random live broker under KRaft: the frozen one one time in three), DescribeQuorum and the
    topic reads must not wait for the broker that does not answer."""
    cluster = register(kafka)
    if fault == "stopped":
        kafka.stop_broker(2)
    else:
        kafka.freeze_broker(2, fenced=fault == "frozen-then-fenced")
    try:
        slow = {}
        for _ in range(4):  # the old clients picked the broker to ask at random
            close_all()
            topic_cache.clear()
            for url, (seconds, status, body) in timed_pages(admin_client, cluster).items():
                assert status == 200, url
                assert "could not be reached" not in body, (url, body[:300])
                if seconds > BOUND_S:
                    slow[url] = seconds
        assert slow == {}
        overview = timed_pages(admin_client, cluster)[pages(cluster)[0]][2]
        state = "unreachable" if fault == "frozen" else "fenced"
        assert down_box(overview) == overview_down(kafka, 2, state)
    finally:
        kafka.thaw_broker(2) if fault != "stopped" else kafka.start_broker(2)


def test_it_answers_every_page_within_the_connect_timeout_when_a_known_broker_stops_answering(
    kafka, admin_client
):
    """Warm clients: the frozen broker is in every cached Metadata and has open connections."""
    cluster = register(kafka)
    for url, (_, status, _) in timed_pages(admin_client, cluster).items():
        assert status == 200, url
    kafka.freeze_broker(2, fenced=True)
    try:
        for _ in range(3):
            topic_cache.clear()
            times = {url: seconds for url, (seconds, _, _) in timed_pages(admin_client, cluster).items()}
            assert {u: s for u, s in times.items() if s > BOUND_S} == {}
        overview = timed_pages(admin_client, cluster)[pages(cluster)[0]][2]
        assert down_box(overview) == overview_down(kafka, 2, "fenced")
    finally:
        kafka.thaw_broker(2)
    overview = timed_pages(admin_client, cluster)[pages(cluster)[0]][2]
    assert down_box(overview) == ""


def test_it_recovers_after_a_controller_restart_and_logs_the_outage_a_bounded_number_of_times(kafka, caplog):
    """Controller mode (KIP-919): kafka-python's metadata refresh loop, started by the first failed
    connection, "bootstrapped" from the controllers forever (they do not serve Metadata), logging
    about three lines a second and keeping the controller in reconnect backoff so the console's
    reads never succeeded again."""
    conn = ClusterConnection(
        bootstrap_controllers=kafka.bootstrap_controllers,
        request_timeout_s=REQUEST_S,
        connect_timeout_s=CONNECT_S,
    )
    RUNS.clear()
    gw = get_gateway(conn)
    assert gw.describe_cluster().controller_id == 101
    caplog.set_level(logging.INFO)
    caplog.clear()
    kafka.stop_controller(101)
    failures = []
    deadline = time.monotonic() + 8
    half_way = None  # warning lines logged in the outage's first half
    while time.monotonic() < deadline:
        if half_way is None and deadline - time.monotonic() < 4:
            half_way = len(warnings(caplog))
        started = time.monotonic()
        with pytest.raises(KafkaOperationError) as err:
            gw.describe_quorum()
        failures.append((err.value.name, time.monotonic() - started))
        time.sleep(0.2)
    in_outage = len(warnings(caplog))
    kafka.start_controller(101)
    time.sleep(3)  # what the old refresh loop logged after the controller was back
    recovered_in = None
    started = time.monotonic()
    while time.monotonic() - started < 10:
        try:
            quorum = gw.describe_quorum()
        except KafkaOperationError:
            time.sleep(0.2)
            continue
        recovered_in = time.monotonic() - started
        break
    assert recovered_in is not None and recovered_in < BOUND_S
    assert quorum.leader_id == 101
    assert {name for name, _ in failures} <= {"NETWORK_EXCEPTION", "REQUEST_TIMED_OUT"}
    lines = warnings(caplog)
    assert len(failures) >= 6
    # one line for the cluster's run and one per kind of kafka-python line, all in the first seconds:
    # none in the outage's second half, none after the controller is back
    assert half_way == in_outage == len(lines), lines
    assert len(lines) <= 8, lines
    assert max(seconds for _, seconds in failures) < 2 * CONNECT_S + 1
    key = f"Kafka controllers {kafka.bootstrap_controllers}"
    ours = [r.getMessage() for r in caplog.records if r.getMessage().startswith(key)]
    assert ours[0].startswith(f"{key}: describe_quorum failed with ")
    assert re.fullmatch(
        rf"{re.escape(key)}: recovered after {len(failures)} errors over \d+ s \(last: describe_quorum failed with \w+\)",
        ours[-1],
    ), ours
    assert len(ours) == 2
    assert key not in RUNS.open_runs()


@pytest.mark.parametrize("many", [False, True], ids=["one", "batched"])
def test_a_request_to_a_broker_missing_from_the_cached_metadata_reads_metadata_again(kafka, many):
    """A broker that restarted after the client read Metadata (a group's coordinator, a leader) is
    asked after one fresh Metadata read, not refused as BROKER_NOT_AVAILABLE (ci50c's purge setup)."""
    from kafka.protocol.admin import DescribeLogDirsRequest

    from console.clusters.actions import gateway_for

    gw = gateway_for(register(kafka))
    gw.describe_cluster()
    kp = gw._kp
    kp.ensure_ready()
    metadata = kp._manager.cluster
    assert metadata.broker_metadata(3) is not None
    metadata._brokers.pop(3)  # what the client holds when broker 3 came back after its last read
    request = DescribeLogDirsRequest[1](topics=[])
    if many:
        answer = kp.send_many([(request, 1), (request, 3)])[1]
    else:
        answer = kp._send(request, 3)
    assert not isinstance(answer, KafkaOperationError), answer
    assert [r.log_dir for r in answer.results] == ["/var/lib/kafka/broker-3/data"]
    assert metadata.broker_metadata(3) is not None
