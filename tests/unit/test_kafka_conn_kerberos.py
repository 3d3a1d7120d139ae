"""GSSAPI logins against real MIT KDCs: two realms made for this run (Debian's krb5-kdc), each with
its own krb5.conf, used by one process at once; and the Kerberos failures named.

The sandbox has no GSSAPI (the issue tests it on real Kafka), so this checks the console's half:
credentials from a keytab into a private memory ccache, and a service ticket for kafka/localhost
accepted by the service's own keytab, which is the token exchange kafka-python's GSSAPI
mechanism sends.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# `make test` installs the "kerberos" extra and Debian's krb5-kdc/krb5-admin-server (scripts/system-deps):
# without them these tests fail rather than skip, so a broken set-up is never hidden.
import gssapi
import pytest

from console.kafka import KafkaOperationError, KerberosSettings, kerberos
from tests.procs import free_port

if shutil.which("krb5kdc") is None or shutil.which("kadmin.local") is None:
    raise RuntimeError(
        "the Kerberos tests need Debian's krb5-kdc and krb5-admin-server (make test installs them)"
    )


@dataclass
class Realm:
    name: str
    port: int
    root: Path
    krb5_conf: str
    proc: subprocess.Popen

    def keytab(self, principal: str) -> bytes:
        path = self.root / f"{principal.replace('/', '_')}.keytab"
        if not path.exists():
            self.admin(f"ktadd -k {path} -norandkey {principal}@{self.name}")
        return path.read_bytes()

    def admin(self, query: str) -> None:
        env = dict(
            os.environ, KRB5_CONFIG=str(self.root / "krb5.conf"), KRB5_KDC_PROFILE=str(self.root / "kdc.conf")
        )
        subprocess.run(
            ["kadmin.local", "-r", self.name, "-q", query], env=env, check=True, capture_output=True
        )


def make_realm(name: str) -> Realm:
    root = Path(tempfile.mkdtemp(prefix=f"krb-{name.lower()}-"))
    port = free_port()
    krb5_conf = (
        f"[libdefaults]\n dns_lookup_kdc = false\n dns_lookup_realm = false\n dns_canonicalize_hostname = false\n"
        f" rdns = false\n udp_preference_limit = 1\n"
        f"[realms]\n {name} = {{\n  kdc = 127.0.0.1:{port}\n }}\n"
    )
    (root / "krb5.conf").write_text(krb5_conf)
    (root / "kdc.conf").write_text(
        f"[kdcdefaults]\n kdc_ports = {port}\n kdc_tcp_ports = {port}\n kdc_listen = 127.0.0.1:{port}\n"
        f" kdc_tcp_listen = 127.0.0.1:{port}\n"
        f"[realms]\n {name} = {{\n  database_name = {root}/principal\n  key_stash_file = {root}/stash\n"
        f"  acl_file = {root}/kadm5.acl\n }}\n[logging]\n kdc = FILE:{root}/kdc.log\n"
    )
    (root / "kadm5.acl").write_text("")
    env = dict(os.environ, KRB5_CONFIG=str(root / "krb5.conf"), KRB5_KDC_PROFILE=str(root / "kdc.conf"))
    subprocess.run(
        ["kdb5_util", "create", "-s", "-r", name, "-P", "master-pw-test-only"],
        env=env,
        check=True,
        capture_output=True,
    )
    proc = subprocess.Popen(
        ["krb5kdc", "-n", "-r", name], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    realm = Realm(name, port, root, krb5_conf, proc)
    for principal in ("console", "kafka/localhost"):
        realm.admin(f"addprinc -randkey {principal}@{name}")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    return realm


@pytest.fixture(scope="module")
def realms():
    made = [make_realm("ALPHA.TEST"), make_realm("BETA.TEST")]
    yield made
    for realm in made:
        realm.proc.terminate()
        realm.proc.wait(5)
        shutil.rmtree(realm.root, ignore_errors=True)


def service_accepts(realm: Realm, login: kerberos.KerberosLogin) -> str:
    """Initiate to kafka/localhost@REALM with the login's credentials; the service's keytab accepts.
    Returns the initiator's name as the service sees it."""
    with tempfile.TemporaryDirectory() as d:
        keytab = Path(d, "service.keytab")
        keytab.write_bytes(realm.keytab("kafka/localhost"))
        service = gssapi.Name(f"kafka/localhost@{realm.name}", gssapi.NameType.kerberos_principal)
        client = gssapi.SecurityContext(name=service, usage="initiate", creds=login.credentials())
        acceptor_creds = gssapi.Credentials(name=service, usage="accept", store={"keytab": str(keytab)})
        server = gssapi.SecurityContext(creds=acceptor_creds, usage="accept")
        token = client.step()
        while not (client.complete and server.complete):
            answer = server.step(token)
            if answer and not client.complete:
                token = client.step(answer)
        return str(server.initiator_name)


def test_it_logs_in_to_two_realms_from_one_process(realms):
    alpha, beta = realms
    a = kerberos.login_for(
        KerberosSettings(f"console@{alpha.name}", alpha.keytab("console"), krb5_conf=alpha.krb5_conf)
    )
    b = kerberos.login_for(
        KerberosSettings(f"console@{beta.name}", beta.keytab("console"), krb5_conf=beta.krb5_conf)
    )
    try:
        assert service_accepts(alpha, a) == f"console@{alpha.name}"
        assert service_accepts(beta, b) == f"console@{beta.name}"
        assert service_accepts(alpha, a) == f"console@{alpha.name}"  # cached credentials, still right
        # tickets live in this process's memory ccaches, the keytabs in private 0600 files
        keytab_dir = a._dir
        assert oct(os.stat(keytab_dir).st_mode & 0o777) == "0o700"
        assert oct(os.stat(os.path.join(keytab_dir, "client.keytab")).st_mode & 0o777) == "0o600"
    finally:
        kerberos.forget(a.settings)
        kerberos.forget(b.settings)
    assert not os.path.exists(keytab_dir)


def _refused_login(settings: KerberosSettings) -> KafkaOperationError:
    """The error a login with ``settings`` fails with (the login's files removed after)."""
    login = kerberos.KerberosLogin(settings)
    try:
        with pytest.raises(KafkaOperationError) as exc:
            login.credentials()
    finally:
        login.close()
    assert exc.value.name == "KERBEROS_LOGIN_FAILED"
    return exc.value


def test_it_names_a_principal_the_kdc_does_not_know(realms):
    alpha, _ = realms
    alpha.admin(f"addprinc -randkey ghost@{alpha.name}")
    keytab = alpha.keytab("ghost")
    alpha.admin(f"delprinc -force ghost@{alpha.name}")
    refused = _refused_login(KerberosSettings(f"ghost@{alpha.name}", keytab, krb5_conf=alpha.krb5_conf))
    assert refused.message.startswith("a principal is unknown to the KDC: ")


def test_it_names_an_unreachable_kdc(realms):
    alpha, _ = realms
    conf = f"[libdefaults]\n udp_preference_limit = 1\n[realms]\n {alpha.name} = {{\n  kdc = 127.0.0.1:{free_port()}\n }}\n"
    start = time.monotonic()
    refused = _refused_login(
        KerberosSettings(f"console@{alpha.name}", alpha.keytab("console"), krb5_conf=conf)
    )
    assert time.monotonic() - start < 30
    assert refused.message.startswith(f"the KDC of {alpha.name} is unreachable: ")


def test_it_names_a_keytab_without_the_principal(realms):
    alpha, _ = realms
    refused = _refused_login(
        KerberosSettings(f"nobody@{alpha.name}", alpha.keytab("console"), krb5_conf=alpha.krb5_conf)
    )
    assert refused.message.startswith(f"the keytab holds no key for nobody@{alpha.name}: ")


def test_it_refuses_a_file_that_is_not_a_keytab():
    with pytest.raises(ValueError, match="the keytab is not a Kerberos keytab file"):
        KerberosSettings("console@ALPHA.TEST", b"not a keytab at all")
