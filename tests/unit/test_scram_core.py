"""The SCRAM users area's pure checks (console/scram/core.py) and the gateway's client-side hashing:
what is refused before Kafka, and that no refusal ever quotes the password."""

from __future__ import annotations

import hashlib
import hmac

import pytest
import scramp

from console.changes.kinds import ChangeInvalid
from console.kafka.scram import salted_password
from console.scram import core

SECRET = "Tr0ub4dor&3-horse"


def test_a_valid_credential_is_taken_as_given():
    change = core.check_set("alice-app", "SCRAM-SHA-256", "4096", SECRET)
    assert (change.user, change.mechanism, change.iterations, change.password) == (
        "alice-app",
        "SCRAM-SHA-256",
        4096,
        SECRET,
    )
    assert SECRET not in repr(change)
    assert core.check_set("u", "SCRAM-SHA-512", 16384, SECRET).iterations == 16384
    assert core.check_delete("a,b=c", "SCRAM-SHA-512") == ("a,b=c", "SCRAM-SHA-512")  # SCRAM escapes these


@pytest.mark.parametrize(
    ("user", "mechanism", "iterations", "password", "expected"),
    [
        ("", "SCRAM-SHA-256", 4096, SECRET, "name the user"),
        (" bob", "SCRAM-SHA-256", 4096, SECRET, "starts or ends with a space"),
        ("bo\x00b", "SCRAM-SHA-256", 4096, SECRET, "control character"),
        ("x" * 257, "SCRAM-SHA-256", 4096, SECRET, "longer than 256"),
        ("bob", "SCRAM-SHA-1", 4096, SECRET, "SCRAM-SHA-256 or SCRAM-SHA-512"),
        ("bob", "PLAIN", 4096, SECRET, "SCRAM-SHA-256 or SCRAM-SHA-512"),
        ("bob", "SCRAM-SHA-256", 4095, SECRET, "from 4096 to 16384"),
        ("bob", "SCRAM-SHA-256", 16385, SECRET, "from 4096 to 16384"),
        ("bob", "SCRAM-SHA-256", "many", SECRET, "from 4096 to 16384"),
        ("bob", "SCRAM-SHA-256", True, SECRET, "from 4096 to 16384"),
        ("bob", "SCRAM-SHA-256", 4096, "", "cannot be empty"),
        ("bob", "SCRAM-SHA-256", 4096, None, "cannot be empty"),
        ("bob", "SCRAM-SHA-256", 4096, "short1", "at least 8"),
        ("bob", "SCRAM-SHA-256", 4096, "p" * 1025, "at most 1024"),
        ("bob", "SCRAM-SHA-256", 4096, "pass\x00word-long", "NUL or a lone surrogate"),
        ("bob", "SCRAM-SHA-256", 4096, "pass\ud800word-long", "NUL or a lone surrogate"),
    ],
)
def test_it_refuses_before_kafka_and_never_quotes_the_password(
    user, mechanism, iterations, password, expected
):
    with pytest.raises(ChangeInvalid) as refused:
        core.check_set(user, mechanism, iterations, password)
    text = str(refused.value)
    assert expected in text
    if isinstance(password, str) and len(password) >= 4:
        assert password not in text and password[:6] not in text


def test_every_problem_is_listed_at_once():
    with pytest.raises(ChangeInvalid) as refused:
        core.check_set("", "MD5", 1, "")
    assert len(refused.value.errors) == 4


def test_delete_checks_the_user_and_the_mechanism():
    for user, mechanism in (("", "SCRAM-SHA-256"), ("bob", "SCRAM-SHA-384")):
        with pytest.raises(ChangeInvalid):
            core.check_delete(user, mechanism)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_the_salted_password_is_hi_of_rfc_5802_and_logs_in_with_a_scram_client(mechanism):
    """The gateway's SaltedPassword gives the stored and server keys a SCRAM server checks a client
    against: a scramp client with the password logs in against them."""
    salt = b"0123456789abcdef0123456789abcdef"
    salted = salted_password(mechanism, SECRET, salt, 4096)
    h = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}[mechanism]
    assert salted == hashlib.pbkdf2_hmac(h().name, SECRET.encode(), salt, 4096)
    stored = h(hmac.new(salted, b"Client Key", h).digest()).digest()
    server = hmac.new(salted, b"Server Key", h).digest()
    # scramp's own derivation from the password agrees
    assert scramp.ScramMechanism(mechanism).make_auth_info(SECRET, 4096, salt) == (salt, stored, server, 4096)
    server_side = scramp.ScramMechanism(mechanism).make_server(lambda user: (salt, stored, server, 4096))
    client = scramp.ScramClient([mechanism], "bob", SECRET)
    server_side.set_client_first(client.get_client_first())
    client.set_server_first(server_side.get_server_first())
    server_side.set_client_final(client.get_client_final())
    client.set_server_final(server_side.get_server_final())  # raises on a wrong key
