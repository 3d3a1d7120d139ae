"""Contract-test fixtures: the gateway against the sandbox, or a real Kafka when configured.

* ``KAFKA_BOOTSTRAP_SERVERS`` set: use that cluster (and ``KAFKA_BOOTSTRAP_CONTROLLERS`` for the
  KIP-919 controller-mode tests). How to secure the connection (all optional; see ``_security``):
  ``KAFKA_SECURITY_PROTOCOL`` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), ``KAFKA_SASL_MECHANISM``
  (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI), ``KAFKA_SASL_USERNAME``,
  ``KAFKA_SASL_PASSWORD``; TLS: ``KAFKA_SSL_CA_FILE``, ``KAFKA_SSL_CERT_FILE`` + ``KAFKA_SSL_KEY_FILE``
  (mTLS, PEM, unencrypted key), ``KAFKA_SSL_CHECK_HOSTNAME`` (default on; 0/false/no turns it off);
  OAUTHBEARER: ``KAFKA_OAUTH_TOKEN_ENDPOINT``, ``KAFKA_OAUTH_CLIENT_ID``, ``KAFKA_OAUTH_CLIENT_SECRET``,
  ``KAFKA_OAUTH_SCOPE``; GSSAPI: ``KAFKA_KERBEROS_PRINCIPAL``, ``KAFKA_KERBEROS_KEYTAB_FILE``,
  ``KAFKA_KRB5_CONF_FILE``, ``KAFKA_KERBEROS_SERVICE_NAME``. The controller connection uses the same
  settings unless ``KAFKA_CONTROLLER_SECURITY_PROTOCOL`` is set: then every setting is read with the
  ``KAFKA_CONTROLLER_`` prefix instead (e.g. brokers over SASL_SSL, controllers over SSL with a client
  certificate). scripts/kafka-secured writes ready-made files: ``source $RUN/mtls.env && make test-kafka``.
* otherwise: the session's sandbox (``sandbox`` fixture of tests/conftest.py: 3 brokers,
  3 controllers).

Tests create uniquely named topics (uuid) and delete them, so they can be re-run against a
persistent cluster. They use nothing sandbox-specific. A test that registers a ``Cluster`` row with
just the real cluster's address gets the environment's security settings stored on it (through the
model's own fields and encrypted secrets, ``_secured_registrations``), so the suite runs unchanged
against a secured listener.
"""

from __future__ import annotations

import base64
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
    KerberosSettings,
    NewTopic,
    OAuthSettings,
    close_all,
    get_gateway,
)
from console.models.clusters import canonical_endpoints

T = TypeVar("T")


@dataclass(frozen=True)
class Endpoints:
    bootstrap_servers: str
    bootstrap_controllers: str | None
    real: bool

    def client_config(self, **extra: Any) -> dict[str, Any]:
        """librdkafka settings for a test's own producer or consumer: the brokers and the environment's
        security settings (``_security``), then ``extra``."""
        conf: dict[str, Any] = {"bootstrap.servers": self.bootstrap_servers}
        if self.real:
            conf.update(_librdkafka_security(_security()))
        conf.update(extra)
        return conf


def _env(prefix: str, name: str) -> str:
    return os.environ.get(f"{prefix}{name}", "").strip()


def _file(prefix: str, name: str, mode: str = "r") -> Any:
    path = _env(prefix, name)
    if not path:
        return None
    with open(path, mode) as f:
        return f.read()


def _security(prefix: str = "KAFKA_") -> dict[str, Any]:
    """ClusterConnection's security fields from the environment (``prefix`` + the names above)."""
    protocol = _env(prefix, "SECURITY_PROTOCOL")
    if not protocol:
        return {}
    out: dict[str, Any] = {"security_protocol": protocol}
    mechanism = _env(prefix, "SASL_MECHANISM") or None
    out["sasl_mechanism"] = mechanism
    out["sasl_username"] = _env(prefix, "SASL_USERNAME") or None
    out["sasl_password"] = os.environ.get(f"{prefix}SASL_PASSWORD") or None
    if "SSL" in protocol:
        out["ca_cert_pem"] = _file(prefix, "SSL_CA_FILE")
        out["client_cert_pem"] = _file(prefix, "SSL_CERT_FILE")
        out["client_key_pem"] = _file(prefix, "SSL_KEY_FILE")
        out["ssl_check_hostname"] = _env(prefix, "SSL_CHECK_HOSTNAME").lower() not in ("0", "false", "no")
    if mechanism == "OAUTHBEARER":
        out["oauth"] = OAuthSettings(
            token_endpoint=_env(prefix, "OAUTH_TOKEN_ENDPOINT"),
            client_id=_env(prefix, "OAUTH_CLIENT_ID"),
            client_secret=os.environ.get(f"{prefix}OAUTH_CLIENT_SECRET", ""),
            scope=_env(prefix, "OAUTH_SCOPE"),
        )
    if mechanism == "GSSAPI":
        out["kerberos"] = KerberosSettings(
            principal=_env(prefix, "KERBEROS_PRINCIPAL"),
            keytab=_file(prefix, "KERBEROS_KEYTAB_FILE", "rb") or b"",
            service_name=_env(prefix, "KERBEROS_SERVICE_NAME") or "kafka",
            krb5_conf=_file(prefix, "KRB5_CONF_FILE") or "",
        )
    return out


def _librdkafka_security(sec: dict[str, Any]) -> dict[str, Any]:
    """The same settings as librdkafka properties (test clients only; the console maps its own)."""
    if not sec:
        return {}
    conf: dict[str, Any] = {"security.protocol": sec["security_protocol"]}
    pem = {
        "ssl.ca.pem": "ca_cert_pem",
        "ssl.certificate.pem": "client_cert_pem",
        "ssl.key.pem": "client_key_pem",
    }
    conf.update({k: sec[f] for k, f in pem.items() if sec.get(f)})
    if "ssl_check_hostname" in sec:
        conf["ssl.endpoint.identification.algorithm"] = "https" if sec["ssl_check_hostname"] else "none"
    if sec.get("sasl_mechanism"):
        conf["sasl.mechanism"] = sec["sasl_mechanism"]
    if sec.get("sasl_username"):
        conf.update({"sasl.username": sec["sasl_username"], "sasl.password": sec.get("sasl_password") or ""})
    if sec.get("oauth"):
        oauth = sec["oauth"]
        conf.update({
            "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.token.endpoint.url": oauth.token_endpoint,
            "sasl.oauthbearer.client.id": oauth.client_id,
            "sasl.oauthbearer.client.secret": oauth.client_secret,
            **({"sasl.oauthbearer.scope": oauth.scope} if oauth.scope else {}),
        })  # fmt: skip
    if sec.get("kerberos"):
        conf.update({
            "sasl.kerberos.service.name": sec["kerberos"].service_name,
            "sasl.kerberos.principal": sec["kerberos"].principal,
            "sasl.kerberos.keytab": _env("KAFKA_", "KERBEROS_KEYTAB_FILE"),
        })  # fmt: skip
    return conf


def _controller_security() -> dict[str, Any]:
    return _security("KAFKA_CONTROLLER_") if _env("KAFKA_CONTROLLER_", "SECURITY_PROTOCOL") else _security()


def _store_security(cluster: Any, conn: ClusterConnection) -> None:
    """Put a connection's security settings on a Cluster row the way the registry stores them."""
    cluster.security_protocol = conn.security_protocol
    cluster.sasl_mechanism = conn.sasl_mechanism or ""
    cluster.sasl_username = conn.sasl_username or ""
    cluster.set_secret("sasl_password", conn.sasl_password or "")
    cluster.ca_certificate = conn.ca_cert_pem or ""
    cluster.client_certificate = conn.client_cert_pem or ""
    cluster.set_secret("client_key", conn.client_key_pem or "")
    cluster.ssl_check_hostname = conn.ssl_check_hostname
    if conn.oauth:
        cluster.oauth_token_endpoint = conn.oauth.token_endpoint
        cluster.oauth_client_id = conn.oauth.client_id
        cluster.set_secret("oauth_client_secret", conn.oauth.client_secret)
        cluster.oauth_scope = conn.oauth.scope
    if conn.kerberos:
        cluster.kerberos_principal = conn.kerberos.principal
        cluster.set_secret("kerberos_keytab", base64.b64encode(conn.kerberos.keytab).decode())
        cluster.kerberos_service_name = conn.kerberos.service_name
        cluster.kerberos_krb5_conf = conn.kerberos.krb5_conf


@pytest.fixture(autouse=True)
def _secured_registrations() -> Iterator[None]:
    """Against a real cluster with security settings in the environment, a Cluster row saved with only
    its address (PLAINTEXT, as the tests register it) gets those settings."""
    servers = canonical_endpoints(os.environ.get("KAFKA_BOOTSTRAP_SERVERS", ""))
    controllers = canonical_endpoints(os.environ.get("KAFKA_BOOTSTRAP_CONTROLLERS", ""))
    broker_security, controller_security = _security(), _controller_security()
    if not servers or not (broker_security or controller_security):
        yield
        return
    from django.db.models.signals import pre_save

    from console.models import Cluster

    def secure(sender: Any, instance: Any, **kwargs: Any) -> None:
        if instance.security_protocol != "PLAINTEXT" or instance.sasl_mechanism:
            return
        if servers and canonical_endpoints(instance.bootstrap_servers) == servers and broker_security:
            _store_security(instance, ClusterConnection(bootstrap_servers=servers, **broker_security))
        elif (
            controllers
            and canonical_endpoints(instance.bootstrap_controllers) == controllers
            and controller_security
        ):
            _store_security(
                instance, ClusterConnection(bootstrap_controllers=controllers, **controller_security)
            )

    pre_save.connect(secure, sender=Cluster, dispatch_uid="contract-secured-registrations")
    try:
        yield
    finally:
        pre_save.disconnect(sender=Cluster, dispatch_uid="contract-secured-registrations")


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
        **_controller_security(),
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
