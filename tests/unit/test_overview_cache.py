"""The overview within its metadata snapshot's life: a second view reads nothing from Kafka (every
gateway call counted on the real gateway, against the sandbox), a topic created through the console
or Refresh shows fresh figures, and the page says how old its figures are."""

from __future__ import annotations

import re
import uuid

import pytest
from django.urls import reverse

from console.topics import actions as topics
from console.topics.batch import TopicSpec
from tests.unit.matrix_world import kafka_restored
from tests.unit.overview_cards import card

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(client, personas, kafka_cluster, fresh_metadata_cache):
    client.force_login(personas["viewer"])
    url = reverse("cluster_overview", kwargs={"name": kafka_cluster.name})
    return lambda query="": client.get(url + query)


@pytest.fixture
def restored(frozen):
    with kafka_restored(frozen):
        yield frozen


def states(response) -> dict[str, str]:
    """{broker id: state} as the brokers' table shows them."""
    rows = re.findall(
        r'>(\d+)</a></td>.*?<td class="broker-state"[^>]*>(\w+)</td>', response.content.decode(), re.S
    )
    return dict(rows)


def counts(response) -> tuple[str, str]:
    body = response.content.decode()
    return card(body, "Topics"), card(body, "Partitions")


def age_line(response) -> str:
    found = re.search(r'<p class="muted" id="overview-age">(.*?)<a', response.content.decode(), re.S)
    return " ".join(found.group(1).split()) if found else ""


def test_it_reads_nothing_from_kafka_on_a_second_view_within_the_snapshots_life(
    page, gateway_calls, kafka_cluster
):
    first = page()
    assert set(gateway_calls) == {
        "broker_status",
        "describe_cluster",
        "describe_quorum",
        "list_topics_metadata",
    }
    gateway_calls.clear()
    second = page()
    assert gateway_calls == []
    assert counts(second) == counts(first)
    assert second.context["overview"].brokers == first.context["overview"].brokers
    assert second.context["controller_id"] == first.context["controller_id"] is not None


def test_it_says_how_old_the_figures_are_and_offers_refresh(page):
    response = page()
    assert age_line(response) == "Counts from the metadata read 0 s ago; broker states read 0 s ago"
    assert b'<a href="?refresh=1" class="button" id="overview-refresh">Refresh</a>' in response.content
    overview = response.context["overview"]
    assert 0 <= overview.counts_age_s < 5 and 0 <= overview.states_age_s < 5


def test_a_topic_created_through_the_console_shows_on_the_next_view(
    page, gateway_calls, personas, kafka_cluster
):
    topic_count, partition_count = map(int, counts(page()))
    name = f"ovc.{uuid.uuid4().hex[:10]}"
    topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 3, 1)])
    gateway_calls.clear()
    response = page()
    assert counts(response) == (str(topic_count + 1), str(partition_count + 3))
    assert (
        "list_topics_metadata" in gateway_calls and "broker_status" in gateway_calls
    )  # states kept with the snapshot


def test_refresh_reads_a_change_made_outside_the_console(page, gateway_calls, sandbox):
    before = counts(page())
    sandbox.create_topic(f"ovc.{uuid.uuid4().hex[:10]}", 2, 1)  # not through the console: no invalidation
    assert counts(page()) == before  # the kept figures, within the snapshot's life
    gateway_calls.clear()
    response = page("?refresh=1")
    assert counts(response) == (str(int(before[0]) + 1), str(int(before[1]) + 2))
    assert set(gateway_calls) == {
        "broker_status",
        "describe_cluster",
        "describe_quorum",
        "list_topics_metadata",
    }


def test_refresh_shows_a_broker_that_stopped_since_the_states_were_read(page, restored):
    assert states(page()) == {"1": "up", "2": "up", "3": "up"}
    restored.stop_broker(3)
    try:
        assert states(page()) == {"1": "up", "2": "up", "3": "up"}  # kept with the snapshot
        assert states(page("?refresh=1")) == {"1": "up", "2": "up", "3": "fenced"}
    finally:
        restored.start_broker(3)
