"""The console policy's pure checks: Kafka's name rules, limits, config ranges, protected topics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.models import TopicPolicy
from console.topics import policy
from console.topics.policy import PolicyRules

LEGAL = st.text(alphabet="abcXYZ019._-", min_size=1, max_size=249).filter(lambda s: s not in (".", ".."))


@given(LEGAL)
def test_legal_names_pass_kafkas_rules(name):
    assert policy.topic_name_errors(name) == []


@given(st.text(min_size=1, max_size=300))
def test_a_name_is_legal_exactly_when_kafka_would_accept_it(name):
    kafka_ok = (
        len(name) <= 249
        and name not in (".", "..")
        and all(c.isascii() and (c.isalnum() or c in "._-") for c in name)
    )
    assert (policy.topic_name_errors(name) == []) == kafka_ok


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "empty"),
        (".", "'.' or '..'"),
        ("..", "'.' or '..'"),
        ("a" * 250, "250 characters"),
        ("a b", "' '"),
        ("é", "'é'"),
    ],
)
def test_illegal_names_say_why(name, fragment):
    assert fragment in " ".join(policy.topic_name_errors(name))


def test_dot_and_underscore_collide():
    assert "collides with the existing topic 'a_b'" in policy.collision_warning("a.b", ["a_b", "other"])
    assert policy.collision_warning("a.b", ["a.b"]) == ""
    assert policy.collision_warning("ab", ["ab"]) == ""


def rules(**kwargs) -> PolicyRules:
    return PolicyRules(**kwargs)


def test_every_create_limit_names_its_rule():
    r = rules(
        max_partitions=10,
        allowed_replication_factors=(3,),
        name_pattern=r"app\..+",
        allowed_config_keys=("retention.ms",),
        config_ranges={"retention.ms": {"min": 60000}},
    )
    found = policy.check_create(
        r,
        name="x",
        partitions=11,
        replication_factor=2,
        configs={"retention.ms": "1", "segment.ms": "5"},
        broker_count=3,
    )
    assert [v.rule for v in found] == [
        "name_pattern",
        "max_partitions",
        "allowed_replication_factors",
        "config_ranges",
        "allowed_config_keys",
    ]
    assert all(f"[policy rule: {v.rule}]" in str(v) for v in found)


@pytest.mark.parametrize(
    ("partitions", "rf", "rule"),
    [(0, 1, "partitions"), (-5, 1, "partitions"), (1, 0, "replication_factor"), (1, 4, "replication_factor")],
)
def test_absurd_counts_are_refused(partitions, rf, rule):
    assert [
        v.rule
        for v in policy.check_create(
            rules(), name="ok", partitions=partitions, replication_factor=rf, broker_count=3
        )
    ] == [rule]


def test_broker_defaults_pass_when_no_rf_is_required():
    assert policy.check_create(rules(), name="ok", partitions=-1, replication_factor=-1, broker_count=3) == []


def test_choices_and_non_numbers_in_ranges():
    r = rules(config_ranges={"cleanup.policy": {"choices": ["delete"]}, "retention.ms": {"max": 10}})
    assert [v.rule for v in policy.check_config(r, "cleanup.policy", "compact")] == ["config_ranges"]
    assert "must be a number" in policy.check_config(r, "retention.ms", "soon")[0].message
    assert policy.check_config(r, "retention.ms", None) == []  # a delete is not range-checked


def test_assignments_must_be_regular_and_use_known_brokers():
    assert policy.check_assignment([[1, 2], [2, 3]], [1, 2, 3]) == []
    messages = [v.message for v in policy.check_assignment([[1, 1], [2], [9, 8]], [1, 2, 3])]
    assert any("same number" in m for m in messages)
    assert any("twice" in m for m in messages)
    assert any("Unknown broker ids: 8, 9" in m for m in messages)


def test_protected_topics_and_internal_topics_have_reasons():
    r = rules(protected_topics=(r"prod\..*", "[bad"))
    assert "internal" in policy.protected_reason(r, "__consumer_offsets", True)
    assert "prod\\..*" in policy.protected_reason(r, "prod.orders", False)
    assert policy.protected_reason(r, "[bad", False)  # an invalid regex still protects its literal name
    assert policy.protected_reason(r, "dev.orders", False) == ""


@pytest.mark.django_db
def test_rules_come_from_the_clusters_policy_row(offline_cluster):
    assert policy.rules_for(offline_cluster) == PolicyRules()
    TopicPolicy.objects.create(cluster=offline_cluster, max_partitions=7, allowed_replication_factors=[3])
    got = policy.rules_for(offline_cluster)
    assert got.max_partitions == 7 and got.allowed_replication_factors == (3,)
    assert got.max_batch_size == policy.DEFAULT_MAX_BATCH_SIZE


@pytest.mark.django_db
def test_admins_edit_the_policy_and_it_is_audited(client, personas, kafka_cluster):
    from django.urls import reverse

    from console.models import AuditEvent

    page = reverse("topic_policy", kwargs={"name": kafka_cluster.name})
    client.force_login(personas["admin"])
    response = client.post(
        page,
        {
            "max_partitions": "12",
            "allowed_replication_factors": "2, 3",
            "allowed_config_keys": "retention.ms\ncleanup.policy",
            "config_ranges": '{"retention.ms": {"min": 60000}}',
            "name_pattern": r"[a-z]+\..+",
            "protected_topics": "prod\\..*",
            "max_batch_size": "",
        },
    )
    assert response.status_code == 302
    rules = policy.rules_for(kafka_cluster)
    assert rules.max_partitions == 12 and rules.allowed_replication_factors == (2, 3)
    assert rules.config_ranges == {"retention.ms": {"min": 60000}} and rules.protected_topics == (
        "prod\\..*",
    )
    event = AuditEvent.objects.get(action="topic_policy.update")
    assert event.before is None and event.after["max_partitions"] == 12


@pytest.mark.django_db
def test_bad_policy_input_is_shown_not_saved(client, personas, kafka_cluster):
    from django.urls import reverse

    page = reverse("topic_policy", kwargs={"name": kafka_cluster.name})
    client.force_login(personas["admin"])
    response = client.post(page, {"name_pattern": "([", "config_ranges": '{"retention.ms": 5}'})
    assert response.status_code == 200
    assert b"not a valid regular expression" in response.content and b"min" in response.content
    assert not TopicPolicy.objects.exists()


@pytest.mark.django_db
def test_operators_read_the_policy_but_only_admins_change_it(client, personas, kafka_cluster):
    from django.urls import reverse

    page = reverse("topic_policy", kwargs={"name": kafka_cluster.name})
    client.force_login(personas["operator"])
    response = client.get(page)
    assert response.status_code == 200 and b'id="policy"' in response.content
    assert client.post(page, {"max_partitions": "1"}).status_code == 403


def test_collision_warning_against_an_index_of_existing_names():
    index = policy.collision_index(["a_b", "other", "x.y.z", "x_y.z"])
    assert "collides with the existing topic 'a_b'" in policy.collision_warning("a.b", index)
    assert "collides" in policy.collision_warning("x_y_z", index)
    assert policy.collision_warning("a_b", index) == ""  # the same topic is no collision
    assert policy.collision_warning("fresh.name", index) == ""
