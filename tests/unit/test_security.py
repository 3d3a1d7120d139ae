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

EVIL = "^(a+)+$"  # anchored: no other test topic is all a's


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


def _moving_reassignment(personas, cluster, sandbox, topic):
    from tests.conftest import run_now
    from tests.unit.reassign_world import make_topic, start

    make_topic(sandbox, [[1, 2]], mb_per_partition=8, name=topic)
    op, r = start(personas, cluster, {(topic, 0): (1, 3)})
    run_now(op.pk)
    r.refresh_from_db()
    return op, r


def test_a_topic_deleted_mid_move_is_cleaned_up_once_not_audited_for_ever(personas, kafka_cluster, frozen):
    from console.models.reassignment import OWED_STATES, ThrottleEntry
    from console.reassignment import janitor
    from tests.unit.test_operation_faults import drive

    topic = "deleted-mid-move-" + uuid.uuid4().hex[:6]
    op, r = _moving_reassignment(personas, kafka_cluster, frozen, topic)
    gateway_for(kafka_cluster).delete_topics([topic])
    op = drive(op.pk, frozen)
    assert op.finished
    removals = AuditEvent.objects.filter(action="reassignment.throttle.remove").count()
    for _ in range(3):  # beat runs the janitor every 10 s
        janitor.sweep_throttles()
    assert AuditEvent.objects.filter(action="reassignment.throttle.remove").count() == removals
    assert not ThrottleEntry.objects.filter(reassignment=r, state__in=OWED_STATES).exists()


def test_one_cluster_the_janitor_cannot_reach_does_not_stop_it_for_the_others(
    personas, kafka_cluster, frozen, monkeypatch
):
    from console.models import Cluster, Operation
    from console.models.reassignment import OWED_STATES, Reassignment, ThrottleEntry
    from console.reassignment import janitor

    op, r = _moving_reassignment(personas, kafka_cluster, frozen, "janitor-ok-" + uuid.uuid4().hex[:6])
    broken = Cluster.objects.create(name="broken", bootstrap_servers="127.0.0.1:1", request_timeout_s=1)
    other_op = Operation.objects.create(kind="reassignment.execute", cluster=broken, state="errored")
    other = Reassignment.objects.create(operation=other_op, cluster=broken, partitions_total=0)
    ThrottleEntry.objects.create(
        reassignment=other,
        cluster=broken,
        resource_type="BROKER",
        resource_name="1",
        config="leader.replication.throttled.rate",
        value="1",
        state="set",
    )
    real = janitor.gateway_for

    def gateway(cluster):
        if cluster.pk == broken.pk:
            raise ValueError("the stored SASL password cannot be decrypted with the current keys")
        return real(cluster)

    monkeypatch.setattr(janitor, "gateway_for", gateway)
    Operation.objects.filter(pk=op.pk).update(state="errored")  # ended with its throttles owed
    frozen.advance(60)  # the move has finished on Kafka
    cleaned = janitor.sweep_throttles()
    assert r.pk in cleaned
    assert not ThrottleEntry.objects.filter(reassignment=r, state__in=OWED_STATES).exists()
    assert ThrottleEntry.objects.filter(reassignment=other, state__in=OWED_STATES).exists()


class _Listener:
    """A fake "Kafka" on another port that records every byte a client sends it."""

    def __init__(self):
        import socket
        import threading

        self.received = bytearray()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(0.2)
            while not self._stop:
                try:
                    data = conn.recv(65536)
                except OSError:
                    continue
                if not data:
                    break
                self.received += data
            conn.close()

    def close(self):
        self._stop = True
        self.thread.join(2)
        self.sock.close()


SECRET = "s3cret-sasl-pw-do-not-leak"


@pytest.fixture
def sasl_cluster(db, sandbox):
    from console.models import Cluster

    cluster = Cluster(
        name="sasl",
        bootstrap_servers=sandbox.bootstrap_servers,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username="admin",
        request_timeout_s=2,
    )
    cluster.set_sasl_password(SECRET)
    cluster.save()
    return cluster


def _settings_post(cluster, **changes):
    data = {
        "name": cluster.name,
        "description": "",
        "bootstrap_servers": cluster.bootstrap_servers,
        "bootstrap_controllers": "",
        "security_protocol": cluster.security_protocol,
        "sasl_mechanism": cluster.sasl_mechanism,
        "sasl_username": cluster.sasl_username,
        "sasl_password": "",
        "ca_certificate": "",
        "request_timeout_s": "2",
    }
    return {**data, **changes}


@pytest.mark.parametrize("action", ["test", "save"])
def test_the_stored_password_never_goes_to_a_host_an_admin_typed(client, personas, sasl_cluster, action):
    from console.models import Role, RoleBinding

    RoleBinding.objects.create(cluster=sasl_cluster, user=personas["operator"], role=Role.ADMIN)
    client.force_login(personas["operator"])  # an admin of this cluster only
    fake = _Listener()
    try:
        url = reverse("cluster_settings", kwargs={"name": sasl_cluster.name})
        response = client.post(
            url,
            {**_settings_post(sasl_cluster, bootstrap_servers=f"127.0.0.1:{fake.port}"), "action": action},
        )
        time.sleep(0.5)
    finally:
        fake.close()
    assert response.status_code == 200
    assert "Enter the SASL password again" in response.content.decode()
    assert SECRET.encode() not in bytes(fake.received) and not fake.received
    sasl_cluster.refresh_from_db()
    assert sasl_cluster.sasl_password() == SECRET and str(fake.port) not in sasl_cluster.bootstrap_servers


def test_the_stored_password_is_used_with_the_saved_settings_and_every_test_is_audited(
    client, personas, sasl_cluster
):
    from console.clusters import actions as clusters

    client.force_login(personas["admin"])
    url = reverse("cluster_settings", kwargs={"name": sasl_cluster.name})
    response = client.post(
        url, {**_settings_post(sasl_cluster, description="same endpoints"), "action": "test"}
    )
    assert response.status_code == 200 and "Enter the SASL password again" not in response.content.decode()
    event = AuditEvent.objects.filter(action="cluster.test").latest("pk")
    assert event.params["sasl_login_from"] == "stored" and SECRET not in str(event.params)
    assert clusters.password_for(sasl_cluster, {"security_protocol": "SASL_PLAINTEXT"}, "") == SECRET
    with pytest.raises(clusters.PasswordRequired, match="security protocol"):
        clusters.password_for(sasl_cluster, {"security_protocol": "SASL_SSL"}, "")
    assert clusters.password_for(sasl_cluster, {"security_protocol": "SASL_SSL"}, "typed") == "typed"
    client.post(reverse("cluster_test", kwargs={"name": sasl_cluster.name}))
    assert AuditEvent.objects.filter(action="cluster.test").count() == 2


def test_the_policy_form_accepts_only_patterns_the_policy_engine_can_run():
    from console.forms.topics import TopicPolicyForm

    form = TopicPolicyForm(data={"name_pattern": r"(\w+)\1", "protected_topics": "ok-.*\n(a)\\1"})
    assert not form.is_valid()
    assert "not a valid regular expression" in str(form.errors["name_pattern"])
    assert "not a valid regular expression" in str(form.errors["protected_topics"])
