"""``manage.py register_cluster`` and ``manage.py kafka cluster register|update|test``: every secured field as
an option, secrets only from files or environment variables, the registry's rules and messages."""

from __future__ import annotations

import base64
import io
import subprocess
import sys
from functools import partial

import pytest
from django.core.management import call_command

from console.models import AuditEvent, Cluster, Role, RoleBinding
from tests.secured_world import pkcs12_bytes, tls_sandbox
from tests.unit import kafka_cli

pytestmark = pytest.mark.django_db
PASSWORD = "scram-S3CRET-cli"
P12_PASSWORD = "p12-S3CRET-cli"
KEYTAB = b"\x05\x02\x00\x00\x00\x20keytab-S3CRET-cli"


@pytest.fixture(scope="module")
def scram_sandbox(ca):
    with tls_sandbox(ca, "SASL_SSL", users={"console": PASSWORD}) as c:
        yield c


kafka = partial(kafka_cli.kafka, stderr=True)


def test_it_has_an_option_for_every_field_and_no_option_takes_a_secret_value():
    helps = subprocess.run(
        [sys.executable, "manage.py", "kafka", "cluster", "register", "--help"], capture_output=True, text=True,
        check=True,
    ).stdout  # fmt: skip
    for option in ("--ca-file", "--client-cert-file", "--client-key-file", "--client-key-passphrase-env",
                   "--pkcs12-file", "--pkcs12-password-env", "--hostname-check", "--tls-min-version",
                   "--oauth-token-endpoint", "--oauth-client-id", "--oauth-client-secret-env",
                   "--oauth-client-secret-file", "--oauth-scope", "--oauth-extension", "--kerberos-principal",
                   "--keytab-file", "--kerberos-service-name", "--krb5-conf-file", "--sasl-password-env",
                   "--sasl-password-file"):  # fmt: skip
        assert option in helps, option
    assert "--sasl-password " not in helps and "--oauth-client-secret " not in helps
    assert "sasl.oauthbearer.token.endpoint.url" in helps and "sasl.kerberos.service.name" in helps


def test_it_registers_scram_over_tls_with_the_password_from_the_environment_and_tests_it(
    personas, scram_sandbox, ca, tmp_path, monkeypatch
):
    (tmp_path / "ca.pem").write_text(ca.cert_pem)
    monkeypatch.setenv("CONSOLE_TEST_SCRAM", PASSWORD)
    code, out = kafka("cluster", "register", "cli-scram", "--as", "admin", "--bootstrap-servers",
                      scram_sandbox.bootstrap_servers, "--security-protocol", "SASL_SSL", "--sasl-mechanism",
                      "SCRAM-SHA-512", "--sasl-username", "console", "--sasl-password-env", "CONSOLE_TEST_SCRAM",
                      "--ca-file", str(tmp_path / "ca.pem"), "--request-timeout", "5")  # fmt: skip
    assert code == 0, out
    cluster = Cluster.objects.get(name="cli-scram")
    assert cluster.sasl_password() == PASSWORD and cluster.ca_certificate == ca.cert_pem.strip()
    code, out = kafka("cluster", "test", "--cluster", "cli-scram", "--as", "admin")
    assert code == 0 and "True" in out and "CN=localhost" in out, out
    # a moved address without the password: refused (exit 4) naming the secret, nothing saved
    code, out = kafka("cluster", "update", "--cluster", "cli-scram", "--as", "admin", "--bootstrap-servers",
                      "127.0.0.1:1")  # fmt: skip
    assert code == 4 and "Enter the SASL password again" in out and "bootstrap servers has changed" in out, (
        out
    )
    cluster.refresh_from_db()
    assert cluster.bootstrap_servers == scram_sandbox.bootstrap_servers
    monkeypatch.setenv("CONSOLE_TEST_SCRAM", "wrong-password")
    code, out = kafka("cluster", "test", "--cluster", "cli-scram", "--as", "admin", "--sasl-password-env",
                      "CONSOLE_TEST_SCRAM")  # fmt: skip
    assert code == 5 and "SASL_AUTHENTICATION_FAILED" in out, out
    assert PASSWORD not in repr(list(AuditEvent.objects.values())) and "wrong-password" not in out


def test_it_reads_pkcs12_and_keytab_files_and_refuses_a_missing_variable(personas, ca, tmp_path, monkeypatch):
    cert, key = ca.issue("console-cli", client=True)
    (tmp_path / "c.p12").write_bytes(pkcs12_bytes(cert, key, P12_PASSWORD))
    (tmp_path / "krb.keytab").write_bytes(KEYTAB)
    code, out = kafka("cluster", "register", "cli-mtls", "--as", "admin", "--bootstrap-servers", "127.0.0.1:1",
                      "--security-protocol", "SSL", "--pkcs12-file", str(tmp_path / "c.p12"),
                      "--pkcs12-password-env", "CONSOLE_TEST_UNSET")  # fmt: skip
    assert code == 2 and "CONSOLE_TEST_UNSET is not set" in out
    monkeypatch.setenv("CONSOLE_TEST_P12", "wrong")
    code, out = kafka("cluster", "register", "cli-mtls", "--as", "admin", "--bootstrap-servers", "127.0.0.1:1",
                      "--security-protocol", "SSL", "--pkcs12-file", str(tmp_path / "c.p12"),
                      "--pkcs12-password-env", "CONSOLE_TEST_P12")  # fmt: skip
    assert code == 4 and "does not open the file (wrong password" in out, out
    monkeypatch.setenv("CONSOLE_TEST_P12", P12_PASSWORD)
    code, out = kafka("cluster", "register", "cli-mtls", "--as", "admin", "--bootstrap-servers", "127.0.0.1:1",
                      "--security-protocol", "SSL", "--pkcs12-file", str(tmp_path / "c.p12"),
                      "--pkcs12-password-env", "CONSOLE_TEST_P12", "--tls-min-version", "TLSv1.3")  # fmt: skip
    assert code == 0, out
    mtls = Cluster.objects.get(name="cli-mtls")
    assert (
        mtls.client_certificate == cert
        and mtls.has_secret("client_key")
        and mtls.tls_min_version == "TLSv1.3"
    )
    call_command("register_cluster", "--name", "cli-krb", "--as", "admin", "--bootstrap-servers", "127.0.0.1:1",
                 "--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "GSSAPI", "--kerberos-principal",
                 "console@EXAMPLE.ORG", "--keytab-file", str(tmp_path / "krb.keytab"), stdout=io.StringIO())  # fmt: skip
    assert base64.b64decode(Cluster.objects.get(name="cli-krb").secret("kerberos_keytab")) == KEYTAB


def test_hostname_verification_off_needs_a_superuser_on_the_command_line(personas, ca, tmp_path, monkeypatch):
    cert, key = ca.issue("console-cli", client=True)
    (tmp_path / "cert.pem").write_text(cert)
    (tmp_path / "key.pem").write_text(key)
    args = ("--bootstrap-servers", "127.0.0.1:1", "--security-protocol", "SSL", "--client-cert-file",
            str(tmp_path / "cert.pem"), "--client-key-file", str(tmp_path / "key.pem"))  # fmt: skip
    assert kafka("cluster", "register", "cli-host", "--as", "admin", *args)[0] == 0
    RoleBinding.objects.create(cluster=Cluster.objects.get(name="cli-host"), user=personas["outsider"],
                               role=Role.ADMIN)  # fmt: skip
    update = ("cluster", "update", "--cluster", "cli-host", "--hostname-check", "off",
              "--client-key-file", str(tmp_path / "key.pem"))  # fmt: skip
    code, out = kafka(*update, "--as", "outsider")
    assert code == 3 and "Only a superuser may turn hostname verification off" in out, out
    assert Cluster.objects.get(name="cli-host").ssl_check_hostname is True
    code, out = kafka(*update, "--as", "admin")
    assert code == 0 and "off" in out, out
    assert Cluster.objects.get(name="cli-host").ssl_check_hostname is False
