"""Repeated Kafka connection errors are logged once, counted, and closed by a "recovered" line.

A cluster that stays unreachable must not fill the log: every path that logs a Kafka connection
error goes through :data:`RUNS`. The first failure of a run is logged (WARNING) with what failed;
the following ones are only counted, with a reminder line naming the count every
``REMINDER_S``; the first success after them logs one INFO line with the count and the duration.

* The gateway's calls: :func:`observe` is one of ``gateway.CALL_OBSERVERS`` (a run per cluster
  address, ended by the next call that succeeds).
* kafka-python's own WARNING/ERROR lines ("Connection failed", "Connection lost", ...), one per
  reconnect attempt while a node is down: :class:`CollapseRepeats`, installed on its loggers, lets
  the first line of each kind through and counts the repeats (runs keyed by the message with its
  numbers blanked out; they end with a reminder, as kafka-python says nothing when a node is back).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass

log = logging.getLogger("console.kafka")

#: A still-failing run logs one reminder line (with the count) this often, in seconds.
REMINDER_S = 600.0

#: Gateway errors that mean Kafka (or one node) could not be talked to, as opposed to a refusal.
CONNECTION_ERRORS = frozenset(
    {
        "NETWORK_EXCEPTION",
        "REQUEST_TIMED_OUT",
        "BROKER_NOT_AVAILABLE",
        "LEADER_NOT_AVAILABLE",
        "NOT_CONTROLLER",
        "COORDINATOR_NOT_AVAILABLE",
    }
)


@dataclass
class _Run:
    first: float
    count: int
    last_logged: float
    text: str


class ErrorRuns:
    """Runs of repeated errors per key: the first logged, the rest counted, the end logged."""

    def __init__(self, logger: logging.Logger, reminder_s: float = REMINDER_S) -> None:
        self.logger = logger
        self.reminder_s = reminder_s
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()

    def failed(
        self, key: str, text: str, logger: logging.Logger | None = None, label: str | None = None
    ) -> bool:
        """Count one failure; log it if it starts a run (or a reminder is due). True when logged.
        The line starts with ``label`` (default: the key)."""
        now = time.monotonic()
        out = logger or self.logger
        name = key if label is None else label
        with self._lock:
            run = self._runs.get(key)
            if run is None:
                self._runs[key] = _Run(now, 1, now, text)
                until = "until it recovers" if label is None else f"a reminder every {self.reminder_s:.0f} s"
                line = f"{name}: {text} (repeats are counted, not logged; {until})"
            else:
                run.count += 1
                run.text = text
                if now - run.last_logged < self.reminder_s:
                    return False
                run.last_logged = now
                line = f"{name}: still failing, {run.count} errors in {now - run.first:.0f} s; latest: {text}"
        out.warning("%s", line)
        return True

    def recovered(self, key: str) -> bool:
        """End the key's run, if one is open, with one line. True when a run ended."""
        if key not in self._runs:  # the usual case, without the lock
            return False
        with self._lock:
            run = self._runs.pop(key, None)
        if run is None:
            return False
        self.logger.info(
            "%s: recovered after %d error%s over %.0f s (last: %s)",
            key,
            run.count,
            "" if run.count == 1 else "s",
            time.monotonic() - run.first,
            run.text,
        )
        return True

    def clear(self) -> None:
        """Forget every open run without logging (tests)."""
        with self._lock:
            self._runs.clear()

    def open_runs(self) -> dict[str, int]:
        """``{key: errors counted}`` of the runs still open (tests, diagnostics)."""
        with self._lock:
            return {k: r.count for k, r in self._runs.items()}


RUNS = ErrorRuns(log)


def cluster_key(conn) -> str:
    """The run key of one connection's calls."""
    mode = "controllers" if conn.controller_mode else "brokers"
    return f"Kafka {mode} {conn.address_text}"


def observe(conn, method: str, seconds: float, error: str) -> None:
    """``gateway.CALL_OBSERVERS`` hook: connection errors open or extend the cluster's run, a success ends it."""
    if not error:
        RUNS.recovered(cluster_key(conn))
    elif error in CONNECTION_ERRORS:
        RUNS.failed(cluster_key(conn), f"{method} failed with {error}")


_NUMBERS = re.compile(r"\d+(?:\.\d+)?")


class CollapseRepeats(logging.Filter):
    """On kafka-python's loggers: the first WARNING/ERROR line of each kind passes, repeats are counted."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return _redacted(record)
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: let logging report it
            return True
        shape = _NUMBERS.sub("#", text)
        # RUNS logs the first of a kind (and the reminders) through a logger the filter is not on
        RUNS.failed(
            f"kafka-python {record.name}: {shape}", text, logger=_quiet(record.name), label="kafka-python"
        )
        return False


# kafka-python's DEBUG lines print every request: SaslAuthenticate's auth_bytes carry a PLAIN password
# or an OAUTHBEARER token, and "Send:" dumps the raw bytes of each request
_AUTH_BYTES = re.compile(r"auth_bytes=b(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


# ... and "Recv:" the raw bytes of each answer; a Produce request and a Fetch answer printed as objects
# carry their records (message keys, values and headers: what the message browser masks)
_RAW_BYTES = re.compile(r"(?:^|\s)(?:Send|Recv): ")
_RECORDS = re.compile(r"\b(ProduceRequest|FetchResponse)\(.*", re.DOTALL)


def _redacted(record: logging.LogRecord) -> bool:
    """Drop raw request and answer dumps, leave records out of Produce requests and Fetch answers and
    blank SASL tokens in kafka-python's DEBUG lines."""
    try:
        text = record.getMessage()
    except Exception:  # noqa: BLE001 - a bad format string: let logging report it
        return True
    if _RAW_BYTES.search(text):
        return False
    if "ProduceRequest(" in text or "FetchResponse(" in text:
        text = _RECORDS.sub(r"\1(<records left out>)", text)
        record.msg, record.args = text, ()
    if "auth_bytes=" in text:
        record.msg, record.args = _AUTH_BYTES.sub("auth_bytes=<redacted>", text), ()
    return True


_FILTER = CollapseRepeats()


def _quiet(name: str) -> logging.Logger:
    """A logger beside kafka-python's (``name`` + ".runs"), which the filter is not on."""
    return logging.getLogger(f"{name}.runs")


def install() -> None:
    """Put the filter on every kafka-python logger that exists (idempotent; call after importing it)."""
    for name in list(logging.root.manager.loggerDict):
        if name == "kafka" or name.startswith("kafka."):
            if name.endswith(".runs"):
                continue
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
