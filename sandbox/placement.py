"""Default replica placement for new topics and partitions (rack-aware round robin)."""

from __future__ import annotations

from sandbox.state import ClusterState


class PlacementError(ValueError):
    """Not enough live brokers for the requested replication factor."""


def place_replicas(
    state: ClusterState, partitions: int, replication_factor: int, start_partition: int = 0
) -> list[list[int]]:
    """Assign replicas like Kafka's striped placer: spread leaders, alternate racks.

    Brokers are ordered by alternating racks so consecutive replicas land on different racks
    when racks exist; the starting broker rotates with the number of existing topics so that
    leaders of successive topics spread over the cluster.
    """
    live = state.live_brokers()
    if replication_factor > len(live):
        raise PlacementError(
            f"Unable to replicate the partition {replication_factor} time(s): The target "
            f"replication factor of {replication_factor} cannot be reached because only "
            f"{len(live)} broker(s) are registered."
        )
    ordered = _rack_alternating(state, live)
    n = len(ordered)
    start = len(state.topics) % n if n else 0
    out = []
    for p in range(start_partition, start_partition + partitions):
        first = (start + p) % n
        shift = 1 + (p // n) % max(n - 1, 1)
        reps = [ordered[first]]
        for r in range(1, replication_factor):
            reps.append(ordered[(first + shift + r - 1) % n])
        if len(set(reps)) != len(reps):  # fall back to plain striping
            reps = [ordered[(first + r) % n] for r in range(replication_factor)]
        out.append(reps)
    return out


_orders: dict[tuple[tuple[int, str], ...], list[int]] = {}


def _rack_alternating(state: ClusterState, live: list[int]) -> list[int]:
    """Brokers interleaved by rack: r1b1, r2b2, r3b3, r1b4, ... (memoized per broker/rack set)."""
    key = tuple((b, state.brokers[b].rack or "") for b in live)
    if key not in _orders:
        if len(_orders) > 64:
            _orders.clear()
        _orders[key] = _interleave(state, live)
    return _orders[key]


def _interleave(state: ClusterState, live: list[int]) -> list[int]:
    by_rack: dict[str, list[int]] = {}
    for b in live:
        by_rack.setdefault(state.brokers[b].rack or "", []).append(b)
    if len(by_rack) <= 1:
        return live
    racks = sorted(by_rack)
    out: list[int] = []
    i = 0
    while len(out) < len(live):
        for r in racks:
            if i < len(by_rack[r]):
                out.append(by_rack[r][i])
        i += 1
    return out
