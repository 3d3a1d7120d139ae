"""Transactions as plain data (pure): the list's filters checked, the rows, *hanging* transactions found
the way ``kafka-transactions.sh find-hanging`` finds them, and the abort's target found the way
``kafka-transactions.sh abort --start-offset`` finds it.

What was followed (apache/kafka ``tools/.../TransactionsCommand.java``, Kafka 4.1):
- ``FindHangingTransactionsCommand``: a candidate is an active producer of a searched partition with a
  current transaction start offset whose ``now - lastTimestamp`` is *greater than* the maximum
  transaction timeout (``--max-transaction-timeout`` minutes, 15 by default). Candidates are grouped by
  producer id; their transactional ids are found by one ListTransactions filtered by those producer ids.
  A candidate is hanging when no transactional id lists its producer id, when DescribeTransactions
  answers TRANSACTIONAL_ID_NOT_FOUND for the id, or when the described transaction's partitions do not
  include the candidate's partition (DescribeTransactions lists every partition of an ongoing
  transaction and every partition still owed a marker in PrepareAbort/PrepareCommit, so a partition
  missing from it will never get one). The tool searches a topic (or one of its partitions), or every
  partition a broker holds a replica of (``--broker-id``, DescribeProducers asked of that broker).
- ``AbortTransactionCommand``: DescribeProducers of the partition; the producer whose current
  transaction starts at exactly ``--start-offset`` (none: "Could not find any open transactions
  starting at offset ..."), aborted with its producer id, epoch and coordinator epoch (-1, unknown:
  0, "less than or equal to any possible leader epoch").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

DEFAULT_MAX_TIMEOUT_MIN = 15  # find-hanging's --max-transaction-timeout default
MAX_TIMEOUT_MIN = 7 * 24 * 60  # the console's bound on the threshold (a week)
STATES = (
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "PrepareEpochFence",
)
MAX_NAME = 249  # Kafka's topic name limit
MAX_PARTITION = (1 << 31) - 1  # an int32


class TxnInputError(ValueError):
    """Input that means nothing (a state, a producer id, an offset); ``errors`` says why."""

    def __init__(self, errors: Sequence[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = list(errors)


def _fields(row) -> dict:
    """A row's fields by name, in declaration order (the API's JSON of it)."""
    return {f.name: getattr(row, f.name) for f in fields(row)}


@dataclass(frozen=True)
class Transaction:
    """A row of the list: a transactional id at its coordinator."""

    transactional_id: str
    coordinator: int
    producer_id: int
    state: str

    def as_json(self) -> dict:
        return _fields(self)


@dataclass(frozen=True)
class OpenTxn:
    """An open transaction at one partition (an active producer with a current start offset)."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    last_timestamp: int

    def duration_min(self, now_ms: int) -> int:
        return max(0, now_ms - self.last_timestamp) // 60_000

    def as_json(self, now_ms: int) -> dict:
        return {**_fields(self), "duration_min": self.duration_min(now_ms)}


@dataclass(frozen=True)
class AbortSpec:
    """What the abort sends: WriteTxnMarkers (ABORT) for this producer at this partition."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int

    def as_json(self) -> dict:
        return _fields(self)


def check_states(states: Iterable[str]) -> list[str]:
    """The state filters, each one of Kafka's transaction states."""
    out, bad = [], []
    for s in states:
        s = str(s).strip()
        if not s:
            continue
        (out if s in STATES else bad).append(s)
    if bad:
        raise TxnInputError([f"unknown transaction state(s): {', '.join(bad)} (one of {', '.join(STATES)})"])
    return list(dict.fromkeys(out))


def whole(value, what: str, *, low: int = 0, high: int = (1 << 63) - 1) -> int:
    """A whole number from ``low`` to ``high`` (bools and fractions refused)."""
    if isinstance(value, bool) or value is None or value == "":
        raise TxnInputError([f"{what} must be a whole number"])
    try:
        number = int(str(value).strip())
    except ValueError:
        raise TxnInputError([f"{what} must be a whole number, not '{str(value)[:40]}'"]) from None
    if not low <= number <= high:
        raise TxnInputError([f"{what} must be from {low} to {high}"])
    return number


def check_topic(topic) -> str:
    name = str(topic or "").strip()
    if not name or len(name) > MAX_NAME or any(c.isspace() for c in name):
        raise TxnInputError([f"'{str(topic)[:60]}' is not a topic name"])
    return name


def check_partition_target(topic, partition, start_offset) -> tuple[str, int, int]:
    """The abort's (topic, partition, start offset), checked; every problem named at once."""
    checks = (
        lambda: check_topic(topic),
        lambda: whole(partition, "partition", high=MAX_PARTITION),
        lambda: whole(start_offset, "start offset"),
    )
    errors, out = [], []
    for check in checks:
        try:
            out.append(check())
        except TxnInputError as exc:
            errors.extend(exc.errors)
    if errors:
        raise TxnInputError(errors)
    return out[0], out[1], out[2]


def page_of(rows: Sequence[tuple], page: int, per_page: int) -> tuple[list[Transaction], int, int]:
    """One page of the gateway's plain rows as ``Transaction`` objects (only the page's), the page
    number (past the last: the last) and the page count."""
    per_page = max(1, per_page)
    pages = max(1, -(-len(rows) // per_page))
    page = min(max(1, page), pages)
    start = (page - 1) * per_page
    return [Transaction(*r) for r in rows[start : start + per_page]], page, pages


def open_transactions(topic: str, producers: Mapping[int, Sequence]) -> list[OpenTxn]:
    """Every open transaction among ``{partition: producer states}`` (states with a start offset)."""
    out = []
    for partition, states in sorted(producers.items()):
        for s in states:
            if s.txn_start_offset >= 0:
                out.append(
                    OpenTxn(
                        topic,
                        partition,
                        s.producer_id,
                        s.producer_epoch,
                        s.coordinator_epoch,
                        s.txn_start_offset,
                        s.last_timestamp,
                    )
                )
    return out


def candidates(open_txns: Iterable[OpenTxn], now_ms: int, max_timeout_ms: int) -> list[OpenTxn]:
    """find-hanging's candidates: open longer than the timeout (now - last timestamp, strictly more)."""
    return [t for t in open_txns if now_ms - t.last_timestamp > max_timeout_ms]


def hanging(
    found: Sequence[OpenTxn],
    transactional_ids: Mapping[int, str],
    descriptions: Mapping[str, object | None],
) -> list[OpenTxn]:
    """The hanging ones among the candidates: no transactional id for the producer id, no transaction
    at the coordinator (None: TRANSACTIONAL_ID_NOT_FOUND), or a transaction that does not hold the
    partition (``descriptions[tid].partitions``)."""
    out = []
    for t in found:
        tid = transactional_ids.get(t.producer_id)
        if tid is None:
            out.append(t)
            continue
        described = descriptions.get(tid)
        if described is None or (t.topic, t.partition) not in set(described.partitions):  # type: ignore[attr-defined]
            out.append(t)
    return out


def abort_spec(topic: str, partition: int, start_offset: int, states: Sequence) -> AbortSpec | str:
    """The producer whose open transaction starts at ``start_offset`` on the partition, as the abort
    sends it; otherwise the refusal's text (nothing is sent)."""
    for s in states:
        if s.txn_start_offset >= 0 and s.txn_start_offset == start_offset:
            return AbortSpec(
                topic,
                partition,
                s.producer_id,
                s.producer_epoch,
                max(0, s.coordinator_epoch),
                start_offset,
            )
    starts = sorted(s.txn_start_offset for s in states if s.txn_start_offset >= 0)
    now = f" (open transactions start at {', '.join(map(str, starts))})" if starts else " (none is open)"
    return f"Could not find any open transactions starting at offset {start_offset} on partition {topic}-{partition}{now}"


def pin(states: Sequence) -> str:
    """The partition's open transactions, as a held abort is pinned to them."""
    return (
        ",".join(
            f"{s.producer_id}/{s.producer_epoch}@{s.txn_start_offset}"
            for s in sorted(states, key=lambda s: (s.txn_start_offset, s.producer_id))
            if s.txn_start_offset >= 0
        )
        or "none open"
    )
