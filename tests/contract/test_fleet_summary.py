"""The fleet home's summary row, written by a telemetry snapshot, agrees with what Kafka says: the
brokers and the active controller (DescribeCluster, DescribeQuorum), metadata.version (ApiVersions'
finalized level, named as Kafka names it) and the brokers' release, a topic whose min.insync.replicas
is above its replication factor counted under min ISR on every partition, and an ACL's principal."""

from __future__ import annotations

import re

import pytest

from console.kafka import AclBinding, AclBindingFilter, KafkaOperationError
from console.models import Cluster, ClusterSummary
from console.telemetry import snapshots, summary

from .conftest import eventually, unique

pytestmark = [pytest.mark.contract, pytest.mark.django_db]


def test_the_summary_agrees_with_kafka(gw, endpoints, topics, telemetry_lake, broker_ids):
    rf = min(3, len(broker_ids))
    name = topics.create(partitions=3, replication_factor=rf, configs={"min.insync.replicas": str(rf + 1)})
    principal = f"User:{unique('fleet')}"
    binding = AclBinding("TOPIC", name, "LITERAL", principal, "*", "READ", "ALLOW")
    assert not isinstance(gw.create_acls([binding])[binding], KafkaOperationError)
    cluster = Cluster.objects.create(name="fleet-contract", bootstrap_servers=endpoints.bootstrap_servers)
    try:
        eventually(lambda: [b.principal for b in gw.describe_acls()], lambda ps: principal in ps)
        result = snapshots.collect_for(cluster)
        assert not isinstance(result, str), result
        row = ClusterSummary.objects.get(cluster=cluster)

        brokers = gw.describe_cluster().brokers
        feature = gw.describe_features()["metadata.version"]
        assert (row.reachable, row.error) == (True, "")
        assert (row.brokers_total, row.brokers_up) == (len(brokers), len(brokers))
        assert row.controller_id == gw.describe_quorum().leader_id  # the active controller, not Metadata's
        assert re.fullmatch(r"\d+\.\d+-IV\d+", row.metadata_version), row.metadata_version
        assert re.fullmatch(r"\d+\.\d+", row.kafka_version), row.kafka_version
        assert 1 <= feature.finalized_max <= feature.supported_max
        # the brokers' release is at least what the cluster is finalized at
        assert summary.version_key(row.kafka_version) >= summary.version_key(row.metadata_version)[:2]
        assert row.topics >= 1 and row.partitions >= 3
        assert row.under_min_isr >= 3  # every partition of the topic: an ISR of rf < rf + 1
        assert (row.under_replicated, row.offline) == (0, 0)  # a healthy cluster
        assert [principal, 1] in row.principals
    finally:
        gw.delete_acls([AclBindingFilter(principal=principal)])
