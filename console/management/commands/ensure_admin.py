"""Create the first superuser if there is none: password from CONSOLE_ADMIN_PASSWORD or generated once."""

from __future__ import annotations

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the first admin (superuser) unless one exists. Safe to run repeatedly."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default=os.environ.get("CONSOLE_ADMIN_USER", "admin"))

    def handle(self, *args, username: str, **options) -> None:
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write("An admin already exists; nothing to do.")
            return
        password = os.environ.get("CONSOLE_ADMIN_PASSWORD", "")
        generated = not password
        if generated:
            password = secrets.token_urlsafe(12)
        users.objects.create_superuser(username=username, email="", password=password)
        if generated:
            # Printed once: it is not stored anywhere in clear text.
            self.stdout.write(self.style.WARNING(f"Created admin '{username}' with password: {password}"))
            self.stdout.write(
                "Save it now; it will not be shown again (set CONSOLE_ADMIN_PASSWORD to choose one)."
            )
        else:
            self.stdout.write(f"Created admin '{username}' with the password from CONSOLE_ADMIN_PASSWORD.")
