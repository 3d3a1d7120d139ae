"""``manage.py kafka topics|cluster|configs|groups|acls|reassign|elections|requests|audit|fleet …``.

Kafka's own tools (kafka-topics, kafka-configs, kafka-consumer-groups, kafka-acls,
kafka-reassign-partitions, kafka-leader-election) over the console's area actions: the same
permission checks, policy, change control and audit trail as the web pages and the API (the actor is
``--as USER``). Every sub-command takes ``--output table|json`` (and ``csv`` where Kafka's tool reads or
writes a file of that shape). The sub-commands live in console/management/cli/, one module per area,
listed in ``CLI_MODULES``; the exit codes are listed in console/management/cli/base.py.
"""

from __future__ import annotations

from importlib import import_module

from django.core.management.base import BaseCommand

from console.management.cli.base import (
    AUDIT_UNAVAILABLE,
    DENIED,
    FAILED,
    IN_PROGRESS,
    KAFKA,
    NOT_FOUND,
    OK,
    REFUSED,
    USAGE,
    CommandBase,
)
from console.management.cli.parsing import SubcommandParser

__all__ = [
    "AUDIT_UNAVAILABLE",
    "CLI_MODULES",
    "DENIED",
    "FAILED",
    "IN_PROGRESS",
    "KAFKA",
    "NOT_FOUND",
    "OK",
    "REFUSED",
    "USAGE",
    "Command",
    "command_class",
]

# One line per area: its CLI module (``add_parsers(area)`` and a ``Commands`` mixin of handlers).
CLI_MODULES = (
    "console.management.cli.topics",
    "console.management.cli.clusters",
    "console.management.cli.groups",
    "console.management.cli.configs",
    "console.management.cli.acls",
    "console.management.cli.reassign",
    "console.management.cli.elections",
    "console.management.cli.requests",
    "console.management.cli.audit",
    "console.management.cli.fleet",
    "console.management.cli.windows",
    "console.management.cli.estate",
    "console.management.cli.alerts",
    "console.management.cli.messages",
    "console.management.cli.quotas",
    "console.management.cli.scram",
    "console.management.cli.quorum",
    "console.management.cli.purge",
    "console.management.cli.logdirs",
    "console.management.cli.transactions",
    "console.management.cli.share_groups",
)


def command_class(modules: tuple[str, ...] = CLI_MODULES) -> type[BaseCommand]:
    """The ``kafka`` command over these CLI modules: their parsers, their handlers mixed in."""
    loaded = [import_module(name) for name in modules]

    class Command(CommandBase, *(m.Commands for m in loaded), BaseCommand):
        help = (
            "Kafka's admin tools (cluster registry, topics, configs, consumer groups, ACLs, reassignments, "
            "elections) plus requests and the audit trail, through the console: same permissions, policy "
            "and audit."
        )

        def add_arguments(self, parser) -> None:
            # every sub-command answers its own usage errors (its usage, exit 2)
            area = parser.add_subparsers(dest="area", required=True, parser_class=SubcommandParser)
            for module in loaded:
                module.add_parsers(area)

    return Command


Command = command_class()
