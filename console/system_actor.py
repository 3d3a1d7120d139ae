"""The system actor's account and the user names no login may take.

The system actor (console/access.py) is the user its ``SystemActor`` row marks, created by migration
0019 (and again by ``access.system_actor`` if the row has gone, e.g. a test database flushed). The
name ``console-system`` is only its label: every login method refuses the reserved names
(``is_reserved``), so no local, LDAP or OpenID Connect account can be, or look like, the system actor.

``ensure_system_actor`` takes the model classes as arguments so the migration can run it with its
historical models.
"""

from __future__ import annotations

import re
import unicodedata

from django.contrib.auth.hashers import is_password_usable, make_password

SYSTEM_USERNAME = "console-system"
# Compared without case, accents, blanks or punctuation: "Console_System", "console.system", ...
_RESERVED = frozenset({"consolesystem", "system"})


def _folded(username: str) -> str:
    text = unicodedata.normalize("NFKD", str(username)).casefold()
    return re.sub(r"[\W_]+", "", "".join(c for c in text if not unicodedata.combining(c)))


def is_reserved(username: str | None) -> bool:
    """Whether a login may not use this user name: it is, or reads like, the system actor's."""
    return bool(username) and _folded(username) in _RESERVED


def reserved_reason(username: str) -> str:
    return f"the user name '{username[:150]}' is reserved for the console's system actor"


def ensure_system_actor(*, User, SystemActor, IdentityLink):
    """The marked system user, created (with no usable password, never staff) when there is none.

    An account already holding the name that is not a plain passwordless account (one with a password,
    an identity-provider link, or staff rights: a login took the name before the mark existed) is not
    adopted: it is renamed ``console-system.taken-<id>`` and disabled, and a fresh system user made.
    """
    marker = SystemActor.objects.select_related("user").first()
    if marker is not None:
        return marker.user
    holder = User.objects.filter(username=SYSTEM_USERNAME).first()
    if holder is not None and (
        is_password_usable(holder.password)
        or holder.is_staff
        or holder.is_superuser
        or IdentityLink.objects.filter(user_id=holder.pk).exists()
    ):
        holder.username = f"{SYSTEM_USERNAME}.taken-{holder.pk}"
        holder.is_active = False
        holder.save(update_fields=["username", "is_active"])
        holder = None
    if holder is None:
        holder = User.objects.create(
            username=SYSTEM_USERNAME,
            first_name="Console",
            last_name="(system)",
            password=make_password(None),
            is_active=True,
        )
    SystemActor.objects.create(user=holder)
    return holder
