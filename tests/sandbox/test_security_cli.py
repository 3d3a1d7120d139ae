"""``python -m sandbox`` with secured listeners: TLS files written to a private directory, mTLS, SASL."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient

from tests.sandbox.conftest import ROOT, start_cli, stop_cli

pytestmark = [pytest.mark.timeout(120)]


def _start(*args: str, keys: int) -> tuple[subprocess.Popen, dict[str, str]]:
    return start_cli("--brokers", "1", "--controllers", "1", *args, keys=keys)


def test_it_serves_sasl_ssl_with_client_certificates_from_the_files_it_wrote(tmp_path):
    tls = tmp_path / "tls"
    proc, info = _start("--tls-dir", str(tls), "--mtls", "--sasl-users", "admin:admin-secret,bob:pw", keys=9)
    try:
        assert info["SECURITY_PROTOCOL"] == "SASL_SSL"
        assert info["SASL_MECHANISMS"] == "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"  # no JWKS: no OAUTHBEARER
        assert (info["SSL_CA_LOCATION"], info["SSL_CERTIFICATE_LOCATION"], info["SSL_KEY_LOCATION"]) == (
            str(tls / "ca.pem"),
            str(tls / "client.pem"),
            str(tls / "client-key.pem"),
        )
        assert stat.S_IMODE(os.stat(tls).st_mode) == 0o700
        assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in tls.iterdir()} == {
            name: 0o600
            for name in (
                "ca.pem",
                "ca-key.pem",
                "server.pem",
                "server-key.pem",
                "client.pem",
                "client-key.pem",
            )
        }
        admin = AdminClient(
            {
                "bootstrap.servers": info["BOOTSTRAP_SERVERS"],
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": "bob",
                "sasl.password": "pw",
                "ssl.ca.location": info["SSL_CA_LOCATION"],
                "ssl.certificate.location": info["SSL_CERTIFICATE_LOCATION"],
                "ssl.key.location": info["SSL_KEY_LOCATION"],
            }
        )
        assert sorted(admin.list_topics(timeout=10).brokers) == [1]
    finally:
        stop_cli(proc)
    ca_before = (tls / "ca.pem").read_text()
    proc, info = _start("--tls-dir", str(tls), keys=6)  # a restart keeps the CA its clients trust
    try:
        assert info["SECURITY_PROTOCOL"] == "SSL"
        assert "SSL_CERTIFICATE_LOCATION" not in info
        assert (tls / "ca.pem").read_text() == ca_before
        admin = AdminClient(
            {
                "bootstrap.servers": info["BOOTSTRAP_SERVERS"],
                "security.protocol": "SSL",
                "ssl.ca.location": info["SSL_CA_LOCATION"],
            }
        )
        assert sorted(admin.list_topics(timeout=10).brokers) == [1]
    finally:
        stop_cli(proc)


def test_it_refuses_mtls_without_a_tls_directory():
    out = subprocess.run(
        [sys.executable, "-m", "sandbox", "--port", "0", "--mtls"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2
    assert "--mtls needs --tls-dir" in out.stderr
