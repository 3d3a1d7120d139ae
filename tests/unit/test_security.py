"""Security findings (issue 14), each with a test that fails on the code before its fix."""

from __future__ import annotations

import time
import uuid

import pytest
from django.urls import reverse

from console import patterns
from console.clusters.actions import gateway_for
from console.kafka import ConfigResource
from console.models import AuditEvent
from console.topics import actions as topics
from console.topics import policy
from console.topics import reads as topic_reads

pytestmark = pytest.mark.django_db

EVIL = "(a+)+$"


def test_a_catastrophic_regex_search_answers_at_once(personas, kafka_cluster, sandbox):
    """With a backtracking engine this search takes 2^26 steps per topic name (minutes)."""
    victim = "a" * 26 + "b"
    sandbox.create_topic(victim, partitions=1, replication_factor=1)
    started = time.perf_counter()
    page = topic_reads.list_topics(
        actor=personas["viewer"], cluster=kafka_cluster, query=EVIL, regex=True, refresh=True
    )
    assert time.perf_counter() - started < 2
    assert page.query_error == "" and page.total == 0


def test_a_pattern_re2_refuses_is_a_clear_error_not_a_hang(personas, kafka_cluster, client):
    client.force_login(personas["viewer"])
    response = client.get(
        reverse("topic_list", kwargs={"name": kafka_cluster.name}), {"q": r"(\w+)\1", "regex": "on"}
    )
    assert response.status_code == 200
    assert "The regular expression is not valid" in response.content.decode()
    with pytest.raises(patterns.PatternError, match="longer than"):
        patterns.compile_pattern("a" * (patterns.MAX_PATTERN_LENGTH + 1))


def test_policy_patterns_run_in_linear_time(kafka_cluster):
    rules = policy.PolicyRules(name_pattern=EVIL, protected_topics=(EVIL,))
    started = time.perf_counter()
    violations = policy.check_create(
        rules, name="a" * 26 + "b", partitions=1, replication_factor=1, configs={}, broker_count=3
    )
    reason = policy.protected_reason(rules, "a" * 26 + "b", internal=False)
    assert time.perf_counter() - started < 1
    assert [v.rule for v in violations] == ["name_pattern"] and reason == ""


@pytest.fixture
def internal_topic(sandbox):
    name = "__internal-" + uuid.uuid4().hex[:6]  # Kafka's own topics are "__"-prefixed
    sandbox.create_topic(name, partitions=1, replication_factor=1)
    return name


def test_a_direct_post_cannot_add_partitions_to_an_internal_topic(
    client, personas, kafka_cluster, internal_topic
):
    client.force_login(personas["admin"])
    url = reverse("topic_add_partitions", kwargs={"name": kafka_cluster.name, "topic": internal_topic})
    response = client.post(url, {"total_count": "5"})
    assert response.status_code == 200
    assert "internal Kafka topic" in response.content.decode()
    md = gateway_for(kafka_cluster).describe_topics([internal_topic])[internal_topic]
    assert len(md.partitions) == 1
    with pytest.raises(policy.PolicyViolation, match="internal_topic"):
        topics.add_partitions(
            actor=personas["admin"], cluster=kafka_cluster, topic=internal_topic, total_count=3
        )


def test_a_direct_post_cannot_change_an_internal_topics_configs(
    client, personas, kafka_cluster, internal_topic
):
    client.force_login(personas["admin"])
    url = reverse("topic_configs", kwargs={"name": kafka_cluster.name, "topic": internal_topic})
    response = client.post(
        url, {"action": "apply", "op_0": "SET", "key_0": "retention.ms", "value_0": "1000"}
    )
    assert response.status_code == 200
    assert "internal Kafka topic" in response.content.decode()
    res = ConfigResource("TOPIC", internal_topic)
    entry = gateway_for(kafka_cluster).describe_configs([res])[res]["retention.ms"]
    assert entry.source != "DYNAMIC_TOPIC_CONFIG"
    assert not AuditEvent.objects.filter(action="topic.config.alter", outcome="success").exists()
