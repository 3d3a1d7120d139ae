"""``manage.py kafka elections``: kafka-leader-election over the console's election action.

``--election-type preferred`` for ``--topic``/``--partition``, a ``--path-to-json-file``
(``{"partitions":[{"topic":"t","partition":0}]}``) or ``--all-topic-partitions`` (every partition
not led by its preferred replica, as the page's "all imbalanced"); ``unclean`` needs an explicit
list and the typed confirmation the page asks for (``--confirm "unclean <cluster>"``). The election
runs as an operation on a worker, as from the page.
"""

from __future__ import annotations

import json
import sys

from django.core.management.base import CommandError

from console.management.cli.base import OK, USAGE, common, holdable, read_text
from console.reassignment import elections
from console.reassignment import held as reassignment_held
from console.topics import reads as topic_reads


def add_parsers(area) -> None:
    p = area.add_parser("elections", help="preferred or unclean leader election (kafka-leader-election)")
    common(p)
    p.set_defaults(action="run")
    p.add_argument("--election-type", type=str.lower, choices=("preferred", "unclean"), required=True)
    scope = p.add_mutually_exclusive_group(required=True)
    scope.add_argument("--topic")
    scope.add_argument("--all-topic-partitions", action="store_true")
    scope.add_argument("--path-to-json-file", metavar="FILE", help="'-' = stdin")
    p.add_argument("--partition", type=int, help="with --topic (default: all its partitions)")
    p.add_argument("--confirm", default="", help="unclean: type 'unclean <cluster>'")
    holdable(p)


def _from_file(text: str) -> list[tuple[str, int]]:
    try:
        doc = json.loads(text)
        return [(str(e["topic"]), int(e["partition"])) for e in doc["partitions"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise CommandError(
            'The file must look like {"partitions":[{"topic":"t","partition":0}]} '
            f"({type(exc).__name__}: {exc}).",
            returncode=USAGE,
        ) from None


class Commands:
    """The ``elections`` handler (``self`` is the kafka BaseCommand)."""

    def _elections_run(self, cluster, actor) -> int:
        o = self.opts
        if o["partition"] is not None and not o["topic"]:
            raise CommandError("--partition goes with --topic.", returncode=USAGE)
        if o["path_to_json_file"]:
            chosen = _from_file(read_text(o["path_to_json_file"], sys.stdin))
        elif o["topic"]:
            chosen = self._topic_partitions(cluster, actor, o["topic"], o["partition"])
        else:  # a preferred election: every imbalanced partition; an unclean one is refused
            chosen = elections.partitions_to_elect(actor, cluster, o["election_type"], None)
        op = self._run_or_hold(
            cluster,
            actor,
            "election",
            lambda: reassignment_held.prepare_election(
                actor, cluster, o["election_type"], chosen, o["confirm"]
            ),
            lambda: elections.start_election(
                actor=actor,
                cluster=cluster,
                election_type=o["election_type"],
                partitions=chosen,
                confirmation=o["confirm"],
            ),
        )
        rows = [{"topic": t, "partition": p} for t, p in sorted(set(chosen or ()))]
        self._emit(rows, ["topic", "partition"], {"operation": op.pk, "type": o["election_type"].upper()})
        self._say(f"Election queued as operation #{op.pk} ({len(rows)} partition(s)).")
        return OK

    def _topic_partitions(self, cluster, actor, topic: str, partition: int | None) -> list[tuple[str, int]]:
        if partition is not None:
            return [(topic, partition)]
        detail = topic_reads.describe_topic(actor=actor, cluster=cluster, name=topic)
        return [(topic, p.id) for p in detail.partitions]
