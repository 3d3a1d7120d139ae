"""Encryption of secrets at rest (DESIGN D7) with Fernet from the cryptography package."""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


class SecretUnreadable(Exception):
    """The stored secret cannot be decrypted with the configured key."""


@lru_cache(maxsize=4)
def _fernet(key: str, fallback: str) -> Fernet:
    if key:
        return Fernet(key.encode())
    # Without CONSOLE_ENCRYPTION_KEY, derive a key from SECRET_KEY so a local run still encrypts.
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(fallback.encode()).digest()))


def _cipher() -> Fernet:
    return _fernet(settings.CONSOLE_ENCRYPTION_KEY, settings.SECRET_KEY)


def encrypt(plaintext: str) -> str:
    return _cipher().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _cipher().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(
            "A stored secret cannot be decrypted: CONSOLE_ENCRYPTION_KEY changed since it was saved."
        ) from exc
