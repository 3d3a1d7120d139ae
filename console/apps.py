"""App configuration."""

from __future__ import annotations

from importlib import import_module

from django.apps import AppConfig

# The modules that declare Operation kinds (each registers its kinds with the runner when imported).
KIND_MODULES = (
    "console.clusters.worker",
    "console.reassignment.worker",
    "console.reassignment.elections",
    "console.requests.worker",
    "console.telemetry.worker",
    "console.integrity.worker",
    "console.logdirs.worker",
)

# The modules that declare held kinds and the policy kinds that hold them (each registers with change
# control when imported): an approval reviews again and the requests worker runs them, so every
# process loads them, in the order the change-control policy page lists their policy kinds.
HELD_MODULES = (
    "console.topics.held",
    "console.configs.held",
    "console.acls.held",
    "console.reassignment.held",
    "console.groups.held",
    "console.estate.held",
    "console.quotas.held",
    "console.scram.held",
    "console.quorum.held",
    "console.purge.held",
    "console.transactions.held",
    "console.share_groups.held",
    "console.logdirs.held",
)

# The modules that tell the audit reconciler how to re-read Kafka for a change whose outcome is owed.
OUTCOME_READER_MODULES = (
    "console.topics.actions",
    "console.configs.actions",
    "console.acls.actions",
    "console.quotas.actions",
    "console.scram.actions",
    "console.quorum.controllers",
    "console.reassignment.external",
    "console.reassignment.janitor",
    "console.groups.actions",
    "console.groups.delete",
    "console.purge.actions",
    "console.transactions.actions",
    "console.quorum.features",
    "console.quorum.voters",
    "console.quorum.unregister",
    "console.share_groups.actions",
)


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Kafka Operator Console"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import_module("console.audit.accounts").connect()
        import_module("console.health").observe_gateway()  # Kafka calls counted for /metrics
        for module in KIND_MODULES + HELD_MODULES + OUTCOME_READER_MODULES:
            import_module(module)
