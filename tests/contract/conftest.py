"""Contract-test fixtures: the gateway against the sandbox, or a real Kafka when configured.

* ``KAFKA_BOOTSTRAP_SERVERS`` set: use that cluster (and ``KAFKA_BOOTSTRAP_CONTROLLERS`` for the
  KIP-919 controller-mode tests). Optional ``KAFKA_SECURITY_PROTOCOL``, ``KAFKA_SASL_MECHANISM``,
  ``KAFKA_SASL_USERNAME``, ``KAFKA_SASL_PASSWORD``.
* otherwise: the session's sandbox (``sandbox`` fixture of tests/conftest.py: 3 brokers,
  3 controllers).

Tests create uniquely named topics (uuid) and delete them, so they can be re-run against a
persistent cluster. They use nothing sandbox-specific.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from console.kafka import (
    ClusterConnection,
    ConfigChange,
    ConfigResource,
    KafkaGateway,
    KafkaOperationError,
    NewTopic,
    close_all,
    get_gateway,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Endpoints:
    bootstrap_servers: str
    bootstrap_controllers: str | None
    real: bool


def _security() -> dict[str, Any]:
    out: dict[str, Any] = {}
    if os.environ.get("KAFKA_SECURITY_PROTOCOL"):
        out["security_protocol"] = os.environ["KAFKA_SECURITY_PROTOCOL"]
        out["sasl_mechanism"] = os.environ.get("KAFKA_SASL_MECHANISM") or None
        out["sasl_username"] = os.environ.get("KAFKA_SASL_USERNAME") or None
        out["sasl_password"] = os.environ.get("KAFKA_SASL_PASSWORD") or None
    return out


@pytest.fixture(scope="session")
def endpoints(request: pytest.FixtureRequest) -> Endpoints:
    servers = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    if servers:
        return Endpoints(servers, os.environ.get("KAFKA_BOOTSTRAP_CONTROLLERS", "").strip() or None, True)
    cluster = request.getfixturevalue("sandbox")
    return Endpoints(
        cluster.bootstrap_servers, getattr(cluster, "bootstrap_controllers", None) or None, False
    )


@pytest.fixture(scope="session")
def conn(endpoints: Endpoints) -> ClusterConnection:
    return ClusterConnection(
        bootstrap_servers=endpoints.bootstrap_servers,
        request_timeout_s=15,
        connect_timeout_s=5,
        **_security(),
    )


@pytest.fixture(scope="session")
def gw(conn: ClusterConnection) -> Iterator[KafkaGateway]:
    yield get_gateway(conn)
    close_all()


@pytest.fixture(scope="session")
def controller_conn(endpoints: Endpoints) -> ClusterConnection:
    if not endpoints.bootstrap_controllers:
        pytest.skip("no bootstrap controllers (set KAFKA_BOOTSTRAP_CONTROLLERS)")
    return ClusterConnection(
        bootstrap_controllers=endpoints.bootstrap_controllers,
        request_timeout_s=15,
        connect_timeout_s=5,
        **_security(),
    )


@pytest.fixture(scope="session")
def cgw(controller_conn: ClusterConnection) -> KafkaGateway:
    return get_gateway(controller_conn)


@pytest.fixture(scope="session")
def broker_ids(gw: KafkaGateway) -> list[int]:
    return [b.id for b in gw.describe_cluster().brokers]


def unique(prefix: str = "ct") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def eventually(
    fn: Callable[[], T], check: Callable[[T], bool] = bool, timeout: float = 20.0, interval: float = 0.2
) -> T:
    """Poll ``fn`` until ``check(result)`` (metadata propagates asynchronously in Kafka)."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if check(value) or time.monotonic() > deadline:
            return value
        time.sleep(interval)


class TopicFactory:
    """Creates uniquely named topics and deletes them at teardown."""

    def __init__(self, gw: KafkaGateway) -> None:
        self.gw = gw
        self.names: list[str] = []

    def name(self, prefix: str = "ct") -> str:
        n = unique(prefix)
        self.names.append(n)
        return n

    def create(
        self,
        partitions: int = 1,
        replication_factor: int = 1,
        configs: dict[str, str] | None = None,
        replica_assignment: tuple[tuple[int, ...], ...] | None = None,
    ) -> str:
        n = self.name()
        spec = NewTopic(n, partitions, replication_factor, replica_assignment, configs or {})
        result = self.gw.create_topics([spec])[n]
        assert not isinstance(result, KafkaOperationError), result
        eventually(
            lambda: self.gw.describe_topics([n])[n],
            lambda r: not isinstance(r, KafkaOperationError) and all(p.leader >= 0 for p in r.partitions),
        )
        return n

    def cleanup(self) -> None:
        if self.names:
            self.gw.delete_topics(self.names)


@pytest.fixture
def topics(gw: KafkaGateway) -> Iterator[TopicFactory]:
    factory = TopicFactory(gw)
    yield factory
    factory.cleanup()


def describe(gw: KafkaGateway, name: str):
    """Describe one topic, waiting until the broker that answers knows it (metadata propagates)."""
    result = eventually(
        lambda: gw.describe_topics([name])[name], lambda r: not isinstance(r, KafkaOperationError)
    )
    assert not isinstance(result, KafkaOperationError), result
    return result


@pytest.fixture
def broker_rates_restored(gw):
    """Whatever the test leaves (a failed run drops its ledger with the test database), the
    brokers' throttle rates are put back as they were, so the test can run again on a kept cluster."""
    from console.reassignment import throttles

    before = {b: rates_on(gw, b) for b in (1, 2, 3)}
    yield before
    eventually(lambda: rates_readable(gw), timeout=60, interval=1)
    changes = {}
    for broker, rates in before.items():
        now = rates_on(gw, broker)
        fixes = [
            ConfigChange(k, "SET", rates[k]) if k in rates else ConfigChange(k, "DELETE")
            for k in throttles.RATE_CONFIGS
            if now.get(k) != rates.get(k)
        ]
        if fixes:
            changes[ConfigResource("BROKER", str(broker))] = fixes
    if changes:
        gw.incremental_alter_configs(changes)


def rates_readable(gw) -> bool:
    try:
        return all(isinstance(rates_on(gw, b), dict) for b in (1, 2, 3))
    except (AssertionError, KafkaOperationError):
        return False


def rates_on(gw, broker: int) -> dict[str, str]:
    """The broker's replication-throttle rates set as dynamic broker configs."""
    from console.reassignment import throttles

    res = ConfigResource("BROKER", str(broker))
    entries = gw.describe_configs([res])[res]
    assert not isinstance(entries, KafkaOperationError), entries
    return {
        k: entries[k].value
        for k in throttles.RATE_CONFIGS
        if k in entries and entries[k].source == "DYNAMIC_BROKER_CONFIG"
    }
