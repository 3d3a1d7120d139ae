"""Register a cluster from the command line (used by `make run` for the sandbox)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from console.clusters import actions as clusters
from console.forms.clusters import validate_connection_fields
from console.management.actors import command_actor
from console.models import Cluster
from console.models.clusters import canonical_endpoints


class Command(BaseCommand):
    help = "Register a Kafka cluster by bootstrap servers or (KIP-919) bootstrap controllers."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--bootstrap-servers", default="")
        parser.add_argument("--bootstrap-controllers", default="")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--if-missing",
            action="store_true",
            help="do nothing when the name is taken (or update its address)",
        )
        parser.add_argument(
            "--as", dest="actor", default="", help="acting console user (required; a superuser)"
        )

    def handle(self, *args, **opts) -> None:
        values = {
            "name": opts["name"],
            "description": opts["description"],
            "bootstrap_servers": opts["bootstrap_servers"],
            "bootstrap_controllers": opts["bootstrap_controllers"],
        }
        try:
            validate_connection_fields(values["bootstrap_servers"], values["bootstrap_controllers"])
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        values["bootstrap_servers"] = canonical_endpoints(values["bootstrap_servers"])
        values["bootstrap_controllers"] = canonical_endpoints(values["bootstrap_controllers"])
        actor = command_actor(opts["actor"], system_allowed=False)
        existing = Cluster.objects.filter(name=opts["name"]).first()
        try:
            if existing is None:
                clusters.register_cluster(actor=actor, values=values)
                self.stdout.write(f"Registered cluster '{opts['name']}'.")
            elif not opts["if_missing"]:
                raise CommandError(f"A cluster named '{opts['name']}' is already registered.")
            elif (existing.bootstrap_servers, existing.bootstrap_controllers) != (
                values["bootstrap_servers"],
                values["bootstrap_controllers"],
            ):
                values.pop("description")
                clusters.update_cluster(actor=actor, cluster=existing, values=values)
                self.stdout.write(f"Updated the address of cluster '{opts['name']}'.")
            else:
                self.stdout.write(f"Cluster '{opts['name']}' is already registered.")
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
