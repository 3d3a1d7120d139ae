"""The only module that knows how a cluster's drift baseline is stored: the state as JSON, compressed
(a few bytes a topic: thousands of topics stay a small row)."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from console.models import Cluster, DriftBaseline


@dataclass(frozen=True)
class Baseline:
    """The previous look: when, the audit id it began after, and the state it found."""

    taken_at: datetime
    audit_mark: int
    state: dict[str, Any]


def encode(state: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(state, separators=(",", ":"), sort_keys=True).encode(), 6)


def decode(blob: bytes | memoryview) -> dict[str, Any]:
    return json.loads(zlib.decompress(bytes(blob)))


def load(cluster: Cluster) -> Baseline | None:
    row = DriftBaseline.objects.filter(cluster=cluster).first()
    if row is None:
        return None
    return Baseline(row.taken_at, row.audit_mark, decode(row.state))


def save(cluster: Cluster, state: dict[str, Any], *, taken_at: datetime, audit_mark: int) -> None:
    """Replace the cluster's baseline (call inside the transaction that records the look's events)."""
    DriftBaseline.objects.update_or_create(
        cluster=cluster,
        defaults={
            "taken_at": taken_at,
            "audit_mark": audit_mark,
            "state": encode(state),
            "topics": len(state.get("topics") or {}),
            "acls": len(state.get("acls") or {}),
        },
    )
