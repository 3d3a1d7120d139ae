"""Create the first superuser if there is none: password from CONSOLE_ADMIN_PASSWORD or generated once.

A generated password is printed once, or with ``--password-file`` written to that file (mode 0600)
instead: `make run` prints it as the last line of its banner (console/runner.py).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the first admin (superuser) unless one exists. Safe to run repeatedly."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default=os.environ.get("CONSOLE_ADMIN_USER", "admin"))
        parser.add_argument("--password-file", help="write a generated password here (mode 0600)")

    def handle(self, *args, username: str, password_file: str | None = None, **options) -> None:
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write("An admin already exists; nothing to do.")
            return
        password = os.environ.get("CONSOLE_ADMIN_PASSWORD", "")
        generated = not password
        if generated:
            password = secrets.token_urlsafe(12)
        users.objects.create_superuser(username=username, email="", password=password)
        if generated and password_file:
            _write_private(Path(password_file), password + "\n")
            self.stdout.write(
                f"Created admin '{username}'; its password is saved in {password_file} (mode 0600)."
            )
        elif generated:
            # Printed once: it is not stored anywhere in clear text.
            self.stdout.write(self.style.WARNING(f"Created admin '{username}' with password: {password}"))
            self.stdout.write(
                "Save it now; it will not be shown again (set CONSOLE_ADMIN_PASSWORD to choose one)."
            )
        else:
            self.stdout.write(f"Created admin '{username}' with the password from CONSOLE_ADMIN_PASSWORD.")


def _write_private(path: Path, text: str) -> None:
    """Write text to path readable by its owner only (0600 from creation on, also when it existed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
