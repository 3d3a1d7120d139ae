"""Re-encrypt every stored secret under the first CONSOLE_ENCRYPTION_KEY (key rotation)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from console import access, key_rotation


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored secret (every column declared with console/crypto.py's encrypted field "
        "classes: SASL passwords, notification channels' URLs and signing secrets, kept API answers, held "
        "changes' secret values) with the first key in CONSOLE_ENCRYPTION_KEY. Rotate a key by putting "
        "the new key first (keeping the old one after it), running this, then removing the old key. "
        "Refused, with nothing changed, when any stored value opens with no configured key."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="only report what would be re-encrypted")

    def handle(self, *args, dry_run: bool = False, **options) -> None:
        try:
            done = key_rotation.rotate_secrets(actor=access.system_actor(), dry_run=dry_run)
        except key_rotation.SecretsUnreadable as exc:
            raise CommandError(str(exc)) from exc
        verb = "to re-encrypt" if dry_run else "re-encrypted"
        for label in sorted(done.re_encrypted):
            self.stdout.write(
                f"{label}: {done.re_encrypted[label]} {verb}, {done.already_current[label]} already current"
            )
        for target, (old, new) in sorted(done.repinned.items()):
            self.stdout.write(f"{target}: reviewed payload digest {old[:12]}… is now {new[:12]}…")
        if dry_run:
            self.stdout.write(f"Dry run: {done.total} secret(s) would be re-encrypted; nothing was changed.")
        else:
            self.stdout.write(
                f"Re-encrypted {done.total} secret(s): every stored secret is under the first key; "
                "the other keys can be removed from CONSOLE_ENCRYPTION_KEY."
            )
