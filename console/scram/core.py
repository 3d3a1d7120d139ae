"""SCRAM credentials checked before anything reaches Kafka (pure: no I/O).

Kafka's controller accepts SCRAM-SHA-256 and SCRAM-SHA-512 with 4096..16384 iterations and any
non-empty user name (``ScramControlManager``); the console also refuses what would make a user that
no client can log in as or no operator can read (control characters, spaces at either end, a name
longer than 256 characters) and a password shorter than 8 or longer than 1024 characters, or one
that is not text a client can send (a NUL, a lone surrogate). No message here contains the
password: refusals are recorded in the audit log and shown on every door.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from console.changes.kinds import ChangeInvalid

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384  # Kafka's bounds (ScramMechanism.minIterations, MAX_ITERATIONS)
DEFAULT_ITERATIONS = 8192
NAME_MAX = 256
PASSWORD_MIN, PASSWORD_MAX = 8, 1024
PASSWORD_SHOWN = "set"  # what a review, an audit event or a page says of the password


@dataclass(frozen=True)
class ScramSet:
    """A credential to create or rotate; the password is never in its repr."""

    user: str
    mechanism: str
    iterations: int
    password: str = field(repr=False)

    @property
    def target(self) -> str:
        return target(self.user)


def target(user: str) -> str:
    """The audit target of a user's credentials."""
    return f"scram-user:{user}"


def _control(text: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in text)


def user_errors(user: object) -> list[str]:
    if not isinstance(user, str) or not user:
        return ["name the user (Kafka refuses an empty user name)"]
    errors = []
    if len(user) > NAME_MAX:
        errors.append(f"the user name is longer than {NAME_MAX} characters")
    if user != user.strip():
        errors.append("the user name starts or ends with a space")
    if _control(user):
        errors.append("the user name contains a control character")
    return errors


def mechanism_errors(mechanism: object) -> list[str]:
    if mechanism not in MECHANISMS:
        return [f"the mechanism must be {' or '.join(MECHANISMS)}"]
    return []


def iterations_of(iterations: object, errors: list[str]) -> int:
    try:
        value = int(str(iterations).strip()) if not isinstance(iterations, bool) else None
    except ValueError:
        value = None
    if value is None or not MIN_ITERATIONS <= value <= MAX_ITERATIONS:
        errors.append(f"the iterations must be a whole number from {MIN_ITERATIONS} to {MAX_ITERATIONS}")
        return 0
    return value


def password_errors(password: object) -> list[str]:
    """What is wrong with a password, in words that never quote it."""
    if not isinstance(password, str) or not password:
        return ["give a password (it cannot be empty)"]
    errors = []
    if len(password) < PASSWORD_MIN:
        errors.append(f"the password must be at least {PASSWORD_MIN} characters long")
    if len(password) > PASSWORD_MAX:
        errors.append(f"the password must be at most {PASSWORD_MAX} characters long")
    if "\x00" in password or any(0xD800 <= ord(ch) <= 0xDFFF for ch in password):
        errors.append(
            "the password contains a character a Kafka client cannot send (NUL or a lone surrogate)"
        )
    return errors


def check_set(user: object, mechanism: object, iterations: object, password: object) -> ScramSet:
    """A checked credential to set, or ChangeInvalid listing every problem."""
    errors = user_errors(user) + mechanism_errors(mechanism)
    count = iterations_of(iterations, errors)
    errors += password_errors(password)
    if errors:
        raise ChangeInvalid(errors)
    return ScramSet(str(user), str(mechanism), count, str(password))


def check_delete(user: object, mechanism: object) -> tuple[str, str]:
    """A checked (user, mechanism) to delete, or ChangeInvalid."""
    errors = user_errors(user) + mechanism_errors(mechanism)
    if errors:
        raise ChangeInvalid(errors)
    return str(user), str(mechanism)
