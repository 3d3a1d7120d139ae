"""Producing a message on the sandbox: data.write, what arrives, and the audit trail (never the value)."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from console import access
from console.kafka import KafkaOperationError
from console.messages import actions, audit_names, reads
from console.messages.core import BrowseQuery
from console.models import AuditEvent, DataGrant


@pytest.fixture
def topic(kafka_cluster, personas, sandbox):
    """A 3-partition topic; the viewer may read and write its prefix."""
    prefix = f"p-{uuid.uuid4().hex[:8]}."
    sandbox.create_topic(prefix + "out", partitions=3)
    DataGrant.objects.create(
        cluster=kafka_cluster, user=personas["viewer"], prefix=prefix, read=True, write=True
    )
    return prefix + "out"


def _events():
    return list(AuditEvent.objects.filter(action=audit_names.MESSAGES_PRODUCE).order_by("id"))


def test_it_produces_a_message_that_arrives_with_its_key_and_headers_and_audits_it(
    kafka_cluster, personas, topic
):
    viewer = personas["viewer"]
    written = actions.produce(
        actor=viewer,
        cluster=kafka_cluster,
        topic=topic,
        partition=2,
        key="order-1",
        value='{"total": "SECRET-VALUE"}',
        headers=[("trace", "t-1"), ("bin", b"\x01"), ("none", None)],
        source_ip="10.2.2.2",
    )
    assert (written.partition, written.offset) == (2, 0)
    read = reads.browse(
        actor=viewer,
        cluster=kafka_cluster,
        topic=topic,
        query=BrowseQuery("offset", 2, offset=0, decode="text"),
    )
    [m] = read.messages
    assert (m.key, m.value, m.headers) == (
        "order-1",
        '{"total": "SECRET-VALUE"}',
        (("trace", "t-1"), ("bin", "\x01"), ("none", "")),
    )
    requested, settled = _events()
    params = {"partition": 2, "key": "order-1", "value_size": 25, "headers": ["trace", "bin", "none"]}
    assert (requested.outcome, requested.params, requested.targets, requested.source_ip) == (
        "requested",
        params,
        [f"topic:{topic}"],
        "10.2.2.2",
    )
    assert (settled.outcome, settled.outcomes, settled.actor_name) == (
        "success",
        {f"topic:{topic}": {"ok": True, "partition": 2, "offset": 0}},
        "viewer",
    )
    assert settled.params == {**params, "offset": 0, "requested_event": requested.pk}
    trail = json.dumps([[e.params, e.outcomes, e.before, e.after] for e in AuditEvent.objects.all()])
    assert "SECRET-VALUE" not in trail


def test_it_places_a_keyed_message_with_the_default_partitioner(kafka_cluster, personas, topic):
    from console.kafka.messages import key_partition

    written = actions.produce(
        actor=personas["admin"],
        cluster=kafka_cluster,
        topic=topic,
        partition=None,
        key=b"abc",
        value=None,
        headers=(),
    )
    assert written.partition == key_partition(b"abc", 3)
    _, settled = _events()
    assert (settled.params["key"], settled.params["value_size"], settled.params["partition"]) == (
        "abc",
        None,
        written.partition,
    )


def test_it_keeps_a_long_or_binary_key_short_in_the_trail(kafka_cluster, personas, topic):
    viewer = personas["viewer"]
    actions.produce(actor=viewer, cluster=kafka_cluster, topic=topic, partition=0, key="x" * 300, value="v")
    actions.produce(actor=viewer, cluster=kafka_cluster, topic=topic, partition=0, key=b"\xff\x00", value="v")
    assert [e.params["key"] for e in _events() if e.outcome == "requested"] == ["x" * 200, "hex:ff00"]


def test_it_refuses_a_producer_without_data_write(kafka_cluster, personas, topic):
    DataGrant.objects.filter(user=personas["viewer"]).update(write=False)
    for who in (personas["viewer"], personas["operator"], access.system_actor()):
        with pytest.raises(PermissionDenied) as caught:
            actions.produce(actor=who, cluster=kafka_cluster, topic=topic, partition=0, key=None, value="v")
        assert (
            str(caught.value)
            == f"You need the 'data.write' permission on cluster 'sandbox' for topic '{topic}'."
        )
    assert [(e.actor_name, e.outcome) for e in _events()] == [
        ("viewer", "refused"),
        ("operator", "refused"),
        ("console-system", "refused"),
    ]
    with pytest.raises(ValidationError, match="not a partition number"):
        actions.produce(
            actor=personas["admin"], cluster=kafka_cluster, topic=topic, partition=-1, key=None, value="v"
        )
    with pytest.raises(ValidationError, match="Headers are named"):
        actions.produce(
            actor=personas["admin"],
            cluster=kafka_cluster,
            topic=topic,
            partition=0,
            key=None,
            value="v",
            headers=[("", "x")],
        )


def test_it_records_a_failed_produce(kafka_cluster, personas, topic):
    with pytest.raises(KafkaOperationError) as caught:
        actions.produce(
            actor=personas["admin"], cluster=kafka_cluster, topic=topic, partition=9, key=None, value="v"
        )
    assert caught.value.name == "UNKNOWN_TOPIC_OR_PARTITION"
    requested, failed = _events()
    assert (requested.outcome, failed.outcome, failed.outcomes[f"topic:{topic}"]["error"]) == (
        "requested",
        "failed",
        "UNKNOWN_TOPIC_OR_PARTITION",
    )
