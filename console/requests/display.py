"""How a request's payload reads on its page: values, not Python reprs (pure, no I/O).

``shown_payload`` is the payload as it may leave the server (the API, the pages, the command line,
the audit trail): a held change keeps a secret encrypted under a key ``<name>_encrypted`` (a SCRAM
password, a sensitive config's value); shown, that is ``<name>: "set"`` and never the ciphertext.

A consumer group reset reads as its group, mode, scope and totals (``group_reset_rows``) and its
attached dry run as a table (``dry_run_rows``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.formatting import config_text

LABELS = {
    "name": "Topic",
    "topic": "Topic",
    "partitions": "Partitions",
    "replication_factor": "Replication factor",
    "total_count": "Partitions (new total)",
    "configs": "Configs",
    "changes": "Config changes",
    "binding": "ACL binding",
    "bindings": "ACL bindings",
}
BINDING_ORDER = (
    "principal",
    "permission_type",
    "operation",
    "resource_type",
    "pattern_type",
    "resource_name",
    "host",
)


ENCRYPTED = "_encrypted"
SECRET_SHOWN = "set"  # what is shown of an encrypted value (the review says "password: set" too)
# what an encrypted key is called when shown, by request kind (otherwise: the key without "_encrypted")
SECRET_NAMES = {("change.scram", "value_encrypted"): "password"}


def shown_payload(kind: str, payload: Any) -> Any:
    """A copy of ``payload`` with every encrypted value replaced by the word ``set``."""
    if isinstance(payload, Mapping):
        out: dict[str, Any] = {}
        for key, value in payload.items():
            if isinstance(key, str) and key.endswith(ENCRYPTED):
                out[SECRET_NAMES.get((str(kind), key), key[: -len(ENCRYPTED)])] = SECRET_SHOWN
            else:
                out[key] = shown_payload(kind, value)
        return out
    if isinstance(payload, list | tuple):
        return [shown_payload(kind, v) for v in payload]
    return payload


def value_text(value: Any) -> str:
    """One payload value as an operator reads it."""
    if value is None or value == "" or value == {} or value == []:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        if "op" in value and "name" in value:  # a config change
            return _change_text(value)
        if "principal" in value or "resource_type" in value:  # an ACL binding
            keys = [k for k in BINDING_ORDER if k in value] + [k for k in value if k not in BINDING_ORDER]
            return " ".join(f"{k}={value_text(value[k])}" for k in keys)
        return ", ".join(f"{k} = {_config_value(k, v)}" for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return "; ".join(value_text(v) for v in value)
    return str(value)


def _change_text(change: Mapping[str, Any]) -> str:
    op = str(change.get("op", "SET")).upper()
    if op in ("DELETE", "RESET"):
        return f"reset {change['name']} to its default"
    return f"{op.lower()} {change['name']} = {_config_value(str(change['name']), change.get('value'))}"


def _config_value(name: str, value: Any) -> str:
    """A config's value by its key (durations and sizes as they read), other values as ``value_text``."""
    if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
        return config_text(name, value)
    return value_text(value)


def payload_rows(payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, text) per payload key, in the payload's order."""
    return [(LABELS.get(k, k.replace("_", " ").capitalize()), value_text(v)) for k, v in payload.items()]


# -- a consumer group offset reset (``groups.reset_payload`` describes its payload) -------------

MODE_TEXT = {
    "to-earliest": "to the earliest offset (the log start)",
    "to-latest": "to the latest offset (the log end)",
    "to-datetime": "to a time",
    "to-offset": "to an offset",
    "shift-by": "shift by",
    "from-file": "from a file",
}


def _reset_mode(reset: Mapping[str, Any]) -> str:
    mode = str(reset.get("mode", ""))
    text = MODE_TEXT.get(mode, mode)
    if mode == "to-datetime":
        return f"{text}: {reset.get('time') or '—'} (epoch ms {value_text(reset.get('value'))})"
    if mode in ("to-offset", "shift-by"):
        return f"{text} {value_text(reset.get('value'))}"
    if mode == "from-file":
        return f"{text} ({len(reset.get('file_offsets') or [])} partitions)"
    return text


def _reset_scope(reset: Mapping[str, Any]) -> str:
    if reset.get("mode") == "from-file":
        return "the partitions the file names"
    scope, topic = reset.get("scope"), reset.get("topic") or "—"
    if scope == "topic":
        return f"topic {topic} (all its partitions)"
    if scope == "partitions":
        return f"partitions {', '.join(map(str, reset.get('partitions') or []))} of topic {topic}"
    return "all topics of the group (every partition with a committed offset)"


def group_reset_rows(payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of a reset request: what, how, and the dry run's totals."""
    reset = payload.get("reset") if isinstance(payload.get("reset"), Mapping) else {}
    run = payload.get("dry_run") if isinstance(payload.get("dry_run"), Mapping) else {}
    rows = [
        ("Consumer group", value_text(payload.get("group"))),
        ("Reset", _reset_mode(reset)),
        ("Scope", _reset_scope(reset)),
        ("As kafka-consumer-groups", f"--reset-offsets {value_text(reset.get('command'))}"),
        ("Partitions", f"{value_text(run.get('partitions'))} ({value_text(run.get('changed'))} change)"),
        ("Total lag", f"{value_text(run.get('lag_before'))} → {value_text(run.get('lag_after'))}"),
    ]
    if run.get("members"):
        rows.append(("At the dry run", str(run["members"])))
    rows.append(("Plan SHA-256", value_text(payload.get("plan_sha256"))))
    return rows


def dry_run_rows(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The attached dry run, one dict per partition (current → new, lag before → after)."""
    run = payload.get("dry_run") if isinstance(payload.get("dry_run"), Mapping) else {}
    columns = run.get("columns") or []
    out = []
    for raw in run.get("rows") or []:
        if not isinstance(raw, list | tuple) or len(raw) != len(columns):
            continue
        row = dict(zip(columns, raw, strict=True))
        row["changes"] = row.get("current") != row.get("new")
        out.append(row)
    return out
