"""Unit tests of the gateway's pure pieces: connection settings, error translation, summaries."""

from __future__ import annotations

import pickle
from contextlib import contextmanager

import pytest

from console.kafka import (
    OPERATOR_TEXT,
    AclBinding,
    ClusterConnection,
    KafkaOperationError,
    PartitionMetadata,
    TopicMetadata,
    close_all,
    get_gateway,
    parse_addresses,
)
from console.kafka.acls import validate_binding
from console.kafka.clientconf import confluent_config, kafka_python_config
from console.kafka.cluster import summarize
from console.kafka.errors import from_code, from_confluent, from_kafka_python, translate


class TestClusterConnection:
    def test_servers_or_controllers_never_both(self):
        with pytest.raises(ValueError, match="not both"):
            ClusterConnection(bootstrap_servers="a:9092", bootstrap_controllers="b:9093")

    def test_one_of_them_is_required(self):
        with pytest.raises(ValueError, match="bootstrap servers .brokers. or bootstrap controllers"):
            ClusterConnection(bootstrap_servers="  ")

    @pytest.mark.parametrize("bad", ["host", "host:", "host:0", "host:70000", "a b:1", ":9092"])
    def test_bad_addresses(self, bad):
        with pytest.raises(ValueError):
            ClusterConnection(bootstrap_servers=bad)

    def test_addresses_parsed(self):
        assert parse_addresses(" a:1, b.example.com:9092 ,[::1]:9093") == (
            ("a", 1),
            ("b.example.com", 9092),
            ("::1", 9093),
        )

    def test_modes(self):
        assert ClusterConnection(bootstrap_controllers="c:9093").controller_mode
        assert not ClusterConnection(bootstrap_servers="b:9092").controller_mode

    def test_security(self):
        with pytest.raises(ValueError, match="security protocol"):
            ClusterConnection(bootstrap_servers="b:1", security_protocol="TLS")
        with pytest.raises(ValueError, match="SASL mechanism"):
            ClusterConnection(bootstrap_servers="b:1", security_protocol="SASL_PLAINTEXT")
        conn = ClusterConnection(
            bootstrap_servers="b:1",
            security_protocol="SASL_SSL",
            sasl_mechanism="PLAIN",
            sasl_username="u",
            sasl_password="secret",
        )
        assert "secret" not in repr(conn)
        conf = confluent_config(conn)
        assert conf["sasl.username"] == "u" and conf["security.protocol"] == "SASL_SSL"
        assert kafka_python_config(conn)["sasl_plain_password"] == "secret"

    def test_timeouts_in_client_configs(self):
        conn = ClusterConnection(bootstrap_servers="b:1", request_timeout_s=3, connect_timeout_s=2)
        assert confluent_config(conn)["socket.connection.setup.timeout.ms"] == 2000
        assert kafka_python_config(conn)["request_timeout_ms"] == 3000


class TestErrors:
    def test_from_code(self):
        assert from_code(0) is None
        err = from_code(36, "Topic 't' already exists.")
        assert (err.code, err.name, err.message, err.retriable) == (
            36,
            "TOPIC_ALREADY_EXISTS",
            "Topic 't' already exists.",
            False,
        )

    @pytest.mark.parametrize(
        "code,name",
        [
            (17, "INVALID_TOPIC_EXCEPTION"),
            (39, "INVALID_REPLICA_ASSIGNMENT"),
            (6, "NOT_LEADER_OR_FOLLOWER"),
            (114, "MISMATCHED_ENDPOINT_TYPE"),
            (115, "UNSUPPORTED_ENDPOINT_TYPE"),
            (116, "UNKNOWN_CONTROLLER_ID"),
        ],
    )
    def test_kafka_names(self, code, name):
        assert from_code(code).name == name

    def test_confluent_broker_error(self):
        from confluent_kafka import KafkaError, KafkaException

        err = from_confluent(KafkaException(KafkaError(3, "gone")))
        assert (err.code, err.name) == (3, "UNKNOWN_TOPIC_OR_PARTITION")
        assert translate(KafkaException(KafkaError(36))).name == "TOPIC_ALREADY_EXISTS"

    def test_confluent_local_errors(self):
        from confluent_kafka import KafkaError

        assert from_confluent(KafkaError(KafkaError._TRANSPORT)).name == "NETWORK_EXCEPTION"
        assert from_confluent(KafkaError(KafkaError._ALL_BROKERS_DOWN)).name == "NETWORK_EXCEPTION"
        timeout = from_confluent(KafkaError(KafkaError._TIMED_OUT))
        assert timeout.name == "REQUEST_TIMED_OUT" and timeout.retriable

    def test_kafka_python_errors(self):
        import kafka.errors as ke

        assert from_kafka_python(ke.TopicAlreadyExistsError("x")).name == "TOPIC_ALREADY_EXISTS"
        assert from_kafka_python(ke.KafkaTimeoutError("slow")).name == "REQUEST_TIMED_OUT"
        assert from_kafka_python(ke.KafkaConnectionError("refused")).name == "NETWORK_EXCEPTION"
        # a node stopping with the request in flight (seen when the active controller stops): retried elsewhere
        cancelled = from_kafka_python(ke.Cancelled(), "DescribeCluster via 127.0.0.1:1")
        assert cancelled.name == "NETWORK_EXCEPTION" and cancelled.retriable
        assert from_kafka_python(ke.InvalidReplicationAssignmentError()).name == "INVALID_REPLICA_ASSIGNMENT"
        # the client dropped a stopped broker from its metadata between choosing it and sending: the same
        # answer as a broker known not to be live (was UNKNOWN_SERVER_ERROR; a clean-clone CI run saw it)
        gone = from_kafka_python(ke.UnknownBrokerIdError(3), "DescribeLogDirs")
        assert gone.code == 8 and gone.name == "BROKER_NOT_AVAILABLE"
        assert translate(ke.UnsupportedVersionError("old")).name == "UNSUPPORTED_VERSION"

    def test_anything_else_is_translated(self):
        assert translate(ValueError("bad")).name == "INVALID_REQUEST"
        assert translate(RuntimeError("boom")).name == "UNKNOWN_SERVER_ERROR"
        err = KafkaOperationError(1, "X")
        assert translate(err) is err

    def test_operator_text(self):
        for name in (
            "TOPIC_ALREADY_EXISTS",
            "UNKNOWN_TOPIC_OR_PARTITION",
            "INVALID_REPLICATION_FACTOR",
            "POLICY_VIOLATION",
            "CLUSTER_AUTHORIZATION_FAILED",
            "REQUEST_TIMED_OUT",
            "MISMATCHED_ENDPOINT_TYPE",
            "UNSUPPORTED_ENDPOINT_TYPE",
            "UNKNOWN_CONTROLLER_ID",
        ):
            assert name in OPERATOR_TEXT
        assert "bootstrap servers" in KafkaOperationError(114, "MISMATCHED_ENDPOINT_TYPE").operator_text
        net = KafkaOperationError(13, "NETWORK_EXCEPTION", "cannot connect to 10.0.0.1:9092")
        assert "10.0.0.1:9092" in net.operator_text
        assert KafkaOperationError(999, "SOMETHING_NEW", "raw text").operator_text == "raw text"

    def test_error_behaves_as_exception(self):
        @contextmanager
        def ctx():
            yield

        with pytest.raises(KafkaOperationError) as exc, ctx():
            raise KafkaOperationError(36, "TOPIC_ALREADY_EXISTS", "exists")
        assert str(exc.value) == "TOPIC_ALREADY_EXISTS: exists"
        assert pickle.loads(pickle.dumps(exc.value)) == exc.value
        assert {exc.value: 1}[KafkaOperationError(36, "TOPIC_ALREADY_EXISTS", "exists")] == 1


def test_summarize():
    topics = (
        TopicMetadata("a", (PartitionMetadata(0, 1, (1, 2), (1, 2)), PartitionMetadata(1, 2, (2, 3), (2,)))),
        TopicMetadata("__consumer_offsets", (PartitionMetadata(0, -1, (3,), (), (3,)),), internal=True),
    )
    s = summarize(topics)
    assert (s.topic_count, s.partition_count, s.under_replicated, s.offline, s.internal_topics) == (
        2,
        3,
        2,
        1,
        1,
    )


def test_acl_binding_validation():
    validate_binding(AclBinding("TOPIC", "t", "LITERAL", "User:a", "*", "READ", "ALLOW"))
    for bad in (
        AclBinding("TOPIC", "t", "LITERAL", "a", "*", "READ", "ALLOW"),
        AclBinding("ANY", "t", "LITERAL", "User:a", "*", "READ", "ALLOW"),
        AclBinding("TOPIC", "t", "MATCH", "User:a", "*", "READ", "ALLOW"),
        AclBinding("TOPIC", "t", "LITERAL", "User:a", "*", "FLY", "ALLOW"),
    ):
        with pytest.raises(KafkaOperationError):
            validate_binding(bad)


def test_registry_reuses_and_closes():
    conn = ClusterConnection(bootstrap_controllers="127.0.0.1:1")
    gw = get_gateway(conn)
    assert get_gateway(ClusterConnection(bootstrap_controllers="127.0.0.1:1")) is gw
    with pytest.raises(KafkaOperationError) as exc:
        gw.list_topics_metadata()  # broker-only: refused before any I/O
    assert exc.value.name == "UNSUPPORTED_ENDPOINT_TYPE"
    close_all()
    assert get_gateway(conn) is not gw
    close_all()
