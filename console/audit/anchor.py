"""Anchors for an external witness: the chain's head (id, hash, time) saved outside the database.

The keyed hashes stop anyone without AUDIT_HMAC_KEY from rewriting events, but removing the newest
events together with the head leaves a shorter chain that still verifies. An anchor kept outside the
database catches that: the chain must still hold the anchored event with the anchored hash. Because every
later event links back to it and each hash is keyed, "still holds" also means nothing up to the anchor
was rewritten.

Celery beat runs ``append_anchor`` every CONSOLE_AUDIT_ANCHOR_EVERY_S: after a clean chain check it appends
the head, signed with HMAC-SHA256 under AUDIT_HMAC_KEY, as one line of CONSOLE_AUDIT_ANCHOR_DIR/anchors.jsonl
(directory 0700, file 0600, opened O_APPEND and written with one write: old lines are never rewritten),
and only when the head moved since the latest line. Every chain check (``store.conclude``: the audit page,
``audit_verify``, the ``audit.verify`` operation) compares the chain with the latest line
(``check_latest``): a chain that no longer holds it, or a line that is not a signed anchor, fails the
check; a missing or unreadable file, or new events left unanchored for two intervals, is a warning.
``manage.py audit_anchor`` writes the same signed anchor to stdout or a file for a witness of one's own
(``audit_verify --anchor FILE`` checks it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from console.models import AuditChainHead, AuditEvent
from console.models.audit import GENESIS_HASH, audit_key, canonical, chain_start

log = logging.getLogger(__name__)

ANCHOR_FILE = "anchors.jsonl"
ANCHOR_VERSION = 1
_MAC_CONTEXT = b"console audit anchor\n"
_FIELDS = frozenset({"v", "id", "hash", "time", "anchored_at"})
_TAIL_BYTES = 4096  # an anchor line is about 300 bytes; only the end of the file is read
_logged = {"last": ""}  # this process's last logged write problem: a persisting one is logged once


class AnchorError(Exception):
    """The anchor file cannot be read as an anchor."""


@dataclass(frozen=True)
class AnchorCheck:
    """The chain against the latest scheduled anchor, as the audit page and ``audit_verify`` report it."""

    level: str  # "ok", "warning" (nothing to check against, or the anchor task is behind), "failure"
    message: str
    path: str
    anchor_id: int | None = None
    anchor_hash: str = ""
    anchored_at: str = ""


@dataclass(frozen=True)
class AnchorWrite:
    """What one ``append_anchor`` did: "written", "unchanged", "refused" or "unwritable", and why."""

    outcome: str
    message: str


def _mac(fields: Mapping[str, Any]) -> str:
    return hmac.new(audit_key(), _MAC_CONTEXT + canonical(dict(fields)), hashlib.sha256).hexdigest()


def head_anchor() -> dict[str, Any]:
    """The head as a signed anchor: {"v", "id", "hash", "time" (the event's), "anchored_at", "mac"}; id 0
    for an empty chain."""
    head = AuditChainHead.objects.filter(pk=1).first()
    last_id, last_hash = (head.last_id, head.last_hash) if head else (0, GENESIS_HASH)
    created = AuditEvent.objects.filter(pk=last_id).values_list("created_at", flat=True).first()
    fields = {
        "v": ANCHOR_VERSION,
        "id": last_id,
        "hash": last_hash,
        "time": created.isoformat() if created else None,
        "anchored_at": timezone.now().isoformat(),
    }
    return {**fields, "mac": _mac(fields)}


def parse_anchor(text: str, *, signed: bool = False) -> tuple[int, str]:
    """(id, hash) from an anchor's JSON text. A "mac" is always checked; ``signed`` requires one."""
    data = _parse(text, signed=signed)
    return data["id"], data["hash"]


def _parse(text: str, *, signed: bool) -> Mapping[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise AnchorError(f"not JSON ({exc})") from exc
    if not isinstance(data, Mapping):
        raise AnchorError("not a JSON object with id and hash")
    anchor_id, anchor_hash = data.get("id"), data.get("hash")
    if not isinstance(anchor_id, int) or isinstance(anchor_id, bool) or anchor_id < 0:
        raise AnchorError("its id is not an event id")
    if not isinstance(anchor_hash, str) or len(anchor_hash) != 64:
        raise AnchorError("its hash is not a 64-character hex hash")
    if signed or "mac" in data:
        fields = {k: v for k, v in data.items() if k != "mac"}
        mac = data.get("mac")
        if set(fields) != _FIELDS or not isinstance(mac, str) or not hmac.compare_digest(_mac(fields), mac):
            raise AnchorError("its signature does not verify under AUDIT_HMAC_KEY")
    return data


def anchor_problem(anchor_id: int, anchor_hash: str) -> tuple[str, str]:
    """("", note) when the chain still holds the anchored event with that hash; (reason, "") when not.

    An anchor older than the archive anchor can only be checked against the archive files (the note
    says so); the archive anchor itself is vouched for by the keyed audit.archive event.
    """
    head = AuditChainHead.objects.filter(pk=1).first()
    start_id, start_hash = chain_start(head)
    last_id = head.last_id if head else 0
    if anchor_id == 0:
        return ("", "") if anchor_hash == GENESIS_HASH else ("event 0 can only have the genesis hash", "")
    if anchor_id < start_id:
        return "", (
            f"event {anchor_id} was archived (archived up to event {start_id}); compare the anchor with the "
            "archive files"
        )
    if anchor_id == start_id:
        found = start_hash  # the archive anchor, vouched for by the keyed audit.archive event
    else:
        found = AuditEvent.objects.filter(pk=anchor_id).values_list("hash", flat=True).first()
    if found is None and anchor_id > last_id:
        return (
            f"the chain ends at event {last_id}, before the anchored event {anchor_id}: "
            "the newest events were removed (truncated)"
        ), ""
    if found is None:
        return f"the anchored event {anchor_id} is missing from the chain", ""
    if found != anchor_hash:
        return (
            f"event {anchor_id} does not have the anchored hash: events from there on were removed and "
            "replaced, or rewritten"
        ), ""
    return "", ""


# -- the scheduled anchors (beat) ------------------------------------------------------------------


def anchor_path() -> Path:
    """The file the anchor task appends to (CONSOLE_AUDIT_ANCHOR_DIR/anchors.jsonl)."""
    return Path(settings.CONSOLE_AUDIT_ANCHOR_DIR) / ANCHOR_FILE


def _hint() -> str:
    return (
        f"check that Celery beat runs (the anchor task runs every {settings.CONSOLE_AUDIT_ANCHOR_EVERY_S:g} s) "
        f"and that the worker can write to {settings.CONSOLE_AUDIT_ANCHOR_DIR}"
    )


def _latest_line(path: Path) -> bytes | None:
    """The file's last complete line (None when it has none). A last line without its newline is a write
    that was cut short and is left out."""
    with path.open("rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        start = max(0, size - _TAIL_BYTES)
        fh.seek(start)
        tail = fh.read()
    lines = tail.rpartition(b"\n")[0].split(b"\n")
    if start > 0:
        lines = lines[1:]  # may begin mid-line
    lines = [line for line in lines if line.strip()]
    return lines[-1] if lines else None


def check_latest() -> AnchorCheck:
    """The chain against the latest line of the anchor file: ok, warning or failure, with what to say."""
    path = anchor_path()
    try:
        line = _latest_line(path)
    except FileNotFoundError:
        return AnchorCheck(
            "warning",
            f"no anchor file at {path} yet, so removing the newest events cannot be detected; {_hint()}",
            str(path),
        )
    except OSError as exc:
        return AnchorCheck(
            "warning", f"the anchor file {path} cannot be read ({exc.strerror or exc}); {_hint()}", str(path)
        )
    if line is None:
        return AnchorCheck("warning", f"the anchor file {path} holds no anchor yet; {_hint()}", str(path))
    try:
        data = _parse(line.decode("utf-8"), signed=True)
    except (UnicodeDecodeError, AnchorError) as exc:
        return AnchorCheck(
            "failure",
            f"the latest anchor in {path} is not a signed anchor ({exc}): the anchor file was altered, or "
            "written under another AUDIT_HMAC_KEY",
            str(path),
        )
    found = AnchorCheck("ok", "", str(path), data["id"], data["hash"], str(data["anchored_at"]))
    what = f"event {found.anchor_id}, anchored at {found.anchored_at} in {path}"
    problem, note = anchor_problem(data["id"], data["hash"])
    if problem:
        return _with(found, "failure", f"the chain does not hold the latest anchor ({what}): {problem}")
    if note:
        return _with(found, "warning", f"the latest anchor ({what}) was not checked: {note}")
    behind = _unanchored_too_long(data["id"])
    if behind:
        return _with(found, "warning", f"the chain holds the latest anchor ({what}), but {behind}; {_hint()}")
    return _with(found, "ok", f"the chain holds the latest anchor ({what})")


def _with(check: AnchorCheck, level: str, message: str) -> AnchorCheck:
    return AnchorCheck(level, message, check.path, check.anchor_id, check.anchor_hash, check.anchored_at)


def _unanchored_too_long(anchor_id: int) -> str:
    """Why the anchor task looks stuck: the first event after the anchor is older than two intervals."""
    every = float(settings.CONSOLE_AUDIT_ANCHOR_EVERY_S)
    first = AuditEvent.objects.filter(pk__gt=anchor_id).order_by("pk").values_list("pk", "created_at").first()
    if first is None or timezone.now() - first[1] <= timedelta(seconds=2 * every):
        return ""
    return f"event {first[0]} of {first[1].isoformat()} is not anchored yet"


def append_anchor(check_chain: Callable[[], Any]) -> AnchorWrite:
    """Beat's step: check the chain and append its signed head to the anchor file when the head moved.

    ``check_chain`` is the whole-chain check (``chain.check_chain``; passed in because the chain's
    status reads this module). Refused (nothing written) when the check fails, the latest anchor's
    included: anchoring a truncated chain, or writing past a tampered line, would hide it. Never raises
    for the file: a directory that cannot be written is logged once per process and shows on the audit
    page as a warning.
    """
    anchor = head_anchor()  # read before the check, so the check covers the event anchored
    status = check_chain()
    if not status.ok:
        return _problem("refused", f"not anchoring the audit chain: {status.reason}")
    latest = status.anchor_check
    if latest is not None and (latest.anchor_id, latest.anchor_hash) == (anchor["id"], anchor["hash"]):
        return AnchorWrite("unchanged", f"the latest anchor already names the head (event {anchor['id']})")
    path = anchor_path()
    try:
        _append(path, json.dumps(anchor, sort_keys=True) + "\n")
    except OSError as exc:
        return _problem("unwritable", f"cannot write the audit anchor to {path}: {exc}")
    _logged["last"] = ""
    return AnchorWrite("written", f"anchored the audit chain at event {anchor['id']} in {path}")


def _problem(outcome: str, message: str) -> AnchorWrite:
    if _logged["last"] != message:
        log.error("%s", message)
        _logged["last"] = message
    return AnchorWrite(outcome, message)


def _append(path: Path, text: str) -> None:
    """Append one line with one write (O_APPEND): lines already there are never rewritten."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            text = "\n" + text  # end a line an earlier write left unfinished
        data = text.encode()
        if os.write(fd, data) != len(data):
            raise OSError(f"only part of the anchor line was written to {path}")
        os.fsync(fd)
    finally:
        os.close(fd)
