"""``manage.py kafka topics|cluster|configs|groups|acls|reassign|elections|requests|audit …``.

Kafka's own tools (kafka-topics, kafka-configs, kafka-consumer-groups, kafka-acls,
kafka-reassign-partitions, kafka-leader-election) over the console's area actions: the same
permission checks, policy, change control and audit trail as the web pages and the API (the actor is
``--as USER``). Every sub-command takes ``--output table|json`` (and ``csv`` where Kafka's tool reads or
writes a file of that shape). The sub-commands live in console/management/cli/, one module per area;
the exit codes are listed in console/management/cli/base.py.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from console.groups import command as groups_command
from console.management.cli import acls, audit, clusters, configs, elections, reassign, requests, topics
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
    common,
)

__all__ = [
    "AUDIT_UNAVAILABLE",
    "DENIED",
    "FAILED",
    "IN_PROGRESS",
    "KAFKA",
    "NOT_FOUND",
    "OK",
    "REFUSED",
    "USAGE",
    "Command",
]


class Command(
    CommandBase,
    topics.TopicsCommands,
    clusters.ClusterCommands,
    configs.ConfigsCommands,
    groups_command.GroupsCommands,
    acls.AclsCommands,
    reassign.ReassignCommands,
    elections.ElectionsCommands,
    requests.RequestsCommands,
    audit.AuditCommands,
    BaseCommand,
):
    help = (
        "Kafka's admin tools (cluster registry, topics, configs, consumer groups, ACLs, reassignments, elections) plus "
        "requests and the audit trail, through the console: same permissions, policy and audit."
    )

    def add_arguments(self, parser) -> None:
        area = parser.add_subparsers(dest="area", required=True)
        topics.add_parsers(area)
        clusters.add_parsers(area)
        groups_command.add_parsers(area, common)
        configs.add_parsers(area)
        acls.add_parsers(area)
        reassign.add_parsers(area)
        elections.add_parsers(area)
        requests.add_parsers(area)
        audit.add_parsers(area)
