"""``manage.py kafka transactions list|describe|describe-producers|find-hanging|abort``:
``kafka-transactions.sh`` over the transactions area.

``list`` (``--state``, ``--producer-id``, ``--duration-filter`` ms), ``describe --transactional-id``,
``describe-producers --topic --partition [--broker-id]``, ``find-hanging (--topic [--partition] |
--broker-id) [--max-transaction-timeout MIN]`` print the tool's columns; ``abort --topic --partition
--start-offset`` (admins) needs ``--confirm <topic>-<partition>`` and takes the change-control options
of every holdable sub-command.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from console.management.cli.base import FAILED, NOT_FOUND, OK, common, holdable
from console.transactions import actions, core, held, reads

LIST_COLUMNS = ["transactional_id", "coordinator", "producer_id", "state"]
DESCRIBE_COLUMNS = [
    "coordinator",
    "transactional_id",
    "producer_id",
    "producer_epoch",
    "state",
    "transaction_timeout_ms",
    "transaction_start_time_ms",
    "transaction_duration_ms",
    "topic_partitions",
]
PRODUCER_COLUMNS = [
    "producer_id",
    "producer_epoch",
    "coordinator_epoch",
    "last_sequence",
    "last_timestamp",
    "current_transaction_start_offset",
]
HANGING_COLUMNS = [
    "topic",
    "partition",
    "producer_id",
    "producer_epoch",
    "coordinator_epoch",
    "start_offset",
    "last_timestamp",
    "duration_min",
]
ABORT_COLUMNS = ["topic", "partition", "producer_id", "producer_epoch", "start_offset", "ok", "message"]


def add_parsers(area) -> None:
    sub = area.add_parser(
        "transactions", help="list, describe, describe-producers, find-hanging, abort (kafka-transactions)"
    ).add_subparsers(dest="action", required=True)
    p = sub.add_parser("list", help="the transactions every broker coordinates")
    common(p)
    p.add_argument("--state", action="append", default=[], help="only this state (repeatable)")
    p.add_argument("--producer-id", type=int, action="append", default=[], help="only this producer id")
    p.add_argument("--duration-filter", type=int, default=-1, metavar="MS", help="running longer than MS")
    p = sub.add_parser("describe", help="one transactional id at its coordinator")
    common(p)
    p.add_argument("--transactional-id", required=True)
    p = sub.add_parser("describe-producers", help="a partition's active producers")
    common(p)
    p.add_argument("--topic", required=True)
    p.add_argument("--partition", type=int, required=True)
    p.add_argument("--broker-id", type=int, help="ask this replica (default: the leader)")
    p = sub.add_parser("find-hanging", help="open transactions their coordinator does not know")
    common(p)
    p.add_argument("--topic")
    p.add_argument("--partition", type=int)
    p.add_argument("--broker-id", type=int)
    p.add_argument(
        "--max-transaction-timeout", type=int, default=core.DEFAULT_MAX_TIMEOUT_MIN, metavar="MIN",
        help="minutes (15 by default)",
    )  # fmt: skip
    p = sub.add_parser("abort", help="abort an open transaction by its start offset (admins)")
    common(p)
    p.add_argument("--topic", required=True)
    p.add_argument("--partition", type=int, required=True)
    p.add_argument("--start-offset", type=int, required=True)
    p.add_argument("--confirm", metavar="TOPIC-PARTITION", default="", help="'<topic>-<partition>', typed")
    holdable(p)


class Commands:
    """The ``transactions`` handlers (``self`` is the kafka BaseCommand)."""

    def _transactions_list(self, cluster, actor) -> int:
        o = self.opts
        listing = reads.list_page(
            actor=actor, cluster=cluster, per_page=1 << 40, states=o["state"], producer_ids=o["producer_id"],
            duration_ms=o["duration_filter"],
        )  # fmt: skip
        self._emit([t.as_json() for t in listing.rows], LIST_COLUMNS)
        return OK

    def _transactions_describe(self, cluster, actor) -> int:
        tid = self.opts["transactional_id"]
        found = reads.describe(actor=actor, cluster=cluster, transactional_id=tid)
        if found is None:
            raise CommandError(
                f"No transactional id '{tid}' (TRANSACTIONAL_ID_NOT_FOUND).", returncode=NOT_FOUND
            )
        row = reads.description_json(found)
        row["topic_partitions"] = ",".join(row["topic_partitions"])
        self._emit([row], DESCRIBE_COLUMNS)
        return OK

    def _transactions_describe_producers(self, cluster, actor) -> int:
        o = self.opts
        got = reads.producers(
            actor=actor, cluster=cluster, topic=o["topic"], partition=o["partition"], broker_id=o.get("broker_id")
        )  # fmt: skip
        answer = got.get(o["partition"])
        if not isinstance(answer, tuple):
            raise answer  # type: ignore[misc]
        self._emit([reads.producer_json(s) for s in answer], PRODUCER_COLUMNS)
        return OK

    def _transactions_find_hanging(self, cluster, actor) -> int:
        o = self.opts
        found = reads.find_hanging(
            actor=actor, cluster=cluster, topic=o.get("topic"), partition=o.get("partition"),
            broker_id=o.get("broker_id"), max_timeout_min=o["max_transaction_timeout"],
        )  # fmt: skip
        self._emit([t.as_json(found.now_ms) for t in found.rows], HANGING_COLUMNS, found.as_json())
        return OK

    def _transactions_abort(self, cluster, actor) -> int:
        o = self.opts
        args = {"topic": o["topic"], "partition": o["partition"], "start_offset": o["start_offset"]}
        result = self._run_or_hold(
            cluster,
            actor,
            held.GATE,
            lambda: held.prepare(actor, cluster, confirmation=o["confirm"], **args),
            lambda: actions.abort_transaction(
                actor=actor, cluster=cluster, confirmation=o["confirm"], **args
            ),
        )
        self._emit(
            [{k: v for k, v in result.as_json().items() if k in ABORT_COLUMNS}],
            ABORT_COLUMNS,
            result.as_json(),
        )
        return OK if result.ok else FAILED
