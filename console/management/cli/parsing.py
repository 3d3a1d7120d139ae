"""How ``manage.py kafka`` reads its command line: kafka-*.sh's option names and formats, and usage
errors answered by the sub-command that was typed.

Every sub-command's parser is a ``SubcommandParser``: an option it does not know, a bad value or a
failed check (``checks``) prints that sub-command's usage and exits 2 (on the command line; through
``call_command`` it raises ``CommandError`` with the usage and exit 2), not the top-level usage.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from django.core.management.base import CommandError, CommandParser

from console import refusals
from console.topics.policy import count_problem

Check = Callable[[argparse.Namespace], str]


class SubcommandParser(CommandParser):
    """A sub-command's parser: its own unknown options and failed ``checks`` are its usage errors."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.checks: list[Check] = []  # run on the parsed options; a non-empty answer is a usage error

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        for check in self.checks:
            problem = check(namespace)
            if problem:
                self.error(problem)
        return namespace, extras

    def error(self, message: str):
        if self.called_from_command_line:
            argparse.ArgumentParser.error(self, message)  # this parser's usage on stderr, exit 2
        raise CommandError(f"{self.format_usage()}{self.prog}: error: {message}", returncode=refusals.USAGE)


class _NotHere(argparse.Action):
    """An option of Kafka's tools that the console answers otherwise: a usage error saying how."""

    def __init__(self, *args, why: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.why = why

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser.error(f"{option_string}: {self.why}")


def kafka_tool_options(p) -> None:
    """The connection options of Kafka's tools, refused with what to type instead."""
    p.add_argument(
        "--bootstrap-server",
        "--bootstrap-controller",
        action=_NotHere,
        why="the console speaks to the clusters registered in it, with their own connection settings; "
        "name one with --cluster NAME (manage.py kafka fleet lists them)",
        help=argparse.SUPPRESS,
    )
    p.add_argument(
        "--command-config",
        action=_NotHere,
        why="the registered cluster's connection settings (security protocol, TLS, SASL) are used; "
        "an admin changes them on the cluster's settings page",
        help=argparse.SUPPRESS,
    )


def count(text: str) -> int:
    """``--partitions`` / ``--replication-factor``: the topics area's rule, as the page's form has it."""
    problem = count_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return int(text)


def topic_argument(p, *, required: bool = True, help_text: str = "the topic") -> None:
    """The topic, positional or as kafka-topics spells it (``--topic``); both and different: usage error."""
    p.add_argument("topic", nargs="?", help=help_text)
    p.add_argument(
        "--topic", dest="topic_option", metavar="TOPIC", help="the same, as kafka-topics spells it"
    )

    def one_topic(ns: argparse.Namespace) -> str:
        given, option = ns.topic, ns.topic_option
        if given and option and given != option:
            return f"The topic is given twice: {given!r} and --topic {option!r}; give it once."
        ns.topic = given or option
        if required and not ns.topic:
            return "Name the topic (TOPIC or --topic TOPIC)."
        return ""

    p.checks.append(one_topic)
