"""Re-encrypt every stored secret under the first CONSOLE_ENCRYPTION_KEY (key rotation)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from console import access, crypto
from console.audit import store as audit
from console.models import Cluster


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored SASL password with the first key in CONSOLE_ENCRYPTION_KEY. Rotate a key by "
        "putting the new key first (keeping the old one after it), running this, then removing the old key."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="only report what would be re-encrypted")

    def handle(self, *args, dry_run: bool = False, **options) -> None:
        rotated, current, unreadable = [], 0, []
        with transaction.atomic():
            for cluster in Cluster.objects.select_for_update().exclude(sasl_password_encrypted=""):
                token = cluster.sasl_password_encrypted
                if crypto.current(token):
                    current += 1
                    continue
                try:
                    new = crypto.rotate(token)
                except crypto.SecretUnreadable:
                    unreadable.append(cluster.name)
                    continue
                if not dry_run:
                    Cluster.objects.filter(pk=cluster.pk).update(sasl_password_encrypted=new)
                rotated.append(cluster.name)
            if rotated and not dry_run:
                audit.record(
                    actor=access.system_actor(),
                    action="secrets.rotate",
                    targets=[f"cluster:{name}" for name in rotated],
                    params={"re_encrypted": len(rotated), "unreadable": unreadable},
                    outcome="success",
                )
        verb = "would re-encrypt" if dry_run else "re-encrypted"
        self.stdout.write(
            f"{verb} {len(rotated)} secret(s){': ' + ', '.join(rotated) if rotated else ''}; "
            f"{current} already under the current key."
        )
        if unreadable:
            raise CommandError(
                f"{len(unreadable)} cluster(s) have a password no configured key decrypts: "
                + ", ".join(unreadable)
                + ". Add the key they were saved with to CONSOLE_ENCRYPTION_KEY (after the current one) "
                "and run this again, or enter their passwords again in the cluster settings."
            )
