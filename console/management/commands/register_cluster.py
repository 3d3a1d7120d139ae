"""Register a cluster from the command line (used by `make run` for the sandbox).

Every registry field is an option (``--help`` names the Kafka client property of each); secrets come from
files or environment variables, never as values on the command line (console/management/cli/clusters.py).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from console.clusters import actions as clusters
from console.management.actors import command_actor
from console.management.cli.clusters import add_connection_options, connection_form, form_errors
from console.models import Cluster
from console.models.clusters import canonical_endpoints


class Command(BaseCommand):
    help = "Register a Kafka cluster by bootstrap servers or (KIP-919) bootstrap controllers."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True)
        add_connection_options(parser)
        parser.add_argument(
            "--if-missing",
            action="store_true",
            help="do nothing when the name is taken (or update its address)",
        )
        parser.add_argument(
            "--as", dest="actor", default="", help="acting console user (required; a superuser)"
        )

    def handle(self, *args, **opts) -> None:
        existing = Cluster.objects.filter(name=opts["name"]).first()
        if existing is not None and not opts["if_missing"]:
            raise CommandError(f"A cluster named '{opts['name']}' is already registered.")
        if existing is not None and all(
            canonical_endpoints(opts.get(f) or "") == getattr(existing, f)
            for f in ("bootstrap_servers", "bootstrap_controllers")
        ):
            self.stdout.write(f"Cluster '{opts['name']}' is already registered.")
            return
        if existing is not None:  # --if-missing: only the address follows
            opts = {
                "actor": opts["actor"],
                "bootstrap_servers": opts.get("bootstrap_servers") or "",
                "bootstrap_controllers": opts.get("bootstrap_controllers") or "",
            }
        form = connection_form(opts, existing, name=opts.get("name", ""))
        if not form.is_valid():
            raise CommandError(form_errors(form))
        actor = command_actor(opts["actor"], system_allowed=False)  # after the input's checks, as before
        try:
            if existing is None:
                clusters.register_cluster(actor=actor, values=form.values(), secrets=form.secrets)
                self.stdout.write(f"Registered cluster '{form.values()['name']}'.")
            else:
                existing.refresh_from_db()
                clusters.update_cluster(
                    actor=actor, cluster=existing, values=form.values(), secrets=form.secrets
                )
                self.stdout.write(f"Updated the address of cluster '{existing.name}'.")
        except (ValidationError, clusters.PasswordRequired, PermissionDenied) as exc:
            messages = exc.messages if isinstance(exc, ValidationError) else [str(exc)]
            raise CommandError("; ".join(messages)) from exc
