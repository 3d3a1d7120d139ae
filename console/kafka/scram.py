"""SCRAM users (KIP-554): DescribeUserScramCredentials and AlterUserScramCredentials.

Sent over the kafka-python request client (``self._kp``): to a broker (which forwards an
alteration to the active controller) or, for a controller-registered cluster (KIP-919), an
alteration to the active controller. Kafka 4.1's controllers advertise DescribeUserScramCredentials
but cannot answer it (UNKNOWN_SERVER_ERROR, or no answer for "all users"): through the controllers
the reads are refused before sending (UNSUPPORTED_ENDPOINT_TYPE), as Kafka's AdminClient does.

An upsertion is made as Kafka's AdminClient makes it: a random salt and
SaltedPassword = Hi(UTF-8 password, salt, iterations), i.e. PBKDF2-HMAC with the mechanism's hash
(``hashlib.pbkdf2_hmac``); the password itself never leaves this module, and no error text here
carries it.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from kafka.protocol.admin import (
    AlterUserScramCredentialsRequest,
    DescribeUserScramCredentialsRequest,
)

from console import collector

from .base import GatewayBase
from .errors import KafkaOperationError, from_code
from .kp import check

__all__ = ["MECHANISMS", "ScramCredentialInfo", "ScramMixin", "ScramUser", "ScramUserPage"]

#: Kafka's ScramMechanism types, and the hash of each.
MECHANISMS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
_HASH = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
_NAMES = {code: name for name, code in MECHANISMS.items()}
SALT_BYTES = 32
INVALID_REQUEST, UNSUPPORTED_ENDPOINT_TYPE = 42, 115


@dataclass(frozen=True)
class ScramCredentialInfo:
    """One SCRAM credential of a user: its mechanism and iteration count (nothing secret)."""

    mechanism: str  # SCRAM-SHA-256 / SCRAM-SHA-512 (UNKNOWN-<n> for a type this console does not know)
    iterations: int


@dataclass(frozen=True)
class ScramUser:
    """A user with at least one SCRAM credential."""

    name: str
    credentials: tuple[ScramCredentialInfo, ...]

    @property
    def mechanisms(self) -> tuple[str, ...]:
        return tuple(c.mechanism for c in self.credentials)


@dataclass(frozen=True)
class ScramUserPage:
    """Some of the users with a SCRAM credential (by name) and how many there are in all."""

    total: int
    users: tuple[ScramUser, ...]


_BY_USER = attrgetter("user")


def _user(result: Any) -> ScramUser:
    infos = sorted(
        (
            ScramCredentialInfo(_NAMES.get(c.mechanism, f"UNKNOWN-{c.mechanism}"), int(c.iterations))
            for c in result.credential_infos
        ),
        key=lambda c: c.mechanism,
    )
    return ScramUser(result.user, tuple(infos))


def _mechanism_type(mechanism: str) -> int:
    code = MECHANISMS.get(mechanism)
    if code is None:
        raise KafkaOperationError(
            INVALID_REQUEST,
            "INVALID_REQUEST",
            f"unknown SCRAM mechanism {mechanism!r} (SCRAM-SHA-256 or SCRAM-SHA-512)",
        )
    return code


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(password, salt, iterations) of RFC 5802 (PBKDF2 with HMAC of the mechanism's hash), on the
    password's UTF-8 bytes as Kafka's ScramFormatter takes them."""
    try:
        data = password.encode("utf-8")
    except UnicodeEncodeError:
        raise KafkaOperationError(
            INVALID_REQUEST, "INVALID_REQUEST", "the password is not valid text"
        ) from None
    return hashlib.pbkdf2_hmac(_HASH[mechanism], data, salt, iterations)


class _Upsertion(AlterUserScramCredentialsRequest.ScramCredentialUpsertion):
    """An upsertion whose repr hides the salt and SaltedPassword: kafka-python logs every request it
    sends at DEBUG, and a SaltedPassword is as good as the password to log in with."""

    def __repr__(self) -> str:
        return (
            f"ScramCredentialUpsertion(name={self.name!r}, mechanism={self.mechanism}, "
            f"iterations={self.iterations}, salt=<hidden>, salted_password=<hidden>)"
        )

    __str__ = __repr__


class ScramMixin(GatewayBase):
    """SCRAM credentials of users: read, set (create or rotate), delete."""

    def _scram_send(self, request: Any) -> Any:
        return self._kp.send_to_controller(request) if self.conn.controller_mode else self._kp.send(request)

    def _scram_readable(self) -> None:
        """Kafka 4.1's controllers advertise DescribeUserScramCredentials but have no handler for it:
        they answer UNKNOWN_SERVER_ERROR (and nothing at all for every user); Kafka's AdminClient
        refuses it before sending, with these words."""
        if self.conn.controller_mode:
            raise KafkaOperationError(
                UNSUPPORTED_ENDPOINT_TYPE,
                "UNSUPPORTED_ENDPOINT_TYPE",
                "This Admin API is not yet supported when communicating directly with the controller quorum: "
                "SCRAM credentials can be changed through the controllers but only read through the brokers.",
            )

    def describe_scram_users(self) -> tuple[ScramUser, ...]:
        """Every user with a SCRAM credential, by name, with mechanisms and iterations."""
        return self.describe_scram_users_page(0, None).users

    def describe_scram_users_page(self, offset: int, limit: int | None) -> ScramUserPage:
        """Users ``offset`` to ``offset + limit`` (every one from ``offset`` for None) of every user
        with a SCRAM credential, by name, and how many there are (one DescribeUserScramCredentials for
        every user). Only the page's users are made into ``ScramUser``: a list of 100,000 users sorts
        Kafka's results by name and builds 200."""
        self._scram_readable()
        with collector.paused():  # 100,000 results' objects hold no cycle: nothing for it to find
            response = self._kp.send(DescribeUserScramCredentialsRequest(users=None))
            check(response)
            failed = [r for r in response.results if r.error_code]
            if failed:
                raise from_code(failed[0].error_code, failed[0].error_message)
            results = sorted(response.results, key=_BY_USER)
            end = None if limit is None else offset + limit
            return ScramUserPage(len(results), tuple(_user(r) for r in results[offset:end]))

    def describe_scram_user(self, name: str) -> ScramUser | None:
        """One user's credentials; None when the user has none (Kafka's RESOURCE_NOT_FOUND)."""
        self._scram_readable()
        request = DescribeUserScramCredentialsRequest(
            users=[DescribeUserScramCredentialsRequest.UserName(name=name)]
        )
        response = self._kp.send(request)
        check(response)
        for r in response.results:
            if r.user != name:
                continue
            if r.error_code == 91:  # RESOURCE_NOT_FOUND
                return None
            err = from_code(r.error_code, r.error_message)
            if err is not None:
                raise err
            return _user(r)
        return None

    def upsert_scram_credential(self, user: str, mechanism: str, password: str, iterations: int) -> None:
        """Create or replace ``user``'s credential for ``mechanism``; raises KafkaOperationError."""
        code = _mechanism_type(mechanism)
        salt = secrets.token_bytes(SALT_BYTES)
        upsertion = _Upsertion(
            name=user,
            mechanism=code,
            iterations=int(iterations),
            salt=salt,
            salted_password=salted_password(mechanism, password, salt, int(iterations)),
        )
        self._scram_alter(user, AlterUserScramCredentialsRequest(deletions=[], upsertions=[upsertion]))

    def delete_scram_credential(self, user: str, mechanism: str) -> None:
        """Remove ``user``'s credential for ``mechanism``; RESOURCE_NOT_FOUND when there is none."""
        D = AlterUserScramCredentialsRequest.ScramCredentialDeletion
        deletion = D(name=user, mechanism=_mechanism_type(mechanism))
        self._scram_alter(user, AlterUserScramCredentialsRequest(deletions=[deletion], upsertions=[]))

    def _scram_alter(self, user: str, request: Any) -> None:
        response = self._scram_send(request)
        for r in response.results:
            if r.user == user:
                err = from_code(r.error_code, r.error_message)
                if err is not None:
                    raise err
                return
        raise KafkaOperationError(-1, "UNKNOWN_SERVER_ERROR", f"Kafka answered no result for user {user!r}")
