"""Topic services against the sandbox: list, describe, create, delete, add partitions, audit rows."""

from __future__ import annotations

import uuid

import pytest
from django.core.exceptions import PermissionDenied

from console.audit import store as audit
from console.clusters.actions import gateway_for
from console.kafka import KafkaOperationError, NewTopic
from console.models import AuditEvent, TopicPolicy
from console.topics import actions as topics
from console.topics import cache as metadata_cache
from console.topics import delete as topic_delete
from console.topics import reads as topic_reads
from console.topics.batch import TopicSpec
from console.topics.policy import PolicyViolation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def uniq(prefix: str = "t") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def gateway(cluster):
    return gateway_for(cluster)


def exists(cluster, name: str) -> bool:
    return not isinstance(gateway(cluster).describe_topics([name])[name], KafkaOperationError)


def test_it_creates_a_topic_with_configs_and_audits_the_outcome(personas, kafka_cluster):
    name = uniq("orders")
    result = topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[TopicSpec(name, 3, 2, configs={"retention.ms": "3600000"})],
        source_ip="10.0.0.1",
    )
    assert [(o.name, o.ok, o.status) for o in result.outcomes] == [(name, True, "created")]
    meta = gateway(kafka_cluster).describe_topics([name])[name]
    assert len(meta.partitions) == 3 and meta.replication_factor == 2
    event = AuditEvent.objects.get(pk=result.event_id)
    assert event.action == "topic.create"
    assert event.actor_name == "operator"
    assert event.source_ip == "10.0.0.1"
    assert event.targets == [f"topic:{name}"]
    assert event.outcomes == {f"topic:{name}": {"ok": True, "status": "created"}}
    assert event.after == {
        f"topic:{name}": {"partitions": 3, "replication_factor": 2, "configs": {"retention.ms": "3600000"}}
    }
    assert event.outcome == "success"
    assert audit.verify_chain().ok


def test_it_validates_only_without_creating(personas, kafka_cluster):
    name = uniq()
    result = topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 1, 1)], validate_only=True
    )
    assert result.outcomes[0].status == "valid (dry run)" and result.outcomes[0].ok
    assert not exists(kafka_cluster, name)
    assert AuditEvent.objects.get(pk=result.event_id).action == "topic.create.validate"


def create_as_operator(personas, cluster, *specs: TopicSpec):
    return topics.create_topics(actor=personas["operator"], cluster=cluster, specs=list(specs))


def test_a_batch_gets_one_outcome_per_topic(personas, kafka_cluster):
    good, taken = uniq("good"), uniq("taken")
    create_as_operator(personas, kafka_cluster, TopicSpec(taken, 1, 1))
    result = create_as_operator(
        personas,
        kafka_cluster,
        TopicSpec(good, 2, 1),
        TopicSpec(taken, 1, 1),
        TopicSpec("bad name!", 1, 1),
        TopicSpec(uniq("rf"), 1, 99),
        TopicSpec(uniq("cfg"), 1, 1, configs={"no.such.config": "1"}),
    )
    statuses = [o.status for o in result.outcomes]
    assert statuses == ["created", "already exists", "refused by policy", "refused by policy", "invalid"]
    assert result.partial
    assert "[policy rule: topic_name]" in result.outcomes[2].message
    assert "[policy rule: replication_factor]" in result.outcomes[3].message
    assert result.outcomes[4].error_name == "INVALID_CONFIG"
    event = AuditEvent.objects.get(pk=result.event_id)
    assert event.outcome == "partial"
    assert len(event.outcomes) == 5
    assert event.outcomes[f"topic:{taken}"]["error"] == "TOPIC_ALREADY_EXISTS"


def test_a_topic_listed_twice_is_created_from_its_first_listing_and_says_so(personas, kafka_cluster):
    twice, refused, once = uniq("twice"), uniq("refused"), uniq("once")
    result = create_as_operator(
        personas,
        kafka_cluster,
        TopicSpec(twice, 2, 1),
        TopicSpec(refused, 1, 99),
        TopicSpec(once, 1, 1),
        TopicSpec(twice, 5, 1),
        TopicSpec(refused, 1, 1),
    )
    by_name = {o.name: o for o in result.outcomes}
    assert list(by_name) == [twice, refused, once]  # one row per topic, in first-listed order
    assert (by_name[twice].status, by_name[refused].status, by_name[once].status) == (
        "created",
        "refused by policy",
        "created",
    )
    note = "only its first listing was used"
    assert note in by_name[twice].warning and note in by_name[refused].warning and not by_name[once].warning
    assert len(gateway(kafka_cluster).describe_topics([twice])[twice].partitions) == 2
    assert not exists(kafka_cluster, refused)
    events = AuditEvent.objects.filter(action="topic.create").order_by("-id")
    requested, outcome = events.filter(outcome="requested").first(), events.get(pk=result.event_id)
    for event in (requested, outcome):
        assert event.targets == [f"topic:{n}" for n in (twice, refused, once)], event.outcome
    assert requested.params["topics"][f"topic:{twice}"]["partitions"] == 2  # the listing that was used
    assert outcome.after[f"topic:{twice}"]["partitions"] == 2


def test_create_topics_asks_for_v4_whose_answer_has_no_configs(personas, kafka_cluster, monkeypatch):
    """From v5 Kafka answers every created topic's whole config; nothing reads it (1,000 topics:
    a third of the round trip). The per-topic verdicts are v4's, as before."""
    gw = gateway(kafka_cluster)
    sent, send = [], gw._kp.send

    def spy(request, *args):
        response = send(request, *args)
        sent.append((type(request).__name__, response.API_VERSION))
        return response

    monkeypatch.setattr(gw._kp, "send", spy)
    good, taken = uniq("v4"), uniq("v4")
    gw.create_topics([NewTopic(taken, 1, 1)])
    result = gw.create_topics([NewTopic(good, 2, 1), NewTopic(taken, 1, 1), NewTopic(uniq("v4"), 1, 99)])
    assert sent == [("CreateTopicsRequest", 4)] * 2
    assert [getattr(v, "name", "ok") for v in result.values()] == [
        "ok",
        "TOPIC_ALREADY_EXISTS",
        "INVALID_REPLICATION_FACTOR",
    ]
    assert "only 3 broker(s) are registered" in result[list(result)[2]].message  # Kafka's own text (v1+)


def test_the_policy_limits_are_named_in_the_refusal(personas, kafka_cluster):
    TopicPolicy.objects.create(
        cluster=kafka_cluster,
        max_partitions=4,
        allowed_replication_factors=[1],
        name_pattern=r"team-[a-z]+\..+",
        config_ranges={"retention.ms": {"min": 1000, "max": 86400000}},
    )
    result = topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[
            TopicSpec("team-a.ok", 2, 1),
            TopicSpec("nope", 2, 1),
            TopicSpec("team-a.big", 5, 1),
            TopicSpec("team-a.rf", 1, 2),
            TopicSpec("team-a.ret", 1, 1, configs={"retention.ms": "10"}),
        ],
        validate_only=True,
    )
    assert [o.ok for o in result.outcomes] == [True, False, False, False, False]
    rules = [o.message.rsplit("[policy rule: ", 1)[1].rstrip("]") for o in result.outcomes[1:]]
    assert rules == ["name_pattern", "max_partitions", "allowed_replication_factors", "config_ranges"]


def test_a_batch_over_the_size_limit_is_refused_whole(personas, kafka_cluster):
    TopicPolicy.objects.create(cluster=kafka_cluster, max_batch_size=2)
    with pytest.raises(PolicyViolation, match="max_batch_size"):
        topics.create_topics(
            actor=personas["operator"],
            cluster=kafka_cluster,
            specs=[TopicSpec(uniq(), 1, 1) for _ in range(3)],
        )
    assert not AuditEvent.objects.exclude(outcome="refused").exists()
    assert AuditEvent.objects.filter(action="topic.create", outcome="refused").count() == 1


@pytest.mark.parametrize("who", ["viewer", "requester", "auditor", "outsider"])
def test_only_operators_create_topics(personas, kafka_cluster, who):
    with pytest.raises(PermissionDenied, match="topic.manage"):
        topics.create_topics(actor=personas[who], cluster=kafka_cluster, specs=[TopicSpec(uniq(), 1, 1)])


def test_it_warns_about_a_dot_underscore_collision(personas, kafka_cluster):
    base = uniq("coll").replace(".", "_")
    topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(f"{base}_x", 1, 1)]
    )
    topic_reads.list_topics(
        actor=personas["operator"], cluster=kafka_cluster
    )  # warms the cache the check uses
    result = topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[TopicSpec(f"{base}.x", 1, 1)],
        validate_only=True,
    )
    # Kafka (KRaft) refuses the colliding name, also in a dry run; the headline says why (once).
    assert result.outcomes[0].status == "name collides"
    assert result.outcomes[0].message.startswith(f"'{base}.x' collides with the existing topic '{base}_x'")
    assert result.outcomes[0].warning == ""


def test_it_headlines_a_name_collision_with_the_existing_topic_not_as_bad_characters(personas, kafka_cluster):
    base = uniq("walk").replace(".", "_")
    topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(f"{base}.acl", 1, 1)]
    )
    result = topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(f"{base}_acl", 1, 1)]
    )
    # Kafka (KRaft) answers INVALID_TOPIC_EXCEPTION "Topic 'x_acl' collides with existing topic: x.acl";
    # the headline names the existing topic instead of Kafka's generic "use only letters, digits..." text.
    outcome = result.outcomes[0]
    expected = (
        f"'{base}_acl' collides with the existing topic '{base}.acl': Kafka refuses a name that equals "
        "an existing one once '.' and '_' are treated alike (they map to the same metric name). Pick another name."
    )
    assert (outcome.ok, outcome.status, outcome.error_name, outcome.message, outcome.warning) == (
        False,
        "name collides",
        "INVALID_TOPIC_EXCEPTION",
        expected,
        "",
    )
    assert not exists(kafka_cluster, f"{base}_acl")
    event = AuditEvent.objects.get(pk=result.event_id)
    assert (event.action, event.outcome) == ("topic.create", "failure")
    assert event.outcomes == {
        f"topic:{base}_acl": {
            "ok": False,
            "status": "name collides",
            "error": "INVALID_TOPIC_EXCEPTION",
            "message": expected,
        }
    }


def test_the_list_filters_sorts_and_pages_from_one_fetch(personas, kafka_cluster, sandbox):
    prefix = uniq("lst")
    specs = [TopicSpec(f"{prefix}.{i:02d}", i % 3 + 1, 1) for i in range(12)]
    topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=specs)
    page = topic_reads.list_topics(
        actor=personas["viewer"],
        cluster=kafka_cluster,
        query=prefix,
        sort="partitions",
        descending=True,
        per_page=5,
        page=2,
    )
    assert page.total == 12 and page.pages == 3 and page.page == 2
    assert [i.row.partitions for i in page.items] == [2, 2, 2, 1, 1]
    regex = topic_reads.list_topics(
        actor=personas["viewer"], cluster=kafka_cluster, query=rf"^{prefix}\.0[0-4]$", regex=True
    )
    assert [i.row.name for i in regex.items] == [f"{prefix}.{i:02d}" for i in range(5)]
    assert regex.items[0].cleanup_policy == "delete"
    bad = topic_reads.list_topics(actor=personas["viewer"], cluster=kafka_cluster, query="([", regex=True)
    assert bad.total == 0 and "not valid" in bad.query_error


def test_the_list_is_cached_until_refreshed(personas, kafka_cluster, sandbox):
    first = topic_reads.list_topics(actor=personas["viewer"], cluster=kafka_cluster)
    name = uniq("late")
    sandbox.create_topic(name, 1, 1)  # behind the console's back
    cached = topic_reads.list_topics(actor=personas["viewer"], cluster=kafka_cluster, query=name)
    assert cached.total == 0 and cached.fetched_at == first.fetched_at
    fresh = topic_reads.list_topics(actor=personas["viewer"], cluster=kafka_cluster, query=name, refresh=True)
    assert fresh.total == 1 and fresh.fetched_at > first.fetched_at


def test_internal_topics_are_hidden_unless_asked(personas, kafka_cluster, sandbox):
    if "__consumer_offsets" not in metadata_cache.get_snapshot(kafka_cluster).by_name:
        sandbox.create_topic("__consumer_offsets", 1, 1)
        metadata_cache.clear()
    hidden = topic_reads.list_topics(actor=personas["viewer"], cluster=kafka_cluster, query="__consumer")
    shown = topic_reads.list_topics(
        actor=personas["viewer"], cluster=kafka_cluster, query="__consumer", include_internal=True
    )
    assert hidden.total == 0
    assert [i.row.internal for i in shown.items] == [True]


def test_the_detail_has_partitions_offsets_configs_and_events(personas, kafka_cluster):
    name = uniq("detail")
    topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[TopicSpec(name, 3, 2, configs={"retention.ms": "1000"})],
    )
    detail = topic_reads.describe_topic(actor=personas["viewer"], cluster=kafka_cluster, name=name)
    assert [p.id for p in detail.partitions] == [0, 1, 2]
    assert all(
        len(p.replicas) == 2 and p.start_offset is not None and p.end_offset is not None
        for p in detail.partitions
    )
    assert detail.total_messages == sum(p.messages for p in detail.partitions)
    assert detail.configs[0].name == "retention.ms" and detail.configs[0].source == "DYNAMIC_TOPIC_CONFIG"
    assert [(e.action, e.outcome) for e in detail.events] == [
        ("topic.create", "success"),
        ("topic.create", "requested"),
    ]


def test_a_missing_topic_raises_unknown_topic(personas, kafka_cluster):
    with pytest.raises(KafkaOperationError) as info:
        topic_reads.describe_topic(actor=personas["viewer"], cluster=kafka_cluster, name=uniq("missing"))
    assert info.value.name == "UNKNOWN_TOPIC_OR_PARTITION"


def test_delete_needs_the_typed_confirmation(personas, kafka_cluster):
    name = uniq("del")
    topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 1, 1)])
    with pytest.raises(topic_delete.ConfirmationError, match=name):
        topic_delete.delete_topics(
            actor=personas["operator"], cluster=kafka_cluster, names=[name], confirmation="yes"
        )
    assert exists(kafka_cluster, name)
    result = topic_delete.delete_topics(
        actor=personas["operator"], cluster=kafka_cluster, names=[name], confirmation=name
    )
    assert [(o.status, o.ok) for o in result.outcomes] == [("deleted", True)]
    assert not exists(kafka_cluster, name)
    event = AuditEvent.objects.get(pk=result.event_id)
    assert event.action == "topic.delete" and event.before == {
        f"topic:{name}": {"partitions": 1, "replication_factor": 1}
    }


def test_delete_refuses_internal_and_protected_topics_with_the_reason(personas, kafka_cluster, sandbox):
    keep, drop = uniq("keep"), uniq("drop")
    TopicPolicy.objects.create(cluster=kafka_cluster, protected_topics=[r"keep\..*"])
    topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[TopicSpec(keep, 1, 1), TopicSpec(drop, 1, 1)],
    )
    if not exists(kafka_cluster, "__consumer_offsets"):
        sandbox.create_topic("__consumer_offsets", 1, 1)
    metadata_cache.clear()
    names = [keep, drop, "__consumer_offsets", uniq("ghost")]
    result = topic_delete.delete_topics(
        actor=personas["operator"], cluster=kafka_cluster, names=names, confirmation="4"
    )
    by_name = {o.name: o for o in result.outcomes}
    assert by_name[keep].status == "refused" and "protected_topics" in by_name[keep].message
    assert (
        by_name["__consumer_offsets"].status == "refused"
        and "internal" in by_name["__consumer_offsets"].message
    )
    assert by_name[drop].status == "deleted"
    assert by_name[names[3]].status == "does not exist"
    assert exists(kafka_cluster, keep) and not exists(kafka_cluster, drop)
    assert AuditEvent.objects.get(pk=result.event_id).outcome == "partial"


def test_add_partitions_grows_the_topic_and_refuses_shrinking(personas, kafka_cluster):
    name = uniq("grow")
    topics.create_topics(actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 2, 1)])
    dry = topics.add_partitions(
        actor=personas["operator"], cluster=kafka_cluster, topic=name, total_count=4, validate_only=True
    )
    assert dry.ok and len(gateway(kafka_cluster).describe_topics([name])[name].partitions) == 2
    done = topics.add_partitions(actor=personas["operator"], cluster=kafka_cluster, topic=name, total_count=4)
    assert done.status == "partitions added"
    assert len(gateway(kafka_cluster).describe_topics([name])[name].partitions) == 4
    event = AuditEvent.objects.filter(action="topic.partitions.add").exclude(outcome="requested").get()
    assert (event.before, event.after) == ({"partitions": 2}, {"partitions": 4})
    with pytest.raises(PolicyViolation, match="more than the current 4"):
        topics.add_partitions(actor=personas["operator"], cluster=kafka_cluster, topic=name, total_count=3)


def test_an_unreachable_cluster_is_a_clear_error_not_a_crash(personas, offline_cluster):
    with pytest.raises(KafkaOperationError) as info:
        topic_reads.list_topics(actor=personas["admin"], cluster=offline_cluster)
    assert info.value.name == "NETWORK_EXCEPTION"


def test_expired_snapshots_are_dropped_and_at_most_the_limit_kept(personas, kafka_cluster, monkeypatch):
    """Memory is given back: an expired snapshot goes at the next read of any cluster's, and past
    the limit the least recently read one goes first."""
    from console.models import Cluster

    others = [
        Cluster.objects.create(name=uniq("c"), bootstrap_servers=kafka_cluster.bootstrap_servers)
        for _ in range(2)
    ]
    a, b, c = kafka_cluster, *others
    metadata_cache.clear()
    monkeypatch.setattr(metadata_cache, "MAX_CLUSTERS", 2)
    keys = {metadata_cache._key(x): x.name for x in (a, b, c)}

    def kept() -> list[str]:
        return [keys[k] for k in metadata_cache._cache]

    first_a = metadata_cache.get_snapshot(a)
    metadata_cache.get_snapshot(b)
    assert metadata_cache.get_snapshot(a) is first_a  # read again: now the most recent
    metadata_cache.get_snapshot(c)
    assert kept() == [a.name, c.name]  # b, the least recently read, went
    monkeypatch.setattr(metadata_cache, "TTL_S", 0.0)  # every snapshot has expired
    assert metadata_cache.peek(b) is None and kept() == []
    metadata_cache.clear()
