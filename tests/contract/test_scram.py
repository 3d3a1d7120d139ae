"""SCRAM users (KIP-554) on the sandbox and on a real Kafka 4.1: the gateway's describe / upsert /
delete over brokers and over the controllers (KIP-919), Kafka's refusals word for word over the wire
(kafka-python's own DescribeUserScramCredentials / AlterUserScramCredentials classes), and a user the
console creates logging in with SCRAM.

Only this test's own ``ctscram-`` users are created, and they are deleted afterwards. Kafka applies a
change on the controller and brokers learn it from the metadata log: broker reads poll (``eventually``).
Kafka answers several users in hash order: those answers are compared as sets.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator

import pytest
from kafka.protocol.admin import AlterUserScramCredentialsRequest as A
from kafka.protocol.admin import DescribeUserScramCredentialsRequest as D

from bench.raw_clients import KpRaw
from console.kafka import KafkaGateway, KafkaOperationError

from .conftest import eventually, unique

pytestmark = [pytest.mark.contract]
SHA256, SHA512 = 1, 2


class Users:
    """Unique user names; every credential of each is deleted at the end."""

    def __init__(self, gw: KafkaGateway) -> None:
        self.gw = gw
        self.names: list[str] = []

    def name(self) -> str:
        n = unique("ctscram")
        self.names.append(n)
        return n

    def cleanup(self) -> None:
        for n in self.names:
            found = self.gw.describe_scram_user(n)
            for mechanism in found.mechanisms if found is not None else ():
                self.gw.delete_scram_credential(n, mechanism)


@pytest.fixture
def users(gw) -> Iterator[Users]:
    u = Users(gw)
    yield u
    u.cleanup()


@pytest.fixture
def raw(endpoints) -> Iterator[KpRaw]:
    if endpoints.real and os.environ.get("KAFKA_SECURITY_PROTOCOL"):
        pytest.skip("the raw protocol client speaks PLAINTEXT only")
    r = KpRaw(endpoints.bootstrap_servers)
    yield r
    r.admin.close()


def _shown(gw: KafkaGateway, name: str):
    found = gw.describe_scram_user(name)
    return None if found is None else [(c.mechanism, c.iterations) for c in found.credentials]


def _upsertion(name: str, mechanism: int = SHA512, iterations: int = 4096):
    salt = os.urandom(16)
    salted = hashlib.pbkdf2_hmac(
        "sha512" if mechanism == SHA512 else "sha256", b"ct-password", salt, max(iterations, 1)
    )
    return A.ScramCredentialUpsertion(
        name=name, mechanism=mechanism, iterations=iterations, salt=salt, salted_password=salted
    )


def _alter(raw: KpRaw, deletions=(), upsertions=()) -> set[tuple]:
    answer = raw.send(A(deletions=list(deletions), upsertions=list(upsertions)))
    return {(r.user, r.error_code, r.error_message) for r in answer.results}


def test_the_gateway_creates_rotates_and_deletes_a_credential(gw, users):
    name = users.name()
    assert gw.describe_scram_user(name) is None
    gw.upsert_scram_credential(name, "SCRAM-SHA-512", "ct-password-1", 8192)
    assert eventually(lambda: _shown(gw, name), lambda s: s == [("SCRAM-SHA-512", 8192)]) == [
        ("SCRAM-SHA-512", 8192)
    ]
    gw.upsert_scram_credential(name, "SCRAM-SHA-256", "ct-password-1", 4096)
    gw.upsert_scram_credential(name, "SCRAM-SHA-512", "ct-password-2", 16384)  # rotate
    both = [("SCRAM-SHA-256", 4096), ("SCRAM-SHA-512", 16384)]
    assert eventually(lambda: _shown(gw, name), lambda s: s == both) == both
    assert name in {u.name for u in gw.describe_scram_users()}
    gw.delete_scram_credential(name, "SCRAM-SHA-256")
    assert eventually(lambda: _shown(gw, name), lambda s: s == [("SCRAM-SHA-512", 16384)]) == [
        ("SCRAM-SHA-512", 16384)
    ]
    gw.delete_scram_credential(name, "SCRAM-SHA-512")
    assert eventually(lambda: _shown(gw, name), lambda s: s is None) is None
    with pytest.raises(KafkaOperationError) as missing:
        gw.delete_scram_credential(name, "SCRAM-SHA-512")
    assert (missing.value.name, missing.value.message) == (
        "RESOURCE_NOT_FOUND",
        "Attempt to delete a user credential that does not exist",
    )


@pytest.mark.parametrize(
    ("iterations", "message"), [(4095, "Too few iterations"), (16385, "Too many iterations")]
)
def test_the_gateway_reports_kafkas_refusal(gw, users, iterations, message):
    name = users.name()
    with pytest.raises(KafkaOperationError) as refused:
        gw.upsert_scram_credential(name, "SCRAM-SHA-256", "ct-password", iterations)
    assert (refused.value.code, refused.value.name, refused.value.message) == (
        93,
        "UNACCEPTABLE_CREDENTIAL",
        message,
    )
    assert gw.describe_scram_user(name) is None


def test_a_controller_registered_cluster_changes_credentials_but_cannot_read_them(gw, cgw, users):
    """Kafka 4.1's controllers take AlterUserScramCredentials; they advertise DescribeUserScramCredentials
    without a handler (UNKNOWN_SERVER_ERROR): the gateway refuses that read as Kafka's AdminClient does."""
    name = users.name()
    cgw.upsert_scram_credential(name, "SCRAM-SHA-256", "ct-password", 5000)
    assert eventually(lambda: _shown(gw, name), lambda s: s is not None) == [("SCRAM-SHA-256", 5000)]
    for read in (cgw.describe_scram_users, lambda: cgw.describe_scram_user(name)):
        with pytest.raises(KafkaOperationError) as refused:
            read()
        assert refused.value.name == "UNSUPPORTED_ENDPOINT_TYPE"
    cgw.delete_scram_credential(name, "SCRAM-SHA-256")
    assert eventually(lambda: _shown(gw, name), lambda s: s is None) is None
    with pytest.raises(KafkaOperationError) as missing:
        cgw.delete_scram_credential(name, "SCRAM-SHA-256")
    assert missing.value.name == "RESOURCE_NOT_FOUND"


def test_kafka_refuses_each_bad_entry_with_its_code_and_words(raw, users):
    good, twice, ok_too = users.name(), users.name(), users.name()
    assert _alter(
        raw,
        deletions=[
            A.ScramCredentialDeletion(name=good, mechanism=SHA512),
            A.ScramCredentialDeletion(name="", mechanism=SHA256),
        ],
        upsertions=[
            _upsertion(twice, SHA256),
            _upsertion(twice, SHA512),
            _upsertion(ok_too, SHA256, 4096),
            _upsertion(users.name(), 0),
            _upsertion(users.name(), SHA512, 100),
        ],
    ) == {
        (good, 91, "Attempt to delete a user credential that does not exist"),
        ("", 93, "Username must not be empty"),
        (twice, 92, "A user credential cannot be altered twice in the same request"),
        (ok_too, 0, None),
        (users.names[3], 33, "Unknown SCRAM mechanism"),
        (users.names[4], 93, "Too few iterations"),
    }

    def described(names):
        answer = raw.send(D(users=[D.UserName(name=n) for n in names]))
        assert (answer.error_code, answer.error_message) == (0, "")  # Kafka leaves the message at ""
        return {
            (
                r.user,
                r.error_code,
                r.error_message,
                tuple((c.mechanism, c.iterations) for c in r.credential_infos),
            )
            for r in answer.results
        }

    expected = {
        (ok_too, 0, "", ((SHA256, 4096),)),
        (twice, 91, f"Attempt to describe a user credential that does not exist: {twice}", ()),
        (
            good,
            92,
            f"Cannot describe SCRAM credentials for the same user twice in a single request: {good}",
            (),
        ),
    }
    assert eventually(lambda: described([ok_too, twice, good, good]), lambda d: d == expected) == expected
    everyone = raw.send(D(users=None))
    assert ok_too in {r.user for r in everyone.results if r.error_code == 0}


@pytest.fixture
def scram_listener(endpoints, gw) -> Iterator[tuple[str, KafkaGateway]]:
    """A SASL listener to log in on and a gateway on the same cluster: the real cluster's
    (``KAFKA_SASL_BOOTSTRAP_SERVERS``), or a sandbox of its own with SCRAM enabled."""
    if endpoints.real:
        sasl = os.environ.get("KAFKA_SASL_BOOTSTRAP_SERVERS", "").strip()
        if not sasl:
            pytest.skip("no SASL listener to log in on (set KAFKA_SASL_BOOTSTRAP_SERVERS)")
        yield sasl, gw
        return
    from console.kafka import ClusterConnection, get_gateway
    from sandbox.security import SandboxSecurity
    from sandbox.testing import running_sandbox

    sec = SandboxSecurity(
        protocol="SASL_PLAINTEXT", mechanisms=("PLAIN", "SCRAM-SHA-512"), users={"admin": "admin-secret"}
    )
    with running_sandbox(brokers=1, controllers=1, speed=0, security=sec) as sb:
        conn = ClusterConnection(
            bootstrap_servers=sb.bootstrap_servers,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_username="admin",
            sasl_password="admin-secret",
            request_timeout_s=10,
            connect_timeout_s=5,
        )
        secured = get_gateway(conn)
        try:
            yield sb.bootstrap_servers, secured
        finally:
            secured.close()


def _login(bootstrap: str, user: str, password: str) -> str | None:
    """None when librdkafka logs in with SCRAM-SHA-512 and reads the metadata, else its error."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    errors: list[str] = []
    admin = AdminClient(
        {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": user,
            "sasl.password": password,
            "error_cb": lambda err: errors.append(err.str()),
        }
    )
    try:
        admin.list_topics(timeout=4)
        return None
    except KafkaException as exc:
        admin.poll(0.2)  # serves error_cb: librdkafka's own words for the failure
        return "; ".join([str(exc), *errors])


def test_a_user_the_console_creates_logs_in_with_scram_and_not_once_deleted(scram_listener):
    bootstrap, gw = scram_listener
    users = Users(gw)
    name = users.name()
    try:
        gw.upsert_scram_credential(name, "SCRAM-SHA-512", "ct-login-password", 8192)
        eventually(lambda: _shown(gw, name), lambda s: s is not None)
        error = _login(bootstrap, name, "ct-login-password")
        if error is not None and "Unsupported SASL mechanism" in error:
            said = next(
                (part.strip() for part in error.split(";") if "Unsupported SASL mechanism" in part), error
            )
            pytest.skip(f"the SASL listener does not enable SCRAM-SHA-512: {said[:300]}")
        assert error is None
        assert "Authentication failed" in (_login(bootstrap, name, "not-the-password") or "")
        gw.delete_scram_credential(name, "SCRAM-SHA-512")
        eventually(lambda: _shown(gw, name), lambda s: s is None)
        assert "Authentication failed" in (_login(bootstrap, name, "ct-login-password") or "")
    finally:
        users.cleanup()
