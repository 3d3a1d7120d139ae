"""``manage.py kafka`` with kafka-topics' option names, against the sandbox or a real Kafka (the same test)."""

from __future__ import annotations

import json

import pytest

from console.models import Cluster
from tests.conftest import make_personas
from tests.unit.kafka_cli import kafka

from .conftest import unique

pytestmark = pytest.mark.django_db


def test_it_speaks_kafka_topics_options_to_the_cluster(endpoints, broker_ids):
    cluster = Cluster.objects.create(name="contract", bootstrap_servers=endpoints.bootstrap_servers)
    make_personas(cluster)
    name = unique("h38cli")
    first, second = broker_ids[0], broker_ids[1]
    try:
        code, out = kafka(
            "topics", "create", "--topic", name, "--replica-assignment", f"{first}:{second},{second}:{first}",
            "--config", "retention.ms=5000", "--as", "operator",
        )  # fmt: skip
        assert code == 0, out
        code, out = kafka("topics", "describe", "--topic", name, "--output", "json")
        data = json.loads(out)
        assert code == 0 and data["configs"] == {"retention.ms": "5000"}
        assert [p["replicas"] for p in data["items"]] == [f"{first},{second}", f"{second},{first}"]
        code, out = kafka("configs", "describe", "--topic", name, "--output", "json")
        assert (
            code == 0
            and {"name": "retention.ms", "value": "5000"}.items()
            <= next(r for r in json.loads(out)["items"] if r["name"] == "retention.ms").items()
        )
        code, out = kafka(
            "topics", "add-partitions", "--topic", name, "--partitions", "-1", "--as", "operator"
        )
        assert code == 2 and "must be a whole number of at least 1" in out
        code, out = kafka("topics", "create", "--topic", unique("h38cli"), "--replica-assignment", "9999:9998",
                          "--as", "operator")  # fmt: skip
        assert code == 4 and "Unknown broker ids: 9998, 9999." in out
    finally:
        code, out = kafka("topics", "delete", "--topic", name, "--confirm", name, "--as", "operator")
    assert code == 0, out
