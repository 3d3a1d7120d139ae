"""The Kafka gateway: the only code in the console that imports a Kafka client.

Pure Python (no Django); use it from the area packages, tests and benchmarks::

    from console.kafka import ClusterConnection, get_gateway
    gw = get_gateway(ClusterConnection(bootstrap_servers="127.0.0.1:9092"))
    gw.describe_cluster()
"""

from __future__ import annotations

from .connection import (
    SASL_MECHANISMS,
    SECURITY_PROTOCOLS,
    TLS_VERSIONS,
    ClusterConnection,
    KerberosSettings,
    OAuthSettings,
    parse_addresses,
)
from .diagnose import ConnectionCheck
from .errors import OPERATOR_TEXT, KafkaOperationError
from .gateway import (
    CALL_OBSERVERS,
    KafkaGateway,
    close_all,
    close_idle,
    get_gateway,
    open_count,
    set_max_open,
)
from .groups import ConsumerGroupListing
from .kerberos import available as kerberos_available
from .messages import PartitionRead, ProducedRecord
from .record_read import RawRecord
from .tls import CertificateFacts
from .types import (
    OK,
    AclBinding,
    AclBindingFilter,
    BrokerInfo,
    ClusterInfo,
    ClusterMetadata,
    ConfigChange,
    ConfigEntry,
    ConfigResource,
    ConfigSynonym,
    FeatureInfo,
    GroupDescription,
    GroupMember,
    LogDirInfo,
    NewPartitions,
    NewTopic,
    Ok,
    PartitionMetadata,
    PartitionOffsets,
    PartitionReassignment,
    QuorumInfo,
    QuorumReplica,
    ReplicaLogInfo,
    TopicMetadata,
    TopicPartition,
    TopicSummary,
)

__all__ = [
    "CALL_OBSERVERS",
    "OK",
    "OPERATOR_TEXT",
    "SASL_MECHANISMS",
    "SECURITY_PROTOCOLS",
    "TLS_VERSIONS",
    "AclBinding",
    "AclBindingFilter",
    "BrokerInfo",
    "CertificateFacts",
    "ClusterConnection",
    "ClusterInfo",
    "ClusterMetadata",
    "ConfigChange",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSynonym",
    "ConnectionCheck",
    "FeatureInfo",
    "ConsumerGroupListing",
    "GroupDescription",
    "GroupMember",
    "KafkaGateway",
    "KafkaOperationError",
    "KerberosSettings",
    "LogDirInfo",
    "NewPartitions",
    "NewTopic",
    "OAuthSettings",
    "Ok",
    "PartitionMetadata",
    "PartitionOffsets",
    "PartitionRead",
    "PartitionReassignment",
    "ProducedRecord",
    "QuorumInfo",
    "QuorumReplica",
    "RawRecord",
    "ReplicaLogInfo",
    "TopicMetadata",
    "TopicPartition",
    "TopicSummary",
    "close_all",
    "close_idle",
    "get_gateway",
    "open_count",
    "set_max_open",
    "kerberos_available",
    "parse_addresses",
]
