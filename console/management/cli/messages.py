"""``manage.py kafka messages consume|produce``: kafka-console-consumer and kafka-console-producer over the
message browser's area calls (the same ``data.read`` / ``data.write`` grants, masking on the server and
audit as the pages and the API).

``consume`` takes the console consumer's options (``--topic``, ``--partition``, ``--offset N|earliest|
latest``, ``--from-beginning``, ``--max-messages``, ``--timeout-ms``, ``--property print.key=true`` …)
and prints each message as Kafka's DefaultMessageFormatter does for the same properties, then
"Processed a total of N messages" on stderr. As in the tool, a read from ``latest`` (the default) waits
for new messages; ``--follow`` keeps any read going. Unlike it, a read that does not follow is bounded: one
request (at most 50 messages) unless ``--max-messages`` asks for more. Every request is one bounded
``browse`` call, audited by the area (a follow poll that shows nothing is not). ``--timestamp`` (epoch ms
or ISO 8601, UTC without an offset) starts at the first message at or after that time.

``produce``: ``--value`` (one message) or one message per line of stdin, ``--property parse.key=true``
with ``key.separator`` (a tab by default) as the console producer reads lines; ``--key``, ``--header
k=v`` (repeatable), ``--partition`` (Kafka's default partitioner otherwise).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from datetime import UTC, datetime

from django.core.management.base import CommandError

from console.management.cli.base import OK, REFUSED, USAGE, common
from console.management.cli.parsing import topic_argument
from console.messages import actions, core
from console.messages import reads as message_reads

# A follow waits this long between polls that found nothing new (or less, up to --timeout-ms).
FOLLOW_POLL_S = 0.5
# Why a request stops that a person should hear of (not the end of the data: the console consumer is
# silent about that too).
LIMITS = frozenset(
    {
        message_reads.STOPPED_BYTES,
        message_reads.STOPPED_TIME,
        message_reads.STOPPED_COUNT,
        message_reads.STOPPED_STALLED,
    }
)
# What a read that does not follow shows without --max-messages: one request, as the page's default.
DEFAULT_COUNT = 50


@dataclasses.dataclass(frozen=True)
class LineFormat:
    """Kafka's DefaultMessageFormatter properties (``--property``) and their defaults."""

    timestamp: bool = False
    key: bool = False
    value: bool = True
    partition: bool = False
    offset: bool = False
    headers: bool = False
    key_separator: str = "\t"
    line_separator: str = "\n"
    headers_separator: str = ","
    null_literal: str = "null"


FLAGS = {
    "print.timestamp": "timestamp",
    "print.key": "key",
    "print.value": "value",
    "print.partition": "partition",
    "print.offset": "offset",
    "print.headers": "headers",
}
TEXTS = {
    "key.separator": "key_separator",
    "line.separator": "line_separator",
    "headers.separator": "headers_separator",
    "null.literal": "null_literal",
}


def properties(items: list[str]) -> dict[str, str]:
    """``--property k=v`` options (a usage error when one has no '=')."""
    found = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CommandError(f"--property {item!r}: expected NAME=VALUE", returncode=USAGE)
        found[name.strip()] = value
    return found


def line_format(props: dict[str, str]) -> LineFormat:
    """The formatter's settings; as in Kafka, a flag is on only when its value is "true" and a name the
    formatter does not know is ignored."""
    fields = {f: props[p].strip().lower() == "true" for p, f in FLAGS.items() if p in props}
    fields |= {f: props[p] for p, f in TEXTS.items() if p in props}
    return LineFormat(**fields)


def _column(text: str, kind: str, fmt: LineFormat) -> str:
    """A key or value as one column: null as the null literal, JSON (shown pretty) on one line."""
    if kind == "null":
        return fmt.null_literal
    if kind == "json":
        return json.dumps(json.loads(text), ensure_ascii=False)
    return text


def format_message(m, fmt: LineFormat) -> str:
    """One message as Kafka 4.1's kafka-console-consumer writes it: timestamp, partition, offset,
    headers, key, value, the printed ones joined by the key separator, the line separator last; with
    nothing printed, nothing (not even the line separator)."""
    columns = []
    if fmt.timestamp:
        columns.append(f"{m.timestamp_type}:{m.timestamp if m.timestamp is not None else -1}")
    if fmt.partition:
        columns.append(f"Partition:{m.partition}")
    if fmt.offset:
        columns.append(f"Offset:{m.offset}")
    if fmt.headers:
        shown = [f"{name}:{fmt.null_literal if value is None else value}" for name, value in m.headers]
        columns.append(fmt.headers_separator.join(shown) if shown else "NO_HEADERS")
    if fmt.key:
        columns.append(_column(m.key, m.key_kind, fmt))
    if fmt.value:
        columns.append(_column(m.value, m.value_kind, fmt))
    return fmt.key_separator.join(columns) + fmt.line_separator if columns else ""


def epoch_ms(text: str) -> int:
    """``--timestamp``: epoch milliseconds or an ISO 8601 time (UTC unless it has an offset)."""
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(
            f"--timestamp: {text!r} is neither epoch milliseconds nor an ISO 8601 time", returncode=USAGE
        ) from None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp() * 1000)


def add_parsers(area) -> None:
    m = area.add_parser("messages", help="consume, produce (kafka-console-consumer / -producer)")
    sub = m.add_subparsers(dest="action", required=True)
    p = sub.add_parser("consume", help="read messages as kafka-console-consumer prints them")
    common(p, formats=("text", "json"))
    p.set_defaults(output="text")
    topic_argument(p)
    p.add_argument("--partition", type=int, help="one partition (every partition if left out)")
    p.add_argument("--offset", help="with --partition: a number, earliest or latest (the default)")
    p.add_argument("--from-beginning", action="store_true", help="start with the earliest message")
    p.add_argument("--timestamp", help="start at the first message at or after this time (epoch ms or ISO)")
    p.add_argument("--max-messages", type=int, help="stop after this many messages")
    p.add_argument("--timeout-ms", type=int, help="stop when no message came for this long")
    p.add_argument(
        "--property",
        "--formatter-property",
        dest="property",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="print.key|print.timestamp|print.partition|print.offset|print.headers|print.value=true, "
        "key.separator, line.separator, headers.separator, null.literal",
    )
    p.add_argument("--follow", action="store_true", help="keep reading new messages")
    p.add_argument("--key-contains", default="", help="only messages whose key contains this text")
    p.add_argument("--header", default="", help="only messages with this header (NAME or NAME=VALUE)")
    p.add_argument("--value-contains", default="", help="only messages whose value contains this text")
    p.add_argument("--json-path", default="", help="only messages where this JSON path exists ($.a or $.a=V)")
    p.add_argument(
        "--decode",
        choices=core.DECODES,
        default="text",
        help="text (the default: the bytes as UTF-8, as kafka-console-consumer prints them), json (on one "
        "line), hex, auto",
    )
    p.add_argument("--unmasked-reason", default="", help="ask for an unmasked read (a grant must allow it)")
    p.checks.append(_consumer_checks)
    p = sub.add_parser("produce", help="send messages (--value, or one per line of stdin)")
    common(p)
    topic_argument(p)
    p.add_argument("--partition", type=int, help="Kafka's default partitioner if left out")
    p.add_argument("--key", help="the key of every message")
    p.add_argument("--value", help="one message with this value (otherwise one message per line of stdin)")
    p.add_argument("--header", action="append", default=[], metavar="NAME=VALUE", help="repeatable")
    p.add_argument(
        "--property",
        dest="property",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="parse.key=true and key.separator (a tab by default) for stdin lines",
    )


def _consumer_checks(ns) -> str:
    """kafka-console-consumer's own checks, in its words."""
    if ns.partition is not None and ns.partition < 0:
        return "--partition must be a partition number (0 or more)."
    if ns.offset is not None and ns.partition is None:
        return "The partition is required when offset is specified."
    if ns.from_beginning and ns.offset is not None:
        return "Options from-beginning and offset cannot be specified together."
    if ns.timestamp and (ns.from_beginning or ns.offset is not None):
        return "Options timestamp, from-beginning and offset cannot be specified together."
    if ns.offset is not None and ns.offset not in ("earliest", "latest") and not ns.offset.isdigit():
        return f"--offset {ns.offset!r}: a non-negative number, earliest or latest."
    if ns.max_messages is not None and ns.max_messages < 1:
        return "--max-messages must be 1 or more."
    if ns.timeout_ms is not None and ns.timeout_ms < 0:
        return "--timeout-ms must be 0 or more."
    return ""


class Commands:
    """The ``messages`` handlers (``self`` is the kafka BaseCommand)."""

    def _messages_query(self, mode: str, count: int, cursor: dict[int, int] | None = None):
        o = self.opts
        offset = int(o["offset"]) if mode == "offset" else None
        return core.BrowseQuery(
            mode=mode, partition=o["partition"], offset=offset,
            timestamp_ms=epoch_ms(o["timestamp"]) if mode == "timestamp" else None,
            count=count, cursor=cursor, key_contains=o["key_contains"], header=o["header"],
            value_contains=o["value_contains"], json_path=o["json_path"], decode=o["decode"],
            unmasked_reason=o["unmasked_reason"],
        )  # fmt: skip

    def _messages_start(self) -> tuple[str, bool]:
        """The first request's mode and whether the read follows (as the tool: ``latest`` waits)."""
        o = self.opts
        if o["timestamp"]:
            mode = "timestamp"
        elif o["from_beginning"] or o["offset"] == "earliest":
            mode = "oldest"
        elif o["offset"] is not None and o["offset"] != "latest":
            mode = "offset"
        else:
            return "follow", True
        return mode, o["follow"]

    def _messages_consume(self, cluster, actor) -> int:
        o, fmt = self.opts, line_format(properties(self.opts["property"]))
        mode, follow = self._messages_start()
        wanted = o["max_messages"] or (None if follow else DEFAULT_COUNT)
        paging = follow or o["max_messages"] is not None  # else one request
        timeout_s = o["timeout_ms"] / 1000 if o["timeout_ms"] is not None else None
        shown, cursor, noted, result = 0, None, set(), None
        last_seen = time.monotonic()
        try:
            while wanted is None or shown < wanted:
                count = min(core.MAX_MESSAGES, wanted - shown if wanted else core.MAX_MESSAGES)
                result = message_reads.browse(
                    actor=actor, cluster=cluster, topic=o["topic"],
                    query=self._messages_query(mode, count, cursor),
                )  # fmt: skip
                self._messages_note(result, noted)
                for m in result.messages[:count]:
                    self._messages_print(m, fmt)
                shown += min(len(result.messages), count)
                cursor, mode = result.cursor, "follow"
                now = time.monotonic()
                if result.messages:
                    last_seen = now
                if not paging or (not follow and result.scanned == 0):
                    break  # one request, or the end of what there is
                if timeout_s is not None and now - last_seen >= timeout_s:
                    break
                if follow and not result.scanned:
                    pause = FOLLOW_POLL_S
                    if timeout_s is not None:
                        pause = min(pause, max(0.0, timeout_s - (now - last_seen)))
                    time.sleep(pause)
        except KeyboardInterrupt:
            pass  # Ctrl-C ends a follow as it ends the console consumer
        finally:
            if result is not None and result.stopped in LIMITS and (wanted is None or shown < wanted):
                self.stderr.write(f"Stopped early: {result.stopped}.")
            self.stderr.write(f"Processed a total of {shown} messages")
        return OK

    def _messages_print(self, m, fmt: LineFormat) -> None:
        if self.opts["output"] == "json":
            self.stdout.write(json.dumps(dataclasses.asdict(m)))
        else:
            self.stdout.write(format_message(m, fmt), ending="")
        self.stdout.flush()

    def _messages_note(self, result, noted: set) -> None:
        """Whether the read is masked (and by what), once, on stderr: stdout stays the messages."""
        notes = []
        if result.masked and result.rules:
            notes.append("Masked on the server by: " + "; ".join(result.rules))
        elif not result.masked:
            notes.append("Unmasked read (audited with its reason).")
        for note in notes:
            if note not in noted:
                noted.add(note)
                self.stderr.write(note)

    def _messages_produce(self, cluster, actor) -> int:
        o = self.opts
        headers = []
        for item in o["header"]:
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise CommandError(f"--header {item!r}: expected NAME=VALUE", returncode=USAGE)
            headers.append((name, value.encode()))
        key = o["key"].encode() if o["key"] is not None else None
        if o["value"] is not None:
            messages = [(key, o["value"].encode())]
        else:
            messages = self._messages_lines(key)
        rows = []
        for k, v in messages:
            produced = actions.produce(
                actor=actor, cluster=cluster, topic=o["topic"], partition=o["partition"], key=k, value=v,
                headers=headers,
            )  # fmt: skip
            rows.append(
                {"partition": produced.partition, "offset": produced.offset, "timestamp": produced.timestamp}
            )
        self._emit(rows, ["partition", "offset", "timestamp"])
        return OK

    def _messages_lines(self, key: bytes | None) -> list[tuple[bytes | None, bytes]]:
        """stdin's lines as the console producer's LineMessageReader reads them; every line is checked
        before the first is sent (a line without its key separator: exit 4, nothing sent)."""
        props = properties(self.opts["property"])
        parse_key = props.get("parse.key", "").strip().lower() == "true"
        separator = props.get("key.separator", "\t")
        text = sys.stdin.read()
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        messages = []
        for number, line in enumerate(lines, 1):
            line = line.removesuffix("\r")
            if not parse_key:
                messages.append((key, line.encode()))
                continue
            k, sep, value = line.partition(separator)
            if not sep:
                raise CommandError(
                    f"No key separator found on line number {number}: '{line}'; nothing was sent.",
                    returncode=REFUSED,
                )
            messages.append((k.encode(), value.encode()))
        return messages
