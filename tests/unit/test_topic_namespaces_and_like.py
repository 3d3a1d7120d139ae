"""Topic conveniences (issue 39 item 9): per-namespace required configs and defaults applied at
creation (the policy), and "create like this topic" on the page, the API and the CLI."""

from __future__ import annotations

import json
import uuid

import pytest
from django.urls import reverse

from console.clusters.actions import gateway_for
from console.forms.topics import TopicPolicyForm
from console.identity import tokens
from console.kafka import ConfigResource, KafkaOperationError
from console.models import AuditEvent, TopicPolicy
from console.requests import actions as requests
from console.requests import checks as request_checks
from console.topics import actions as topics
from console.topics import namespaces, policy
from console.topics import reads as topic_reads
from console.topics.batch import TopicSpec
from tests.unit.kafka_cli import kafka

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]

RULES = {
    "team-a.": {
        "required": ["retention.ms"],
        "defaults": {"cleanup.policy": "compact", "min.insync.replicas": "1"},
    },
    "team-a.pay.": {"required": ["max.message.bytes"], "defaults": {"min.insync.replicas": "2"}},
}


def test_longer_prefixes_win_and_required_keys_add_up():
    rules = policy.PolicyRules(namespace_rules=RULES)
    seen = namespaces.settings(RULES, "team-a.pay.cards")
    assert seen.prefixes == ("team-a.", "team-a.pay.")
    assert dict(seen.required) == {"retention.ms": "team-a.", "max.message.bytes": "team-a.pay."}
    assert seen.defaults["min.insync.replicas"] == ("2", "team-a.pay.")
    merged, applied = namespaces.with_defaults(RULES, "team-a.pay.cards", {"cleanup.policy": "delete"})
    assert merged == {"cleanup.policy": "delete", "min.insync.replicas": "2"}  # what is given wins
    assert (
        namespaces.applied_text(applied) == "namespace 'team-a.pay.' defaults applied: min.insync.replicas=2"
    )
    assert namespaces.with_defaults(RULES, "team-b.x", {}) == ({}, {})
    missing = policy.check_create(
        rules, name="team-a.pay.cards", partitions=1, replication_factor=1, configs=merged
    )
    assert sorted(v.message for v in missing) == [
        "Topics in namespace 'team-a.' must set retention.ms.",
        "Topics in namespace 'team-a.pay.' must set max.message.bytes.",
    ]
    assert {v.rule for v in missing} == {"namespace_required"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"bad prefix!": {}}', "a namespace is a topic-name prefix"),
        ('{"a.": {"required": "retention.ms"}}', '"required" is a list of config keys'),
        ('{"a.": {"defaults": {"x": true}}}', '"defaults" maps config keys to values'),
        ('{"a.": {"other": 1}}', 'give only "required"'),
        ("[1]", "Write {"),
        ("{", "Line 1"),
    ],
)
def test_the_policy_form_refuses_bad_namespace_rules(text, message):
    form = TopicPolicyForm({"namespace_rules": text})
    assert not form.is_valid() and message in " ".join(form.errors["namespace_rules"])


def test_the_policy_form_refuses_keys_outside_the_allowed_ones():
    form = TopicPolicyForm(
        {
            "allowed_config_keys": "retention.ms",
            "namespace_rules": json.dumps({"a.": {"required": ["segment.ms"]}}),
        }
    )
    assert not form.is_valid() and "segment.ms: not in allowed_config_keys" in " ".join(
        form.errors["namespace_rules"]
    )
    good = TopicPolicyForm({"namespace_rules": json.dumps({"a.": {"defaults": {"retention.ms": 60000}}})})
    assert good.is_valid() and good.cleaned_data["namespace_rules"] == {
        "a.": {"required": [], "defaults": {"retention.ms": "60000"}}
    }


def _configs_of(cluster, name) -> dict:
    got = gateway_for(cluster).describe_configs([ConfigResource("TOPIC", name)])[
        ConfigResource("TOPIC", name)
    ]
    return {k: e.value for k, e in got.items() if e.source == "DYNAMIC_TOPIC_CONFIG"}


def test_creation_applies_defaults_and_refuses_a_missing_required_key(personas, kafka_cluster, client):
    TopicPolicy.objects.create(cluster=kafka_cluster, namespace_rules=RULES)
    tag = uuid.uuid4().hex[:8]
    missing = f"team-a.{tag}-a"
    result = topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(missing, 1, 1)]
    )
    outcome = result.outcomes[0]
    assert not outcome.ok and "must set retention.ms" in outcome.message
    assert isinstance(gateway_for(kafka_cluster).describe_topics([missing])[missing], KafkaOperationError)

    made = f"team-a.{tag}-b"
    result = topics.create_topics(
        actor=personas["operator"],
        cluster=kafka_cluster,
        specs=[TopicSpec(made, 1, 1, configs={"retention.ms": "3600000"})],
    )
    outcome = result.outcomes[0]
    assert outcome.ok and "namespace 'team-a.' defaults applied: cleanup.policy=compact" in outcome.warning
    assert _configs_of(kafka_cluster, made) == {
        "retention.ms": "3600000",
        "cleanup.policy": "compact",
        "min.insync.replicas": "1",
    }
    event = AuditEvent.objects.get(action="topic.create", outcome="success", targets__icontains=made)
    assert event.after[f"topic:{made}"]["configs"]["cleanup.policy"] == "compact"

    # The page shows the namespaces and says which defaults a create used.
    client.force_login(personas["operator"])
    url = reverse("topic_create", kwargs={"name": kafka_cluster.name})
    assert 'id="create-namespaces"' in client.get(url).content.decode()
    page = client.post(url, {"name": f"team-a.{tag}-c", "cfg__retention.ms": "3600000", "action": "validate"})
    assert "defaults applied: cleanup.policy=compact" in page.content.decode()


def test_a_request_carries_the_defaults_to_the_approver(personas, kafka_cluster):
    TopicPolicy.objects.create(cluster=kafka_cluster, namespace_rules=RULES)
    name = "team-a." + uuid.uuid4().hex[:10]
    payload = {"name": name, "partitions": 1, "replication_factor": 1, "configs": {"retention.ms": "3600000"}}
    req = requests.submit_request(
        actor=personas["requester"], cluster=kafka_cluster, kind="topic.create", payload=payload
    )
    assert req.payload["configs"]["cleanup.policy"] == "compact"
    with pytest.raises(request_checks.RequestInvalid, match="must set retention.ms"):
        requests.submit_request(
            actor=personas["requester"],
            cluster=kafka_cluster,
            kind="topic.create",
            payload={**payload, "configs": {}},
        )


@pytest.fixture
def source(personas, kafka_cluster):
    name = f"like-src-{uuid.uuid4().hex[:8]}"
    configs = {
        "retention.ms": "3600000",
        "cleanup.policy": "compact",
        "message.timestamp.type": "LogAppendTime",
    }
    result = topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 3, 2, configs=configs)]
    )
    assert result.outcomes[0].ok
    return name


def test_settings_of_copies_counts_and_own_configs_only(personas, kafka_cluster, source):
    got = topic_reads.settings_of(actor=personas["viewer"], cluster=kafka_cluster, name=source)
    assert (got.partitions, got.replication_factor) == (3, 2)
    assert got.configs == {
        "cleanup.policy": "compact",
        "message.timestamp.type": "LogAppendTime",
        "retention.ms": "3600000",
    }
    spec = got.spec_for(TopicSpec("new", -1, -1, configs={"retention.ms": "60000"}))
    assert (spec.partitions, spec.replication_factor, spec.configs["retention.ms"]) == (3, 2, "60000")
    with pytest.raises(KafkaOperationError):
        topic_reads.settings_of(
            actor=personas["viewer"], cluster=kafka_cluster, name="no-such-topic-" + source
        )


def test_create_like_on_the_page_the_api_and_the_cli(client, personas, kafka_cluster, source):
    client.force_login(personas["operator"])
    detail = client.get(
        reverse("topic_detail", kwargs={"name": kafka_cluster.name, "topic": source})
    ).content.decode()
    assert f'/topics/-/new/?like={source}" id="topic-create-like"' in detail
    url = reverse("topic_create", kwargs={"name": kafka_cluster.name})
    body = client.get(url, {"like": source}).content.decode()
    assert 'id="create-like"' in body and "3 partitions, replication factor 2" in body
    assert 'value="3600000"' in body and 'value="3"' in body
    missing = client.get(url, {"like": "no-such-" + source})
    assert missing.status_code == 200 and 'id="create-like-error"' in missing.content.decode()

    token = tokens.create_token(actor=personas["operator"], name="t", scope="write", days=1).secret
    api_name = source + "-api"
    answer = client.post(
        reverse("api:topics", kwargs={"name": kafka_cluster.name}),
        {"name": api_name, "like": source, "partitions": 1},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert answer.status_code == 201, answer.content
    meta = gateway_for(kafka_cluster).describe_topics([api_name])[api_name]
    assert len(meta.partitions) == 1 and len(meta.partitions[0].replicas) == 2
    assert _configs_of(kafka_cluster, api_name)["cleanup.policy"] == "compact"
    bad = client.post(
        reverse("api:topics", kwargs={"name": kafka_cluster.name}),
        {"name": source + "-x", "like": "no-such-" + source},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert bad.status_code in (404, 502) and "UNKNOWN_TOPIC_OR_PARTITION" in bad.content.decode()

    cli_name = source + "-cli"
    code, out = kafka(
        "topics", "create", cli_name, "--like", source, "--config", "retention.ms=60000", "--as", "operator"
    )
    assert code == 0, out
    assert _configs_of(kafka_cluster, cli_name)["retention.ms"] == "60000"
    assert len(gateway_for(kafka_cluster).describe_topics([cli_name])[cli_name].partitions) == 3
    code, out = kafka("topics", "create", "--file", "-", "--like", source, "--as", "operator")
    assert code == 2
