"""The KRaft lifecycle's rules as plain data (no Django, no I/O): which voter changes keep the quorum's
majority, which nodes may become voters, which brokers may be unregistered, and the input checks of
each (feature levels, node ids, directory ids, endpoints).

Two kinds of "no": ``KraftInvalid`` (the input cannot mean anything: a clear error, 400) and
``KraftRefused`` (the input is understood but doing it now is unsafe: the quorum would lose its
majority, the broker still hosts replicas; 409). Both change nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Kafka's upgrade types (``kafka-features.sh upgrade`` / ``downgrade [--unsafe]``).
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = "upgrade", "safe-downgrade", "unsafe-downgrade"
UPGRADE_TYPES = (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE)
METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
#: metadata.version's levels by release name, as Kafka's MetadataVersion names them (3.3-IV3, the
#: oldest KRaft level Kafka 4 accepts, to the 4.2 levels a 4.1 broker may know as unstable).
METADATA_RELEASES = {
    f"{release}-IV{iv}": level
    for level, (release, iv) in enumerate(
        [("3.3", 3), ("3.4", 0), ("3.5", 0), ("3.5", 1), ("3.5", 2), ("3.6", 0), ("3.6", 1), ("3.6", 2),
         ("3.7", 0), ("3.7", 1), ("3.7", 2), ("3.7", 3), ("3.7", 4), ("3.8", 0), ("3.9", 0), ("4.0", 0),
         ("4.0", 1), ("4.0", 2), ("4.0", 3), ("4.1", 0), ("4.1", 1), ("4.2", 0), ("4.2", 1)],
        start=7,
    )
}  # fmt: skip
#: The listener a new voter is reached on unless another is named (Kafka's controller.listener.names' first).
DEFAULT_LISTENER = "CONTROLLER"
#: How many hosted partitions a refusal names (the rest are counted).
NAMED_PARTITIONS = 5
FEATURE_NAME = re.compile(r"^[a-z][a-z0-9._-]{0,99}$")
LISTENER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
HOST = re.compile(r"^[A-Za-z0-9_.:-]{1,253}$")
DIRECTORY_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")
MAX_NODE_ID = 2**31 - 1


class KraftInvalid(ValueError):
    """The input cannot be acted on as given (``errors``: one sentence each)."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class KraftRefused(Exception):
    """Understood, but unsafe now; ``errors`` say why and what to do first."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


# -- input ---------------------------------------------------------------------------------------


def node_id(value: object, what: str = "node id") -> int:
    """A node id as Kafka takes it (0 .. 2^31-1)."""
    text = str(value).strip()
    if not text.isdigit() or int(text) > MAX_NODE_ID:
        raise KraftInvalid(
            [f"{what} must be a whole number from 0 to {MAX_NODE_ID}, not {str(value)[:40]!r}"]
        )
    return int(text)


def feature_updates(pairs: dict[str, object] | list[str] | str) -> dict[str, int]:
    """``{"metadata.version": 27}`` from a mapping, ``["name=level", ...]`` or ``"a=1,b=2"``
    (``kafka-features.sh --feature name=level``); KraftInvalid names every bad entry."""
    if isinstance(pairs, str):
        pairs = [p for p in pairs.replace("\n", ",").split(",") if p.strip()]
    items: list[tuple[str, object]] = []
    errors: list[str] = []
    if isinstance(pairs, dict):
        items = list(pairs.items())
    else:
        for entry in pairs:
            name, sep, level = str(entry).partition("=")
            if not sep:
                errors.append(f"{str(entry)[:60]!r} is not name=level (for example metadata.version=27)")
                continue
            items.append((name, level))
    out: dict[str, int] = {}
    for name, level in items:
        name = str(name).strip()
        if not FEATURE_NAME.match(name):
            errors.append(f"{name[:60]!r} is not a feature name (lower case, like metadata.version)")
            continue
        text = str(level).strip()
        if name == METADATA_VERSION and not re.fullmatch(r"-?\d{1,5}", text):
            found = metadata_level(text)
            if found is None:
                errors.append(
                    f"metadata.version must be a level or a release such as 4.1-IV1 or 4.1, not {text[:20]!r}"
                )
                continue
            text = str(found)
        if not re.fullmatch(r"-?\d{1,5}", text) or not -32768 <= int(text) <= 32767:
            errors.append(f"the level of {name} must be a whole number, not {text[:20]!r}")
            continue
        if name in out:
            errors.append(f"{name} is named twice")
            continue
        out[name] = int(text)
    if not out and not errors:
        errors.append("name at least one feature=level")
    if errors:
        raise KraftInvalid(errors)
    return out


def metadata_level(release: str) -> int | None:
    """The metadata.version level of a release name: ``4.1-IV1`` exactly, ``4.1`` its newest level
    (as ``kafka-features.sh --metadata 4.1`` takes it); None for a name Kafka 4.1 does not know."""
    text = release.strip()
    if text.upper() in METADATA_RELEASES:
        return METADATA_RELEASES[text.upper()]
    levels = [lvl for name, lvl in METADATA_RELEASES.items() if name.split("-")[0] == text]
    return max(levels) if levels else None


def metadata_release(level: int | None) -> str:
    """``4.1-IV1`` for level 27; "" for a level without a name here."""
    for name, lvl in METADATA_RELEASES.items():
        if lvl == level:
            return name
    return ""


def upgrade_type(value: str) -> str:
    if value not in UPGRADE_TYPES:
        raise KraftInvalid(
            [f"the upgrade type must be one of {', '.join(UPGRADE_TYPES)}, not {str(value)[:30]!r}"]
        )
    return value


def directory_id(value: str) -> str:
    """Kafka's text form of a directory id, as ``kafka-metadata-quorum.sh describe`` shows it."""
    text = (value or "").strip()
    if not DIRECTORY_ID.match(text) or text == "A" * 22:
        raise KraftInvalid(
            [
                f"{text[:40]!r} is not a directory id: 22 characters as kafka-metadata-quorum.sh describe shows it"
            ]
        )
    return text


def endpoint(value: str, default_listener: str = DEFAULT_LISTENER) -> tuple[str, str, int]:
    """``CONTROLLER://host:port`` or ``host:port`` -> (listener, host, port)."""
    text = (value or "").strip()
    listener, sep, rest = text.partition("://")
    if not sep:
        listener, rest = default_listener, text
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    problems = []
    if not LISTENER_NAME.match(listener):
        problems.append(f"{listener[:40]!r} is not a listener name")
    if not HOST.match(host):
        problems.append(f"{rest[:80]!r} has no host (give host:port, e.g. 10.0.0.3:9093)")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        problems.append(f"{rest[:80]!r} has no port from 1 to 65535")
    if problems:
        raise KraftInvalid(problems)
    return listener, host, int(port)


def endpoint_text(listener: str, host: str, port: int) -> str:
    return f"{listener}://{host}:{port}"


# -- the quorum ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """A voter or observer as the rules see it."""

    id: int
    directory_id: str
    caught_up: bool
    behind: str = ""  # why it is not caught up ("1,234 records behind")


def caught_up(
    lag: int, last_caught_up_ms: int | None, freshest_ms: int | None, lag_records: int, caught_up_ms: int
) -> tuple[bool, str]:
    """Whether a replica counts as caught up (within ``lag_records`` of the high watermark and caught
    up within ``caught_up_ms`` of the freshest voter in the same answer), and why not."""
    if lag > lag_records:
        return False, f"{lag:,} records behind the high watermark"
    if freshest_ms is not None and (
        last_caught_up_ms is None or freshest_ms - last_caught_up_ms > caught_up_ms
    ):
        return False, "has not caught up recently"
    return True, ""


def removal_problems(
    voters: list[Member], leader_id: int, node: int, directory: str | None, *, allow_leader: bool
) -> tuple[list[str], list[str]]:
    """(input problems, safety problems) of removing ``node`` from the voter set.

    After the removal the voters still caught up must be a majority of the new voter set (Kafka
    commits the change with the new set's majority; without it the quorum stops). The last voter is
    never removed. The active controller is removed only when ``allow_leader``: it commits the
    change and then resigns, so the metadata log has no leader until the others elect one (seconds,
    during which no metadata change is accepted) - an operator asks for that on purpose.
    """
    ids = sorted(v.id for v in voters)
    voter = next((v for v in voters if v.id == node), None)
    if voter is None:
        return [f"node {node} is not a voter (voters: {', '.join(map(str, ids)) or 'none'})"], []
    if directory and directory != voter.directory_id:
        return [
            f"directory id {directory} is not voter {node}'s ({voter.directory_id}); Kafka matches both"
        ], []
    unsafe = []
    left = [v for v in voters if v.id != node]
    if not left:
        return [], [f"{node} is the last voter: removing it would leave the metadata log without a quorum"]
    ready = [v for v in left if v.caught_up or v.id == leader_id]
    need = len(left) // 2 + 1
    if len(ready) < need:
        behind = [f"{v.id} ({v.behind})" for v in left if v not in ready]
        unsafe.append(
            f"after removing {node}, {len(ready)} of the {len(left)} remaining voters are caught up, "
            f"fewer than the {need} a majority needs (not caught up: {', '.join(behind)}): the quorum "
            "could not commit the change and would stop; bring those voters back first"
        )
    if node == leader_id and not allow_leader:
        unsafe.append(
            f"{node} is the active controller: it would resign after the change and the quorum would "
            "elect another leader (no metadata change is accepted meanwhile); confirm removing the "
            "leader on purpose"
        )
    return [], unsafe


def addition_problems(
    voters: list[Member],
    observers: list[Member],
    brokers: set[int],
    node: int,
    directory: str,
) -> list[str]:
    """Why ``node`` cannot be added now: already a voter, a registered broker, not fetching the
    metadata log as an observer with this directory id, or behind (Kafka would answer
    DUPLICATE_VOTER or time out)."""
    if any(v.id == node for v in voters):
        return [f"{node} is already a voter"]
    if node in brokers:
        return [
            f"{node} is a registered broker: only a controller fetching the metadata log may become a voter"
        ]
    observer = next((o for o in observers if o.id == node), None)
    if observer is None:
        return [
            f"controller {node} is not fetching the metadata log (it is no observer): start it with the "
            "cluster's controller.quorum.bootstrap.servers, then add it"
        ]
    if directory != observer.directory_id:
        return [
            f"directory id {directory} is not the one controller {node} fetches with "
            f"({observer.directory_id}); Kafka would wait for a replica that never catches up"
        ]
    if not observer.caught_up:
        return [f"controller {node} is not caught up ({observer.behind}); wait until it is"]
    return []


# -- brokers -------------------------------------------------------------------------------------


def unregister_problems(broker: int, alive: bool, hosted: list[str]) -> list[str]:
    """Why a broker's registration must stay: it is alive (registered and not fenced: it would
    register again at its next heartbeat, and its replicas would drop out of the ISR meanwhile) or
    replicas are still placed on it (the partitions would keep naming a broker Kafka no longer knows)."""
    problems = []
    if alive:
        problems.append(
            f"broker {broker} is alive (registered and heartbeating): stop it for good first; a live "
            "broker registers again at its next heartbeat"
        )
    if hosted:
        named = ", ".join(hosted[:NAMED_PARTITIONS])
        more = f" and {len(hosted) - NAMED_PARTITIONS:,} more" if len(hosted) > NAMED_PARTITIONS else ""
        problems.append(
            f"broker {broker} still hosts {len(hosted):,} replica(s) ({named}{more}): move them to other "
            "brokers first (Reassignments)"
        )
    return problems


# -- results -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KraftResult:
    """What one lifecycle action did. ``error`` is Kafka's (a KafkaOperationError) or None;
    ``before``/``after`` are what the console read around it (None: could not be read)."""

    action: str  # features.update, features.validate, voter.add, voter.remove, broker.unregister
    target: str  # "features", "controller:103", "broker:4"
    dry_run: bool
    error: object | None
    message: str
    before: object = None
    after: object = None
    confirmed: bool = False  # the re-read showed the change
    event_id: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_json(self) -> dict:
        err = self.error
        return {
            "action": self.action,
            "target": self.target,
            "dry_run": self.dry_run,
            "ok": self.ok,
            "message": self.message,
            "before": self.before,
            "after": self.after,
            "confirmed": self.confirmed,
            "error": None if err is None else {"name": err.name, "message": err.message},
            "event_id": self.event_id,
        }


def until(read, done, timeout_s: float, step_s: float = 0.25):
    """Call ``read()`` until ``done(value)`` or ``timeout_s`` passed; the last value (None when no
    read succeeded). A read that raises counts as not done."""
    import time

    deadline = time.monotonic() + timeout_s
    value = None
    while True:
        try:
            value = read()
            if done(value):
                return value, True
        except Exception:  # noqa: BLE001 - Kafka may be electing; the next read may answer
            pass
        if time.monotonic() >= deadline:
            return value, False
        time.sleep(step_s)
