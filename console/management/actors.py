"""Who a management command acts as: the user named by ``--as``, or the system actor.

A command never borrows a person's identity by default (the first superuser, say): without
``--as`` it acts as the console's system user, which the audit trail shows as such, or, for work
only people may do (registering a cluster), it refuses.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from console import access


def command_actor(username: str | None, *, system_allowed: bool = True, returncode: int = 1):
    """The acting user for a command (CommandError when it does not exist or --as is required)."""
    if not username:
        if not system_allowed:
            raise CommandError(
                "Say who is acting: --as USER (a console user allowed to do this).", returncode=returncode
            )
        return access.system_actor()
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise CommandError(f"No active console user '{username}'.", returncode=returncode)
    return user
