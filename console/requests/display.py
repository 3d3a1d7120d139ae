"""How a request's payload reads on its page: values, not Python reprs (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
        return ", ".join(f"{k} = {value_text(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return "; ".join(value_text(v) for v in value)
    return str(value)


def _change_text(change: Mapping[str, Any]) -> str:
    op = str(change.get("op", "SET")).upper()
    if op in ("DELETE", "RESET"):
        return f"reset {change['name']} to its default"
    return f"{op.lower()} {change['name']} = {value_text(change.get('value'))}"


def payload_rows(payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, text) per payload key, in the payload's order."""
    return [(LABELS.get(k, k.replace("_", " ").capitalize()), value_text(v)) for k, v in payload.items()]
