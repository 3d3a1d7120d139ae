"""The transactions tests' world on the sandbox: a topic with a live producer's open transaction and a
hanging one (``make_world``: the body of the area's and the doors' ``world`` fixtures)."""

from __future__ import annotations

import uuid

from confluent_kafka import Producer

from console.clusters.actions import gateway_for
from console.kafka import NewTopic
from sandbox.testing import hanging_transaction

TWENTY_MIN = 20 * 60_000  # find-hanging's default threshold is 15 minutes


def make_world(kafka_cluster, sandbox):
    """A 2-partition topic; a live producer's open transaction on partition 0 (its coordinator knows
    it), and a hanging one (20 minutes old, no coordinator knows it) on partition 1."""
    gw = gateway_for(kafka_cluster)
    topic = f"txn-{uuid.uuid4().hex[:10]}"
    assert gw.create_topics([NewTopic(topic, 2, 2, None, {})])[topic].__class__.__name__ == "Ok"
    tid = f"tx/{uuid.uuid4().hex[:10]}"  # "/" as in real ids (app/instance): the pages and API take it
    producer = Producer(
        {
            "bootstrap.servers": sandbox.bootstrap_servers,
            "transactional.id": tid,
            "transaction.timeout.ms": 600_000,
        }
    )
    producer.init_transactions(20)
    producer.begin_transaction()
    producer.produce(topic, b"open", partition=0)
    producer.flush(10)
    gw.produce_record(topic, partition=1, key=None, value=b"before")
    hung = hanging_transaction(sandbox, topic, 1, records=2, age_ms=TWENTY_MIN)
    yield {"topic": topic, "tid": tid, "hung": hung}
    producer.abort_transaction(10)
    del producer  # librdkafka's handle goes now, not at the end of the run
    gw.delete_topics([topic])
