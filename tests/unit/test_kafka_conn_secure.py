"""Secured cluster connections: validation, and the settings both Kafka clients get from them."""

from __future__ import annotations

import datetime as dt
import glob
import os
import ssl
import sys
import tempfile

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from console.kafka import (
    OPERATOR_TEXT,
    ClusterConnection,
    KafkaOperationError,
    KerberosSettings,
    OAuthSettings,
)
from console.kafka.clientconf import confluent_config, kafka_python_config


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def make_pair(cn: str = "console", days: int = 30, issuer=None):
    """(cert_pem, key_pem, cert, key): self-signed, or signed by ``issuer`` = (cert, key)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(issuer[0].subject if issuer else _name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    cert = builder.sign(issuer[1] if issuer else key, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM).decode(), _pem_key(key), cert, key


CA_PEM, _, CA_CERT, CA_KEY = make_pair("Test CA", days=365)
CLIENT_PEM, CLIENT_KEY_PEM, _, _ = make_pair("console-client", issuer=(CA_CERT, CA_KEY))
OTHER_PEM, OTHER_KEY_PEM, _, _ = make_pair("someone-else", issuer=(CA_CERT, CA_KEY))
OAUTH = OAuthSettings(
    token_endpoint="https://idp.example.org/realms/k/protocol/openid-connect/token",
    client_id="console",
    client_secret="client-secret-value-123",
    scope="kafka",
    extensions=(("logicalCluster", "lkc-1"),),
)
KERBEROS = KerberosSettings(
    principal="console@EXAMPLE.ORG", keytab=b"\x05\x02keytab-bytes-secret", krb5_conf=""
)


def conn(**kw) -> ClusterConnection:
    kw.setdefault("bootstrap_servers", "broker1.example.org:9093")
    return ClusterConnection(**kw)


def mtls(**kw) -> ClusterConnection:
    return conn(
        security_protocol="SSL",
        ca_cert_pem=CA_PEM,
        client_cert_pem=CLIENT_PEM,
        client_key_pem=CLIENT_KEY_PEM,
        **kw,
    )


class TestValidation:
    @pytest.mark.parametrize(
        ("kw", "message"),
        [
            (
                {"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER"},
                "OAUTHBEARER needs the OAuth settings",
            ),
            (
                {"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI"},
                "GSSAPI needs the Kerberos settings",
            ),
            (
                {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512"},
                "a SASL user name is required",
            ),
            (
                {"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN"},
                "a SASL user name is required for PLAIN",
            ),
            (
                {
                    "security_protocol": "SASL_SSL",
                    "sasl_mechanism": "OAUTHBEARER",
                    "oauth": OAUTH,
                    "sasl_username": "u",
                },
                "OAUTHBEARER takes no SASL user name or password",
            ),
            (
                {
                    "security_protocol": "SASL_SSL",
                    "sasl_mechanism": "PLAIN",
                    "sasl_username": "u",
                    "oauth": OAUTH,
                },
                "OAuth settings are used only with the OAUTHBEARER mechanism",
            ),
            (
                {"security_protocol": "SASL_SSL", "sasl_mechanism": "NTLM"},
                "SASL mechanism must be one of PLAIN",
            ),
            (
                {"security_protocol": "PLAINTEXT", "sasl_mechanism": "PLAIN"},
                "a SASL mechanism needs the SASL_PLAINTEXT",
            ),
            ({"security_protocol": "SSL", "client_cert_pem": CLIENT_PEM}, "give both the client certificate"),
            (
                {"security_protocol": "SSL", "client_key_pem": CLIENT_KEY_PEM},
                "give both the client certificate",
            ),
            (
                {"security_protocol": "SSL", "client_cert_pem": CLIENT_PEM, "client_key_pem": OTHER_KEY_PEM},
                "the client private key does not belong to the client certificate",
            ),
            (
                {
                    "security_protocol": "SSL",
                    "client_cert_pem": "not a cert",
                    "client_key_pem": CLIENT_KEY_PEM,
                },
                "the client certificate must be a PEM certificate chain",
            ),
            (
                {"security_protocol": "SSL", "client_cert_pem": CLIENT_PEM, "client_key_pem": "garbage"},
                "the client private key is not a readable PEM private key",
            ),
            ({"security_protocol": "SSL", "ca_cert_pem": "garbage"}, "the CA bundle must be one or more PEM"),
            (
                {"security_protocol": "SSL", "tls_min_version": "TLSv1.1"},
                "the minimum TLS version must be one of",
            ),
            (
                {"security_protocol": "PLAINTEXT", "ca_cert_pem": CA_PEM},
                "TLS settings (a CA bundle) need the SSL",
            ),
            (
                {
                    "security_protocol": "SASL_PLAINTEXT",
                    "sasl_mechanism": "PLAIN",
                    "sasl_username": "u",
                    "ssl_check_hostname": False,
                },
                "TLS settings (hostname verification off) need the SSL or SASL_SSL protocol, not SASL_PLAINTEXT",
            ),
        ],
    )
    def test_it_refuses_an_incomplete_or_contradictory_connection_naming_the_problem(self, kw, message):
        with pytest.raises(ValueError) as exc:
            conn(**kw)
        assert message in str(exc.value)
        # no key material in the message
        assert "PRIVATE KEY" not in str(exc.value) and "MI" not in str(exc.value)

    def test_it_refuses_an_encrypted_client_key(self):
        key = ec.generate_private_key(ec.SECP256R1())
        encrypted = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"pass"),
        ).decode()
        with pytest.raises(ValueError, match="the client private key is encrypted: give it unencrypted"):
            conn(security_protocol="SSL", client_cert_pem=CLIENT_PEM, client_key_pem=encrypted)

    @pytest.mark.parametrize(
        ("endpoint", "message"),
        [
            (
                "http://idp.example.org/token",
                "must use https (plain http is allowed only for a loopback address)",
            ),
            ("ftp://idp.example.org/token", "must be an https:// URL"),
            ("https://user:pw@idp.example.org/token", "must not carry credentials"),
        ],
    )
    def test_it_refuses_a_token_endpoint_that_would_expose_the_secret(self, endpoint, message):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            OAuthSettings(token_endpoint=endpoint, client_id="c", client_secret="s")

    @pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "127.0.0.2"])
    def test_it_allows_plain_http_to_a_loopback_token_endpoint(self, host):
        s = OAuthSettings(token_endpoint=f"http://{host}:8080/token", client_id="c", client_secret="s")
        assert s.token_endpoint == f"http://{host}:8080/token"

    def test_it_refuses_a_bad_kerberos_principal_or_missing_keytab(self):
        with pytest.raises(ValueError, match="must look like name@REALM"):
            KerberosSettings(principal="console", keytab=b"x")
        with pytest.raises(ValueError, match="a keytab is required for GSSAPI"):
            KerberosSettings(principal="console@EXAMPLE.ORG")

    def test_it_accepts_every_secured_kind_and_stays_hashable_with_no_secret_in_its_repr(self):
        kinds = [
            mtls(tls_min_version="TLSv1.3", ssl_check_hostname=False),
            conn(
                security_protocol="SASL_SSL",
                sasl_mechanism="SCRAM-SHA-512",
                sasl_username="u",
                sasl_password="pw-secret-9",
            ),
            conn(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER", oauth=OAUTH, ca_cert_pem=CA_PEM),
            conn(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI", kerberos=KERBEROS),
        ]
        assert len({hash(k) for k in kinds}) == 4
        assert {kinds[0]: 1}[mtls(tls_min_version="TLSv1.3", ssl_check_hostname=False)] == 1
        for k in kinds:
            text = repr(k)
            for secret in (
                "pw-secret-9",
                "client-secret-value-123",
                "keytab-bytes-secret",
                "PRIVATE KEY",
                "keytab",
            ):
                assert secret not in text
        assert "console@EXAMPLE.ORG" in repr(kinds[3]) and "token_endpoint='https://idp" in repr(kinds[2])

    def test_it_sorts_sasl_extensions_and_refuses_reserved_names(self):
        s = OAuthSettings("https://i/t", "c", "s", extensions=(("b", "2"), ("a", "1")))
        assert s.extensions == (("a", "1"), ("b", "2"))
        with pytest.raises(ValueError, match="letters only and not 'auth'"):
            OAuthSettings("https://i/t", "c", "s", extensions=(("auth", "x"),))


class TestConfluentConfig:
    def test_it_maps_mtls_to_librdkafkas_pem_properties(self):
        cfg = confluent_config(mtls())
        assert cfg["security.protocol"] == "SSL"
        assert cfg["ssl.ca.pem"] == CA_PEM
        assert cfg["ssl.certificate.pem"] == CLIENT_PEM
        assert cfg["ssl.key.pem"] == CLIENT_KEY_PEM
        assert cfg["ssl.endpoint.identification.algorithm"] == "https"
        assert not any(k.startswith("sasl") for k in cfg)
        assert (
            confluent_config(mtls(ssl_check_hostname=False))["ssl.endpoint.identification.algorithm"]
            == "none"
        )

    def test_it_maps_scram_over_ssl(self):
        cfg = confluent_config(
            conn(
                security_protocol="SASL_SSL",
                sasl_mechanism="SCRAM-SHA-256",
                sasl_username="u",
                sasl_password="p",
            )
        )
        assert {k: cfg[k] for k in cfg if k.startswith(("sasl", "ssl", "security"))} == {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "u",
            "sasl.password": "p",
            "ssl.endpoint.identification.algorithm": "https",
        }

    def test_it_gives_oauthbearer_the_consoles_token_callback_and_no_password(self):
        cfg = confluent_config(conn(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER", oauth=OAUTH))
        assert cfg["sasl.mechanism"] == "OAUTHBEARER"
        assert callable(cfg["oauth_cb"])
        assert "sasl.username" not in cfg and "sasl.password" not in cfg
        assert "sasl.oauthbearer.client.secret" not in cfg  # librdkafka's own OIDC fetcher is not used

    def test_librdkafka_accepts_the_secured_configurations(self):
        import time

        from confluent_kafka.admin import AdminClient

        from console.kafka.oauth import Token, token_source

        # librdkafka asks oauth_cb for a token while the client is made: one is cached already
        token_source(OAUTH, CA_PEM)._token = Token(
            "header.payload.sig", time.time(), time.time() + 600, "console"
        )

        for c in (
            mtls(),
            conn(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER", oauth=OAUTH, ca_cert_pem=CA_PEM),
            conn(
                security_protocol="SASL_SSL",
                sasl_mechanism="SCRAM-SHA-512",
                sasl_username="u",
                sasl_password="p",
            ),
        ):
            AdminClient(confluent_config(c))  # raises KafkaException on an unknown or bad property

    def test_it_never_builds_a_librdkafka_config_for_gssapi(self):
        c = conn(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI", kerberos=KERBEROS)
        with pytest.raises(ValueError, match="no GSSAPI"):
            confluent_config(c)


class TestKafkaPythonConfig:
    def test_it_builds_a_verifying_context_with_the_client_certificate_and_minimum_version(self):
        before = set(glob.glob(os.path.join(tempfile.gettempdir(), "console-tls-*")))
        cfg = kafka_python_config(mtls(tls_min_version="TLSv1.3"))
        ctx = cfg["ssl_context"]
        assert isinstance(ctx, ssl.SSLContext)
        assert ctx.minimum_version == ssl.TLSVersion.TLSv1_3
        assert ctx.check_hostname is True and ctx.verify_mode == ssl.CERT_REQUIRED
        assert [c["subject"] for c in ctx.get_ca_certs()] == [((("commonName", "Test CA"),),)]
        assert cfg["security_protocol"] == "SSL" and "sasl_mechanism" not in cfg
        # the chain+key file was written in a private directory and is gone again
        assert set(glob.glob(os.path.join(tempfile.gettempdir(), "console-tls-*"))) == before

    def test_it_turns_hostname_checking_off_only_when_asked(self):
        ctx = kafka_python_config(mtls(ssl_check_hostname=False))["ssl_context"]
        assert ctx.check_hostname is False and ctx.verify_mode == ssl.CERT_REQUIRED
        assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2

    def test_it_maps_plain_and_scram(self):
        cfg = kafka_python_config(
            conn(
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="PLAIN",
                sasl_username="u",
                sasl_password="p",
            )
        )
        assert (cfg["sasl_mechanism"], cfg["sasl_plain_username"], cfg["sasl_plain_password"]) == (
            "PLAIN",
            "u",
            "p",
        )
        assert "ssl_context" not in cfg

    def test_it_gives_oauthbearer_a_token_provider_over_the_shared_cache(self):
        from kafka.net.sasl.oauth import AbstractTokenProvider

        cfg = kafka_python_config(
            conn(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER", oauth=OAUTH)
        )
        provider = cfg["sasl_oauth_token_provider"]
        assert isinstance(provider, AbstractTokenProvider)
        assert provider.extensions() == {"logicalCluster": "lkc-1"}
        assert "client-secret-value-123" not in repr(provider)

    def test_it_gives_gssapi_the_consoles_kerberos_login(self):
        pytest.importorskip("gssapi")
        from kafka.net.sasl import get_sasl_mechanism

        from console.kafka import kerberos

        cfg = kafka_python_config(
            conn(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI", kerberos=KERBEROS)
        )
        assert cfg["sasl_mechanism"] == "GSSAPI" and cfg["sasl_kerberos_service_name"] == "kafka"
        assert isinstance(cfg["sasl_kerberos_name"], kerberos.KerberosLogin)
        assert get_sasl_mechanism("GSSAPI").__name__ == "ConsoleGSSAPI"
        assert "keytab-bytes-secret" not in repr(cfg["sasl_kerberos_name"])


class TestKerberos:
    def test_it_says_the_kerberos_extra_is_missing(self, monkeypatch):
        from console.kafka import kerberos

        monkeypatch.setitem(sys.modules, "gssapi", None)  # import gssapi -> ImportError
        c = conn(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI", kerberos=KERBEROS)
        with pytest.raises(KafkaOperationError) as exc:
            kafka_python_config(c)
        assert exc.value.name == "KERBEROS_UNAVAILABLE"
        assert 'the "kerberos" extra (python gssapi), which is not installed' in exc.value.message
        assert kerberos.available() is False
        from console.kafka import kerberos_available

        assert kerberos_available() is False  # what the registry asks before offering GSSAPI

    def test_it_keeps_each_realms_krb5_conf_in_front_of_the_systems_and_removes_it(self):
        from console.kafka import kerberos

        a = kerberos.KerberosLogin(
            KerberosSettings("c@A.ORG", b"\x05\x02ka", krb5_conf="[realms]\n A.ORG = {\n kdc = kdc-a\n }\n")
        )
        b = kerberos.KerberosLogin(
            KerberosSettings("c@B.ORG", b"\x05\x02kb", krb5_conf="[realms]\n B.ORG = {\n kdc = kdc-b\n }\n")
        )
        try:
            keytab_a, conf_a = a._files()
            keytab_b, conf_b = b._files()
            assert os.environ["KRB5_CONFIG"] == f"{conf_b}:{conf_a}:{kerberos._ORIGINAL_KRB5_CONFIG}"
            assert oct(os.stat(keytab_a).st_mode & 0o777) == "0o600"
            assert oct(os.stat(os.path.dirname(keytab_a)).st_mode & 0o777) == "0o700"
            assert open(keytab_b, "rb").read() == b"\x05\x02kb"
            assert "kdc-a" in open(conf_a).read()
        finally:
            a.close()
            b.close()
        assert os.environ["KRB5_CONFIG"] == kerberos._ORIGINAL_KRB5_CONFIG
        assert not os.path.exists(keytab_a) and not os.path.exists(os.path.dirname(keytab_b))

    def test_it_names_the_kerberos_cause(self):
        from console.kafka.kerberos import kerberos_error

        cases = {
            "Cannot contact any KDC for realm 'A.ORG'": "the KDC of A.ORG is unreachable",
            "Key table file '/x' not found": "the keytab of c@A.ORG is unusable",
            "Client 'c@A.ORG' not found in Kerberos database": "a principal is unknown to the KDC",
        }
        for text, cause in cases.items():
            err = kerberos_error(RuntimeError(text), "c@A.ORG")
            assert (err.name, err.message) == ("KERBEROS_LOGIN_FAILED", f"{cause}: {text}")


def test_every_security_error_has_operator_text_with_its_cause():
    for name in (
        "TLS_SERVER_CERTIFICATE_REJECTED",
        "TLS_CLIENT_CERTIFICATE_REFUSED",
        "TLS_VERSION_REFUSED",
        "TOKEN_ENDPOINT_UNREACHABLE",
        "TOKEN_ENDPOINT_REFUSED",
        "TOKEN_ENDPOINT_BAD_ANSWER",
        "KERBEROS_UNAVAILABLE",
        "KERBEROS_LOGIN_FAILED",
    ):
        assert name in OPERATOR_TEXT
        err = KafkaOperationError(57, name, "the cause")
        assert err.operator_text == f"{OPERATOR_TEXT[name]} (the cause)"
