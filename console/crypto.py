"""Encryption of secrets at rest (DESIGN D7): cryptography's MultiFernet over CONSOLE_ENCRYPTION_KEY.

The key list is independent of SECRET_KEY: the first key encrypts, every key decrypts, so a key is
rotated by putting a new one first, running `manage.py rotate_secrets` (re-encrypts every stored
secret under the first key) and then dropping the old one. Secrets saved by earlier versions, which
derived their key from SECRET_KEY, still decrypt while SECRET_KEY is unchanged; `rotate_secrets`
moves them to the configured key.

A column that keeps tokens is declared with this module's field classes (`EncryptedTextField`, or
`EncryptedJSONField` naming the JSON keys that hold one); the rotation (console/key_rotation.py) finds
every such column through the app registry, so a new encrypted column cannot be left out of it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.apps import apps as django_apps
from django.apps.registry import Apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models


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


# -- the columns that keep tokens ------------------------------------------------------------------


class EncryptedTextField(models.TextField):
    """A column holding one token made by `encrypt` ("" when unset). Declaring a column with this
    class is what puts it in key rotation; the value is read and written with `encrypt`/`decrypt`."""


class EncryptedJSONField(models.JSONField):
    """A JSON column in which the strings under `encrypted_keys` (in any object, at any depth) are
    tokens made by `encrypt`; the rest of the document is plain. `on_rotate` names (dotted path) a
    function called as f(row, before, after) inside the rotation's transaction when a row's document
    was re-encrypted, for what is derived from the document (a digest pinned by a review); it returns
    what it changed, for the audit event. Neither is schema, so neither is kept in migrations."""

    def __init__(
        self, *args: Any, encrypted_keys: Iterable[str] = (), on_rotate: str = "", **kwargs: Any
    ) -> None:
        self.encrypted_keys = tuple(encrypted_keys)
        self.on_rotate = on_rotate
        super().__init__(*args, **kwargs)


@dataclass(frozen=True)
class EncryptedColumn:
    """One model column that keeps tokens: the whole value, or the JSON keys `keys` inside it."""

    model: type[models.Model]
    field: models.Field
    keys: tuple[str, ...] = ()
    on_rotate: str = ""

    @property
    def label(self) -> str:
        return f"{self.model._meta.label}.{self.field.name}"

    def tokens(self, value: Any) -> Iterator[str]:
        """Every non-empty token in a stored value of this column."""
        if not self.keys:
            if value:
                yield value
            return
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for k, v in node.items():
                    if k in self.keys and isinstance(v, str) and v:
                        yield v
                    else:
                        stack.append(v)
            elif isinstance(node, list):
                stack.extend(node)

    def replaced(self, value: Any, new: dict[str, str]) -> Any:
        """The stored value with each token in `new` replaced by its new token."""
        if not self.keys:
            return new.get(value, value)
        if isinstance(value, dict):
            return {
                k: new.get(v, v) if k in self.keys and isinstance(v, str) else self.replaced(v, new)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.replaced(v, new) for v in value]
        return value


def encrypted_columns(registry: Apps | None = None) -> list[EncryptedColumn]:
    """Every concrete column of every installed model declared with the field classes above."""
    found = []
    for model in (registry or django_apps).get_models():
        if model._meta.proxy or not model._meta.managed:
            continue
        for field in model._meta.concrete_fields:
            if isinstance(field, EncryptedTextField):
                found.append(EncryptedColumn(model, field))
            elif isinstance(field, EncryptedJSONField):
                found.append(EncryptedColumn(model, field, field.encrypted_keys, field.on_rotate))
    return found
