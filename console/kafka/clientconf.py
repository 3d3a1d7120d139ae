"""The two clients' configurations of one :class:`ClusterConnection`.

The same settings reach librdkafka (confluent-kafka's AdminClient) and kafka-python (``kp.py``,
its failover code and every KIP-919 controller connection):

=========================  ==========================================  =====================================
setting                    librdkafka                                  kafka-python
=========================  ==========================================  =====================================
CA bundle                  ``ssl.ca.pem``                              ``ssl_context`` (``cadata``)
client certificate + key   ``ssl.certificate.pem``/``ssl.key.pem``     ``ssl_context`` (``load_cert_chain``)
hostname verification      ``ssl.endpoint.identification.algorithm``   ``ssl_context.check_hostname``
minimum TLS version        (no property: see ``diagnose.probe``)      ``ssl_context.minimum_version``
PLAIN / SCRAM              ``sasl.username``/``sasl.password``         ``sasl_plain_username``/``_password``
OAUTHBEARER                ``oauth_cb`` (oauth.py's cached token)      ``sasl_oauth_token_provider`` (same)
GSSAPI                     not built into the PyPI wheel: never used   kerberos.py (python gssapi, keytab)
=========================  ==========================================  =====================================
"""

from __future__ import annotations

from .connection import ClusterConnection

__all__ = ["confluent_config", "kafka_python_config", "confluent_usable"]

CLIENT_ID = "kafka-operator-console"

#: The largest answer either client accepts: a whole-cluster Metadata is ~43 bytes a partition, so
#: 512 MiB is ~12M partitions (librdkafka's default, 100 MB, broke at ~2.1M with _BAD_MSG).
RECEIVE_MAX_BYTES = 512 * 1024 * 1024


class _SilentLogger:
    """librdkafka log sink: errors surface through results, not stderr noise."""

    def log(self, *args: object, **kwargs: object) -> None:  # pragma: no cover - trivial
        return None

    def __getattr__(self, name: str):  # debug/info/warning/error/...
        return self.log


def confluent_usable(conn: ClusterConnection) -> bool:
    """False when librdkafka cannot speak this connection (the PyPI wheel has no GSSAPI)."""
    return conn.sasl_mechanism != "GSSAPI"


def confluent_config(conn: ClusterConnection) -> dict[str, object]:
    """librdkafka configuration for an AdminClient (broker mode only).

    Raises ValueError for GSSAPI: the gateway sends those few requests through kafka-python
    instead (``kp_admin.py``); nothing falls back to another protocol.
    """
    if not confluent_usable(conn):
        raise ValueError("librdkafka (PyPI build) has no GSSAPI: this connection uses kafka-python only")
    timeout_ms = int(conn.request_timeout_s * 1000)
    conf: dict[str, object] = {
        "bootstrap.servers": conn.bootstrap_servers,
        "security.protocol": conn.security_protocol,
        "socket.connection.setup.timeout.ms": max(1000, int(conn.connect_timeout_s * 1000)),
        "socket.timeout.ms": max(10, timeout_ms),
        "metadata.request.timeout.ms": max(10, timeout_ms),
        "reconnect.backoff.ms": 100,
        "reconnect.backoff.max.ms": 2000,
        "topic.metadata.refresh.interval.ms": -1,
        "receive.message.max.bytes": RECEIVE_MAX_BYTES,
        "log_level": 0,
        "logger": _SilentLogger(),
        "client.id": CLIENT_ID,
    }
    if conn.uses_sasl:
        conf["sasl.mechanism"] = conn.sasl_mechanism
        if conn.sasl_mechanism == "OAUTHBEARER":
            from .oauth import confluent_oauth_cb

            assert conn.oauth is not None
            conf["oauth_cb"] = confluent_oauth_cb(conn.oauth, conn.request_timeout_s, conn.ca_cert_pem)
        else:
            conf["sasl.username"] = conn.sasl_username
            conf["sasl.password"] = conn.sasl_password or ""
    if conn.uses_ssl:
        if conn.ca_cert_pem:
            conf["ssl.ca.pem"] = conn.ca_cert_pem
        if conn.client_cert_pem and conn.client_key_pem:
            conf["ssl.certificate.pem"] = conn.client_cert_pem
            conf["ssl.key.pem"] = conn.client_key_pem
        conf["ssl.endpoint.identification.algorithm"] = "https" if conn.ssl_check_hostname else "none"
    return conf


def kafka_python_config(conn: ClusterConnection) -> dict[str, object]:
    """kafka-python KafkaConnectionManager / NetworkSelector configuration."""
    conf: dict[str, object] = {
        "bootstrap_servers": [f"{h}:{p}" for h, p in conn.addresses],
        "client_id": CLIENT_ID,
        "security_protocol": conn.security_protocol,
        "request_timeout_ms": int(conn.request_timeout_s * 1000),
        "socket_connection_setup_timeout_ms": int(conn.connect_timeout_s * 1000),
        "socket_connection_setup_timeout_max_ms": int(conn.connect_timeout_s * 1000),
        "reconnect_backoff_ms": 50,
        "reconnect_backoff_max_ms": 1000,
        "receive_message_max_bytes": RECEIVE_MAX_BYTES,
        "metadata_max_age_ms": 24 * 3600 * 1000,
    }
    if conn.uses_sasl:
        conf["sasl_mechanism"] = conn.sasl_mechanism
        if conn.sasl_mechanism == "OAUTHBEARER":
            from .oauth import KpTokenProvider

            assert conn.oauth is not None
            conf["sasl_oauth_token_provider"] = KpTokenProvider(
                conn.oauth, conn.request_timeout_s, conn.ca_cert_pem
            )
        elif conn.sasl_mechanism == "GSSAPI":
            from . import kerberos

            assert conn.kerberos is not None
            conf["sasl_kerberos_service_name"] = conn.kerberos.service_name
            conf["sasl_kerberos_name"] = kerberos.login_for(conn.kerberos)
        else:
            conf["sasl_plain_username"] = conn.sasl_username
            conf["sasl_plain_password"] = conn.sasl_password or ""
    if conn.uses_ssl:
        from .tls import ssl_context

        ctx = ssl_context(conn)
        conf["ssl_context"] = ctx
        conf["ssl_check_hostname"] = ctx.check_hostname
    return conf
