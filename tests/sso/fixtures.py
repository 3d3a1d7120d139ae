"""Real identity servers for the single sign-on tests, one of each per test session:

- ``slapd``: Debian's OpenLDAP server on a loopback port, with a throwaway config and database under a
  tmp dir, loaded (by ldapadd) with people, a service account and groupOfNames groups.
- ``oidc_provider``: the Django project in tests/sso/provider (django-oauth-toolkit, OIDC on, an RSA
  key made here) run by its own ``runserver`` process on a loopback port. Besides the web client for
  sign-on it has a confidential client-credentials client (``service_client_id``, for SASL/OAUTHBEARER):
  its access tokens are JWTs signed with the provider's key (``jwks_url``), ``aud`` = ``audience``.

Both are started by context managers (``running_slapd``, ``running_provider``) that ``make try-sso``
(tests/try_it.py, docs/try.md) uses too. Each has ``reset()`` to put the users' groups back; the ``ldap_directory`` and ``identity_provider``
fixtures call it before each test. A missing slapd or "ldap" extra fails the tests that need them, never
skips them: `make test` installs both (scripts/system-deps), so a skip would hide a broken set-up.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

SLAPD = shutil.which("slapd") or "/usr/sbin/slapd"
HERE = Path(__file__).resolve().parent

BASE = "dc=example,dc=org"
ROOT_DN, ROOT_PW = f"cn=admin,{BASE}", "root-secret"
BIND_DN, BIND_PW = f"cn=console,ou=services,{BASE}", "console-bind-secret"
PEOPLE, GROUPS = f"ou=people,{BASE}", f"ou=groups,{BASE}"
# user -> (password, groups); the same people at both providers.
USERS = {
    "alice": ("alice-pw-1", ["kafka-operators"]),
    "bob": ("bob-pw-1", ["kafka-viewers"]),
    "carol": ("carol-pw-1", []),
}
GROUP_NAMES = ["kafka-operators", "kafka-viewers", "unrelated-team"]
# In the directory only: an account named like the console's system actor, in the operators' group.
RESERVED_DIRECTORY_USERS = {"console-system": ("system-pw-1", ["kafka-operators"])}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_dn(name: str) -> str:
    return f"cn={name},{GROUPS}"


def user_dn(name: str) -> str:
    return f"uid={name},{PEOPLE}"


SLAPD_CONF = """\
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
pidfile {dir}/slapd.pid
TLSCACertificateFile {dir}/ca.pem
TLSCertificateFile {dir}/server.pem
TLSCertificateKeyFile {dir}/server.key
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 10485760
suffix "{base}"
rootdn "{root_dn}"
rootpw {root_pw}
directory {dir}/db
access to attrs=userPassword by self read by anonymous auth by * none
access to * by users read by * none
"""


def _ldif(groups: dict[str, list[str]]) -> str:
    blocks = [
        f"dn: {BASE}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example",
        f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people",
        f"dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups",
        f"dn: ou=services,{BASE}\nobjectClass: organizationalUnit\nou: services",
        f"dn: {BIND_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\n"
        f"cn: console\nuserPassword: {BIND_PW}",
    ]
    for name, (password, _) in {**USERS, **RESERVED_DIRECTORY_USERS}.items():
        blocks.append(
            f"dn: {user_dn(name)}\nobjectClass: inetOrgPerson\nuid: {name}\ncn: {name.title()} Example\n"
            f"givenName: {name.title()}\nsn: Example\nmail: {name}@example.org\nuserPassword: {password}"
        )
    for name in GROUP_NAMES:
        # groupOfNames needs at least one member: the service account stands in for an empty group.
        members = [user_dn(u) for u in groups.get(name, [])] or [BIND_DN]
        blocks.append(
            f"dn: {group_dn(name)}\nobjectClass: groupOfNames\ncn: {name}\n"
            + "\n".join(f"member: {m}" for m in members)
        )
    return "\n\n".join(blocks) + "\n"


def _initial_groups() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {g: [] for g in GROUP_NAMES}
    for user, (_, groups) in {**USERS, **RESERVED_DIRECTORY_USERS}.items():
        for g in groups:
            out[g].append(user)
    return out


def _tls_files(workdir: Path) -> None:
    """A throwaway CA (ca.pem) and a certificate for 127.0.0.1 signed by it (server.pem, server.key)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def cert(subject, issuer, public_key, signing_key, *extensions):
        builder = (
            x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=2))
        )  # fmt: skip
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        return builder.sign(signing_key, hashes.SHA256())

    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "console test CA")])
    ca = cert(
        ca_name,
        ca_name,
        ca_key.public_key(),
        ca_key,
        (x509.BasicConstraints(ca=True, path_length=None), True),
    )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    server = cert(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]), ca_name, key.public_key(), ca_key,
        (x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False),
    )  # fmt: skip
    (workdir / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (workdir / "server.pem").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    (workdir / "server.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )


@dataclass
class Directory:
    uri: str  # ldap:// (StartTLS offered)
    ldaps_uri: str
    workdir: Path

    @property
    def ca_file(self) -> str:
        return str(self.workdir / "ca.pem")

    def _tool(self, tool: str, text: str) -> None:
        run = subprocess.run(
            [tool, "-x", "-H", self.uri, "-D", ROOT_DN, "-w", ROOT_PW],
            input=text, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        if run.returncode != 0:
            raise AssertionError(f"{tool} failed: {run.stderr or run.stdout}")

    def set_members(self, group: str, users: list[str]) -> None:
        members = [user_dn(u) for u in users] or [BIND_DN]
        text = f"dn: {group_dn(group)}\nchangetype: modify\nreplace: member\n" + "".join(
            f"member: {m}\n" for m in members
        )
        self._tool("ldapmodify", text)

    def reset(self) -> None:
        for group, users in _initial_groups().items():
            self.set_members(group, users)


def require_ldap_extra() -> None:
    """Fail (never skip) without the "ldap" extra (django-auth-ldap, python-ldap)."""
    try:
        import django_auth_ldap  # noqa: F401
    except ImportError:
        pytest.fail(
            "the 'ldap' extra is not installed: `make test` installs it (with what python-ldap needs to "
            "build, scripts/system-deps); or pip install -e '.[dev,ldap]'",
            pytrace=False,
        )


class ServerDidNotStart(RuntimeError):
    """A server of the tests (or of ``make try-sso``) did not come up; the message ends with its log."""


@contextmanager
def running_slapd(workdir: Path, port: int = 0, ldaps_port: int = 0) -> Iterator[Directory]:
    """slapd on 127.0.0.1 (``port``/``ldaps_port``, 0: free ones) with a throwaway config, TLS files and
    database under ``workdir``, loaded with the test directory; stopped when the block ends."""
    (workdir / "db").mkdir(parents=True, exist_ok=True)
    conf = workdir / "slapd.conf"
    conf.write_text(SLAPD_CONF.format(dir=workdir, base=BASE, root_dn=ROOT_DN, root_pw=ROOT_PW))
    _tls_files(workdir)
    uri, ldaps_uri = (
        f"ldap://127.0.0.1:{port or free_port()}",
        f"ldaps://127.0.0.1:{ldaps_port or free_port()}",
    )
    log = (workdir / "slapd.log").open("w")
    # -d keeps slapd in the foreground (so its starter owns the process); level 0 logs nothing extra.
    process = subprocess.Popen(
        [SLAPD, "-d", "0", "-f", str(conf), "-h", f"{uri}/ {ldaps_uri}/"], stdout=log, stderr=log
    )
    directory = Directory(uri=uri, ldaps_uri=ldaps_uri, workdir=workdir)
    try:
        deadline = time.monotonic() + 20
        while True:
            probe = subprocess.run(
                ["ldapsearch", "-x", "-H", uri, "-D", ROOT_DN, "-w", ROOT_PW, "-b", "", "-s", "base"],
                capture_output=True, timeout=10,
            )  # fmt: skip
            if probe.returncode in (0, 32):  # 32: no such object (the base is not loaded yet)
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise ServerDidNotStart(f"slapd did not start: {(workdir / 'slapd.log').read_text()[-2000:]}")
            time.sleep(0.2)
        directory._tool("ldapadd", _ldif(_initial_groups()))
        yield directory
    finally:
        process.terminate()
        process.wait(10)
        log.close()


@pytest.fixture(scope="session")
def slapd(tmp_path_factory):
    if not os.path.exists(SLAPD) or not shutil.which("ldapadd"):
        pytest.fail(
            "Debian's slapd/ldap-utils are not installed: the LDAP tests need a real OpenLDAP server "
            "(`make test` installs them through scripts/system-deps; or apt-get install slapd ldap-utils)",
            pytrace=False,
        )
    with running_slapd(tmp_path_factory.mktemp("slapd")) as directory:
        yield directory


@pytest.fixture
def ldap_directory(slapd):
    slapd.reset()
    return slapd


@dataclass
class Provider:
    url: str
    env: dict
    redirect_uris: list[str] = field(default_factory=list)
    client_id: str = "console"
    client_secret: str = "console-client-secret"
    # the OAuth client-credentials client (SASL/OAUTHBEARER): JWT access tokens, aud = audience
    service_client_id: str = "kafka-console"
    service_client_secret: str = "kafka-console-secret"
    audience: str = "kafka"

    @property
    def issuer(self) -> str:
        return f"{self.url}/o"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/token/"

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/.well-known/jwks.json"

    def client_credentials_token(self, scope: str = "") -> dict:
        """A fresh token answer (access_token = a signed JWT, expires_in, scope) for the service client."""
        answer = requests.post(
            self.token_endpoint,
            data={"grant_type": "client_credentials", **({"scope": scope} if scope else {})},
            auth=(self.service_client_id, self.service_client_secret),
            timeout=10,
        )
        answer.raise_for_status()
        return answer.json()

    def manage(self, *args: str) -> None:
        run = subprocess.run(
            [sys.executable, "-m", "django", *args], env=self.env, cwd=HERE,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if run.returncode != 0:
            raise AssertionError(f"identity provider {args[:2]} failed: {run.stderr[-2000:]}")

    def allow_redirect(self, uri: str) -> None:
        if uri not in self.redirect_uris:
            self.redirect_uris.append(uri)
            self.manage("idp", "client", self.client_id, self.client_secret, *self.redirect_uris)

    def set_groups(self, user: str, groups: list[str]) -> None:
        self.manage("idp", "user", user, USERS[user][0], *groups)

    def reset(self) -> None:
        for user, (_, groups) in USERS.items():
            self.set_groups(user, groups)


def _rsa_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@contextmanager
def running_provider(
    workdir: Path, port: int = 0, host: str = "127.0.0.1", redirect_uris: tuple[str, ...] = ()
) -> Iterator[Provider]:
    """The identity provider (tests/sso/provider) by its own ``runserver`` on ``host``:``port`` (0: a free
    port), its database under ``workdir``, with the web client allowed to send browsers back to
    ``redirect_uris``, the service client and the people of USERS; stopped when the block ends."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "provider.settings",
        "PYTHONPATH": str(HERE),
        "IDP_DB": str(workdir / "idp.sqlite3"),
        "IDP_RSA_KEY": _rsa_pem(),
        "IDP_TOKEN_AUDIENCE": Provider.audience,
    }
    port = port or free_port()
    provider = Provider(url=f"http://{host}:{port}", env=env)
    provider.manage("migrate", "--verbosity", "0")
    for uri in redirect_uris:
        provider.allow_redirect(uri)
    provider.manage("idp", "service", provider.service_client_id, provider.service_client_secret)
    provider.reset()
    log = (workdir / "idp.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{port}", "--noreload"],
        env=env, cwd=HERE, stdout=log, stderr=log,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{provider.issuer}/.well-known/openid-configuration", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise ServerDidNotStart(
                    f"the identity provider did not start: {(workdir / 'idp.log').read_text()[-2000:]}"
                )
            time.sleep(0.2)
        provider.private_key_pem = env["IDP_RSA_KEY"]
        yield provider
    finally:
        process.terminate()
        process.wait(10)
        log.close()


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory):
    redirect = ("http://testserver/sso/oidc/callback/",)
    with running_provider(tmp_path_factory.mktemp("idp"), redirect_uris=redirect) as provider:
        yield provider


@pytest.fixture
def identity_provider(oidc_provider):
    oidc_provider.reset()
    return oidc_provider
