"""Encryption of secrets at rest (DESIGN D7): cryptography's MultiFernet over CONSOLE_ENCRYPTION_KEY.

The key list is independent of SECRET_KEY: the first key encrypts, every key decrypts, so a key is
rotated by putting a new one first, running `manage.py rotate_secrets` (re-encrypts every stored
secret under the first key) and then dropping the old one. Secrets saved by earlier versions, which
derived their key from SECRET_KEY, still decrypt while SECRET_KEY is unchanged; `rotate_secrets`
moves them to the configured key.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretUnreadable(Exception):
    """The stored secret cannot be decrypted with any configured key."""


UNREADABLE_TEXT = (
    "The stored SASL password cannot be decrypted with any key in CONSOLE_ENCRYPTION_KEY "
    "(the key was changed or removed since it was saved). Put the old key back in the list "
    "(after the new one) and run `manage.py rotate_secrets`, or enter the password again in the "
    "cluster's settings."
)


def _legacy_key(secret_key: str) -> bytes:
    """The key earlier versions derived from SECRET_KEY (decryption only)."""
    return base64.urlsafe_b64encode(hashlib.sha256(secret_key.encode()).digest())


@lru_cache(maxsize=4)
def _multi(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    try:
        fernets = [Fernet(k.encode()) for k in keys]
    except (ValueError, TypeError) as exc:
        raise ImproperlyConfigured(
            "CONSOLE_ENCRYPTION_KEY must be a comma-separated list of Fernet keys "
            "(urlsafe base64 of 32 bytes; `python -c 'from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())'` makes one)."
        ) from exc
    if not fernets:
        raise ImproperlyConfigured("CONSOLE_ENCRYPTION_KEY names no key.")
    return MultiFernet([*fernets, Fernet(_legacy_key(secret_key))])


def _cipher() -> MultiFernet:
    return _multi(tuple(settings.CONSOLE_ENCRYPTION_KEYS), settings.SECRET_KEY)


def encrypt(plaintext: str) -> str:
    return _cipher().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _cipher().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(UNREADABLE_TEXT) from exc


def current(token: str) -> bool:
    """True when token was encrypted with the first (current) key."""
    try:
        Fernet(settings.CONSOLE_ENCRYPTION_KEYS[0].encode()).decrypt(token.encode())
    except InvalidToken:
        return False
    return True


def rotate(token: str) -> str:
    """token re-encrypted under the first key (SecretUnreadable when no key opens it)."""
    try:
        return _cipher().rotate(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(UNREADABLE_TEXT) from exc
