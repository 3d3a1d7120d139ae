"""Lag is coloured by the group-lag alert rule's threshold on the cluster (issue 38): a lag within it
reads as behind ("lag-ok"), above it as a problem ("lag-over"), on the group list, the group page and
the topic page's consumers; grouped by thousands everywhere."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.models.alerts import AlertRuleSetting

pytestmark = pytest.mark.django_db


@pytest.fixture
def lagging(sandbox, fresh_metadata_cache):
    """A topic of two partitions (12,000 records each) and two groups: one 54 behind, one 12,000."""
    from tests.unit.matrix_world import uniq

    topic = uniq("lagv")
    sandbox.create_topic(topic, partitions=2, replication_factor=1, assignment=[[1], [2]])
    with sandbox.state.lock:
        for p in sandbox.state.topics[topic].partitions:
            p.end_offset = 12_000
    small, big = uniq("lag-small"), uniq("lag-big")
    sandbox.add_group(small, offsets={(topic, 0): 12_000 - 54, (topic, 1): 12_000})
    sandbox.add_group(big, offsets={(topic, 0): 0, (topic, 1): 12_000})
    yield topic, small, big
    with sandbox.state.lock:
        sandbox.state.remove_topic(topic)
        for group in (small, big):
            del sandbox.state.groups[group]
        sandbox.state.touch()


def lag_cells(html: str) -> list[tuple[str, str]]:
    """(level, text) of every lag cell."""
    cells = re.findall(r'<td class="lag lag-(\w+)">(.*?)</td>', html, re.S)
    return [(level, re.sub(r"<[^>]+>", "", text).strip()) for level, text in cells]


def pages(client, cluster, topic, small, big) -> dict[str, list]:
    def get(route, query=None, **kwargs):
        return client.get(reverse(route, kwargs={"name": cluster.name, **kwargs}), query).content.decode()

    return {
        # the two groups only: in a long session the sandbox holds more groups than a page lists
        "list": lag_cells(get("group_list", {"q": "lag-", "topic": topic})),
        "small": lag_cells(get("group_detail", group=small)),
        "big": lag_cells(get("group_detail", group=big)),
        "topic": lag_cells(get("group_topic_consumers", topic=topic)),
    }


def test_it_colours_lag_by_the_group_lag_rules_threshold(client, personas, kafka_cluster, lagging):
    topic, small, big = lagging
    client.force_login(personas["viewer"])
    got = pages(client, kafka_cluster, topic, small, big)
    assert ("ok", "54") in got["list"] and ("over", "12,000") in got["list"]  # the default: 10,000
    assert got["small"] == [("ok", "54"), ("none", "0")]
    assert got["big"] == [("over", "12,000"), ("none", "0")]
    assert sorted(got["topic"]) == [("ok", "54"), ("over", "12,000")]

    AlertRuleSetting.objects.create(cluster=kafka_cluster, rule="group_lag", threshold=20_000)
    got = pages(client, kafka_cluster, topic, small, big)
    assert got["big"] == [("ok", "12,000"), ("none", "0")]
    assert sorted(got["topic"]) == [("ok", "12,000"), ("ok", "54")]

    AlertRuleSetting.objects.filter(cluster=kafka_cluster).update(threshold=50)
    got = pages(client, kafka_cluster, topic, small, big)
    assert got["small"] == [("over", "54"), ("none", "0")]
