"""DescribeUserScramCredentials / AlterUserScramCredentials (KIP-554) as Kafka 4.1 answers them, and
a credential made through them logging in on the sandbox's SASL listener (a deleted one no more)."""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import scramp
from kafka.protocol.admin import AlterUserScramCredentialsRequest as A
from kafka.protocol.admin import CreateTopicsRequest
from kafka.protocol.admin import DescribeUserScramCredentialsRequest as D
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

from sandbox import SandboxCluster
from sandbox.security import SandboxSecurity
from sandbox.testing import running_sandbox
from tests.sandbox.conftest import addr, call

SHA256, SHA512 = 1, 2
HASH = {SHA256: "sha256", SHA512: "sha512"}
NAME = {SHA256: "SCRAM-SHA-256", SHA512: "SCRAM-SHA-512"}
GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism {}"


@pytest.fixture(scope="module")
def sasl_cluster() -> Iterator[SandboxCluster]:
    sec = SandboxSecurity(
        protocol="SASL_PLAINTEXT",
        mechanisms=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
        users={"admin": "admin-secret"},
    )
    with running_sandbox(brokers=1, controllers=1, speed=0, security=sec) as c:
        yield c


@pytest.fixture(scope="module")
def plain_cluster() -> Iterator[SandboxCluster]:
    with running_sandbox(brokers=1, controllers=1, speed=0) as c:
        yield c


def upsertion(name: str, password: str, mechanism: int = SHA512, iterations: int = 4096) -> Any:
    """What Kafka's AdminClient sends: a random salt and SaltedPassword = Hi(password, salt, i)."""
    salt = os.urandom(24)
    salted = hashlib.pbkdf2_hmac(HASH.get(mechanism, "sha256"), password.encode(), salt, iterations)
    return A.ScramCredentialUpsertion(
        name=name, mechanism=mechanism, iterations=iterations, salt=salt, salted_password=salted
    )


def deletion(name: str, mechanism: int = SHA512) -> Any:
    return A.ScramCredentialDeletion(name=name, mechanism=mechanism)


def _admin_socket(cluster: SandboxCluster, hostport: str | None = None) -> socket.socket:
    """A connection authenticated as admin (PLAIN) when the cluster is secured."""
    hostport = hostport or cluster.bootstrap_servers
    sock = socket.create_connection(addr(hostport), timeout=5)
    if cluster.sasl_realm is not None:
        assert call(hostport, SaslHandshakeRequest(mechanism="PLAIN"), 1, sock=sock).error_code == 0
        auth = call(hostport, SaslAuthenticateRequest(auth_bytes=b"\x00admin\x00admin-secret"), 2, sock=sock)
        assert auth.error_code == 0
    return sock


def alter(cluster: SandboxCluster, deletions=(), upsertions=(), hostport: str | None = None) -> list[tuple]:
    hostport = hostport or cluster.bootstrap_servers
    with _admin_socket(cluster, hostport) as sock:
        resp = call(hostport, A(deletions=list(deletions), upsertions=list(upsertions)), 0, sock=sock)
    return [(r.user, r.error_code, r.error_message) for r in resp.results]


def describe(cluster: SandboxCluster, users: list[str] | None, hostport: str | None = None) -> list[tuple]:
    hostport = hostport or cluster.bootstrap_servers
    req = D(users=None if users is None else [D.UserName(name=u) for u in users])
    with _admin_socket(cluster, hostport) as sock:
        resp = call(hostport, req, 0, sock=sock)
    assert (resp.error_code, resp.error_message) == (0, "")
    return [
        (r.user, r.error_code, r.error_message, [(c.mechanism, c.iterations) for c in r.credential_infos])
        for r in resp.results
    ]


def scram_login(cluster: SandboxCluster, mechanism: str, user: str, password: str) -> tuple[int, str | None]:
    """A whole SCRAM exchange (scramp's client) on a new connection: (error code, message)."""
    host = cluster.bootstrap_servers
    with socket.create_connection(addr(host), timeout=5) as sock:
        assert call(host, SaslHandshakeRequest(mechanism=mechanism), 1, sock=sock).error_code == 0
        client = scramp.ScramClient([mechanism], user, password)
        first = call(
            host, SaslAuthenticateRequest(auth_bytes=client.get_client_first().encode()), 2, sock=sock
        )
        if first.error_code:
            return first.error_code, first.error_message
        client.set_server_first(bytes(first.auth_bytes).decode())
        final = call(
            host, SaslAuthenticateRequest(auth_bytes=client.get_client_final().encode()), 2, sock=sock
        )
        if final.error_code:
            return final.error_code, final.error_message
        client.set_server_final(bytes(final.auth_bytes).decode())  # the server proved it knows the key
        assert call(host, ApiVersionsRequest(), 0, sock=sock).error_code == 0  # and serves requests now
        return 0, None


def test_both_apis_are_advertised_by_brokers_and_controllers(plain_cluster):
    for hostport in (plain_cluster.bootstrap_servers, plain_cluster.bootstrap_controllers):
        resp = call(hostport, ApiVersionsRequest(), 0)
        keys = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
        assert (keys[50], keys[51]) == ((0, 0), (0, 0)), hostport


def test_a_created_credential_logs_in_rotates_and_stops_working_when_deleted(sasl_cluster):
    assert alter(sasl_cluster, upsertions=[upsertion("carol", "pw-1", SHA512, 8192)]) == [("carol", 0, None)]
    assert describe(sasl_cluster, ["carol"]) == [("carol", 0, "", [(SHA512, 8192)])]
    assert scram_login(sasl_cluster, "SCRAM-SHA-512", "carol", "pw-1") == (0, None)
    # only the mechanism that was set: SHA-256 knows no carol
    assert scram_login(sasl_cluster, "SCRAM-SHA-256", "carol", "pw-1") == (
        58,
        GENERIC.format("SCRAM-SHA-256"),
    )
    # rotate: the new password works, the old one no more
    assert alter(sasl_cluster, upsertions=[upsertion("carol", "pw-2", SHA512, 4096)]) == [("carol", 0, None)]
    assert scram_login(sasl_cluster, "SCRAM-SHA-512", "carol", "pw-2") == (0, None)
    assert scram_login(sasl_cluster, "SCRAM-SHA-512", "carol", "pw-1") == (
        58,
        GENERIC.format("SCRAM-SHA-512"),
    )
    assert describe(sasl_cluster, ["carol"]) == [("carol", 0, "", [(SHA512, 4096)])]
    # delete: login fails and describe no longer knows the user
    assert alter(sasl_cluster, deletions=[deletion("carol", SHA512)]) == [("carol", 0, None)]
    assert scram_login(sasl_cluster, "SCRAM-SHA-512", "carol", "pw-2") == (
        58,
        GENERIC.format("SCRAM-SHA-512"),
    )
    assert describe(sasl_cluster, ["carol"]) == [
        ("carol", 91, "Attempt to describe a user credential that does not exist: carol", [])
    ]


def test_a_created_credential_logs_in_with_librdkafka(sasl_cluster):
    from confluent_kafka.admin import AdminClient

    assert alter(sasl_cluster, upsertions=[upsertion("dave", "dave-pw", SHA256, 4096)]) == [("dave", 0, None)]
    admin = AdminClient(
        {
            "bootstrap.servers": sasl_cluster.bootstrap_servers,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "dave",
            "sasl.password": "dave-pw",
        }
    )
    assert sorted(admin.list_topics(timeout=10).brokers) == [1]
    alter(sasl_cluster, deletions=[deletion("dave", SHA256)])


def test_describe_with_no_users_answers_every_user_with_a_credential(sasl_cluster):
    alter(sasl_cluster, upsertions=[upsertion("erin", "x", SHA256, 5000)])
    try:
        for users in (None, []):
            everyone = {r[0]: r for r in describe(sasl_cluster, users)}
            # the configured user has both mechanisms at Kafka's minimum (as kafka-storage --add-scram makes)
            assert everyone["admin"] == ("admin", 0, "", [(SHA256, 4096), (SHA512, 4096)])
            assert everyone["erin"] == ("erin", 0, "", [(SHA256, 5000)])
    finally:
        alter(sasl_cluster, deletions=[deletion("erin", SHA256)])


def test_describe_refuses_a_user_named_twice_and_an_unknown_one(sasl_cluster):
    assert describe(sasl_cluster, ["admin", "nobody", "admin", "admin", ""]) == [
        (
            "admin",
            92,
            "Cannot describe SCRAM credentials for the same user twice in a single request: admin",
            [],
        ),
        ("nobody", 91, "Attempt to describe a user credential that does not exist: nobody", []),
        ("", 91, "Attempt to describe a user credential that does not exist: ", []),
    ]


@pytest.mark.parametrize(
    ("entry", "code", "message"),
    [
        (upsertion("", "x"), 93, "Username must not be empty"),
        (upsertion("u1", "x", mechanism=0), 33, "Unknown SCRAM mechanism"),
        (upsertion("u1", "x", mechanism=3), 33, "Unknown SCRAM mechanism"),
        (upsertion("u1", "x", iterations=4095), 93, "Too few iterations"),
        (upsertion("u1", "x", iterations=16385), 93, "Too many iterations"),
        (deletion("u1"), 91, "Attempt to delete a user credential that does not exist"),
        (deletion(""), 93, "Username must not be empty"),
        (deletion("u1", mechanism=7), 33, "Unknown SCRAM mechanism"),
    ],
)
def test_alter_refuses_what_kafkas_controller_refuses(plain_cluster, entry, code, message):
    name = entry.name
    if isinstance(entry, A.ScramCredentialDeletion):
        assert alter(plain_cluster, deletions=[entry]) == [(name, code, message)]
    else:
        assert alter(plain_cluster, upsertions=[entry]) == [(name, code, message)]
    if name:
        assert describe(plain_cluster, [name])[0][1] == 91  # nothing was made


def test_the_iteration_bounds_are_inclusive(plain_cluster):
    assert alter(
        plain_cluster, upsertions=[upsertion("lo", "x", SHA256, 4096), upsertion("hi", "x", SHA512, 16384)]
    ) == [
        ("lo", 0, None),
        ("hi", 0, None),
    ]
    assert describe(plain_cluster, ["lo", "hi"]) == [
        ("lo", 0, "", [(SHA256, 4096)]),
        ("hi", 0, "", [(SHA512, 16384)]),
    ]
    assert alter(plain_cluster, deletions=[deletion("lo", SHA256), deletion("hi", SHA512)]) == [
        ("lo", 0, None),
        ("hi", 0, None),
    ]


def test_a_user_named_twice_is_refused_whole_and_the_others_are_applied(plain_cluster):
    alter(plain_cluster, upsertions=[upsertion("twice", "x", SHA256)])
    results = alter(
        plain_cluster,
        deletions=[deletion("twice", SHA256)],
        upsertions=[
            upsertion("twice", "y", SHA512),
            upsertion("once", "z", SHA256),
            upsertion("once2", "z", 1, 1),
        ],
    )
    duplicate = "A user credential cannot be altered twice in the same request"
    assert results == [("once", 0, None), ("twice", 92, duplicate), ("once2", 93, "Too few iterations")]
    # neither the deletion nor the upsertion of "twice" happened
    assert describe(plain_cluster, ["twice", "once"]) == [
        ("twice", 0, "", [(SHA256, 4096)]),
        ("once", 0, "", [(SHA256, 4096)]),
    ]
    # named three times: one answer
    three = alter(
        plain_cluster, upsertions=[upsertion("x3", "a"), upsertion("x3", "b"), upsertion("x3", "c")]
    )
    assert three == [("x3", 92, duplicate)]
    alter(plain_cluster, deletions=[deletion("twice", SHA256), deletion("once", SHA256)])


def test_both_mechanisms_of_one_user_are_two_credentials(plain_cluster):
    alter(plain_cluster, upsertions=[upsertion("both", "x", SHA256, 4096)])
    alter(plain_cluster, upsertions=[upsertion("both", "x", SHA512, 9000)])
    assert describe(plain_cluster, ["both"]) == [("both", 0, "", [(SHA256, 4096), (SHA512, 9000)])]
    assert alter(plain_cluster, deletions=[deletion("both", SHA256)]) == [("both", 0, None)]
    assert describe(plain_cluster, ["both"]) == [("both", 0, "", [(SHA512, 9000)])]
    assert alter(plain_cluster, deletions=[deletion("both", SHA256)]) == [
        ("both", 91, "Attempt to delete a user credential that does not exist")
    ]
    alter(plain_cluster, deletions=[deletion("both", SHA512)])


def test_a_controller_takes_an_alteration_and_brokers_see_it(plain_cluster):
    controller = plain_cluster.bootstrap_controllers.split(",")[0]
    assert alter(plain_cluster, upsertions=[upsertion("viactl", "x", SHA256)], hostport=controller) == [
        ("viactl", 0, None)
    ]
    assert describe(plain_cluster, ["viactl"]) == [("viactl", 0, "", [(SHA256, 4096)])]
    alter(plain_cluster, deletions=[deletion("viactl", SHA256)])


def test_a_controller_cannot_describe_as_kafka_4_1s_cannot(plain_cluster):
    """Kafka 4.1's controllers advertise the API without a handler: UNKNOWN_SERVER_ERROR with a
    nameless result per user asked, and no answer at all for null users."""
    controller = plain_cluster.bootstrap_controllers.split(",")[0]
    resp = call(controller, D(users=[D.UserName(name="a"), D.UserName(name="b")]), 0)
    assert (resp.error_code, resp.error_message) == (-1, None)
    assert [(r.user, r.error_code, r.error_message) for r in resp.results] == [("", -1, None), ("", -1, None)]
    with pytest.raises(TimeoutError):
        sock = socket.create_connection(addr(controller), timeout=1)
        try:
            call(controller, D(users=None), 0, sock=sock)
        finally:
            sock.close()


def test_a_failed_request_runs_on_a_copy_of_a_state_that_holds_credentials(plain_cluster):
    # CI: once a credential lived in a cluster without SASL, every request with an injected error
    # (run on a deep copy of the state, so it leaves no trace) closed the connection instead.
    assert [r[:2] for r in alter(plain_cluster, upsertions=[upsertion("copied", "copied-secret")])] == [
        ("copied", 0)
    ]
    plain_cluster.inject_fault("CreateTopics", error_code=38, count=1)  # INVALID_REPLICATION_FACTOR
    req = CreateTopicsRequest(
        topics=[CreateTopicsRequest.CreatableTopic(name="never-made", num_partitions=1, replication_factor=1,
                                                   assignments=[], configs=[])],
        timeout_ms=5000, validate_only=False,
    )  # fmt: skip
    answer = call(plain_cluster.bootstrap_servers, req, 5)
    assert [(t.name, t.error_code) for t in answer.topics] == [("never-made", 38)]
    assert "never-made" not in plain_cluster.state.topics
    assert describe(plain_cluster, ["copied"])[0][1] == 0  # the credential is still there


def test_a_faulted_alteration_on_a_sasl_cluster_changes_no_credential(sasl_cluster):
    # A request with an injected error runs on a deep copy of the state and must leave no trace:
    # neither a new credential nor a deletion, and the SASL listener keeps answering as before.
    assert [r[:2] for r in alter(sasl_cluster, upsertions=[upsertion("kept", "kept-secret")])] == [
        ("kept", 0)
    ]
    sasl_cluster.inject_fault("AlterUserScramCredentials", error_code=41, count=1)  # NOT_CONTROLLER
    answer = alter(
        sasl_cluster,
        deletions=[deletion("kept")],
        upsertions=[upsertion("faulted", "faulted-secret")],
    )
    assert sorted(r[:2] for r in answer) == [("faulted", 41), ("kept", 41)]
    assert describe(sasl_cluster, ["kept"])[0][1:] == (0, "", [(SHA512, 4096)])
    assert describe(sasl_cluster, ["faulted"])[0][1] == 91
    assert scram_login(sasl_cluster, "SCRAM-SHA-512", "kept", "kept-secret") == (0, None)
    assert scram_login(sasl_cluster, "SCRAM-SHA-512", "faulted", "faulted-secret")[0] == 58
    assert alter(sasl_cluster, deletions=[deletion("kept")]) == [("kept", 0, None)]


def test_credentials_are_saved_and_loaded_with_the_state(tmp_path):
    from sandbox.persist import dump_state, load_state, save_state

    path = str(tmp_path / "state.json")
    sec = SandboxSecurity(
        protocol="SASL_PLAINTEXT", mechanisms=("PLAIN", "SCRAM-SHA-512"), users={"admin": "admin-secret"}
    )
    with running_sandbox(brokers=1, controllers=1, speed=0, security=sec) as c:
        assert alter(c, upsertions=[upsertion("saved", "saved-secret", SHA512, 8192)]) == [("saved", 0, None)]
        assert alter(c, deletions=[deletion("admin")]) == [("admin", 0, None)]
        save_state(c, path)
    restored = SandboxCluster(brokers=1, controllers=1, speed=0, security=sec)
    assert load_state(restored, path)
    assert restored.state.scram_credentials.users() == {"saved": {"SCRAM-SHA-512": 8192}}
    with running_sandbox(brokers=1, controllers=1, speed=0, security=sec, state_file=path) as c:
        assert scram_login(c, "SCRAM-SHA-512", "saved", "saved-secret") == (0, None)
        assert scram_login(c, "SCRAM-SHA-512", "admin", "admin-secret")[0] == 58
    # a state saved before credentials were kept loads, and keeps the configured users' credentials
    older = dump_state(restored)
    del older["scram_credentials"]
    (tmp_path / "older.json").write_text(__import__("json").dumps(older))
    fresh = SandboxCluster(brokers=1, controllers=1, speed=0, security=sec)
    assert load_state(fresh, str(tmp_path / "older.json"))
    assert fresh.state.scram_credentials.users() == {"admin": {"SCRAM-SHA-512": 4096}}
