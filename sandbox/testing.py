"""Pytest helpers: ``running_sandbox`` context manager and a fixture factory.

Usage from ``tests/conftest.py``::

    from sandbox.testing import running_sandbox, sandbox_fixture

    kafka_sandbox = sandbox_fixture(scope="session", brokers=3, controllers=3)

or ``with running_sandbox(brokers=3) as cluster: cluster.bootstrap_servers``.
Defaults use ephemeral ports (``port=0``) so parallel runs never clash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sandbox.cluster import SandboxCluster


@contextmanager
def running_sandbox(**kwargs: Any) -> Iterator[SandboxCluster]:
    """Start a SandboxCluster (kwargs go to its constructor; port defaults to 0), stop it after."""
    kwargs.setdefault("port", 0)
    cluster = SandboxCluster(**kwargs)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.shutdown()


def hanging_transaction(
    cluster: SandboxCluster, topic: str, partition: int, records: int = 1, age_ms: int = 0
) -> dict[str, int]:
    """Open a transaction on a partition that the transaction coordinator knows nothing about (Kafka's
    *hanging* transaction, as after a lost coordinator state): ``records`` transactional records from a
    fresh producer id at epoch 0, no marker, stamped ``age_ms`` before now (``kafka-transactions.sh
    find-hanging`` flags one older than ``--max-transaction-timeout``, 15 min by default, so
    ``age_ms=20 * 60_000`` makes one it finds with its defaults). The partition's last stable offset
    stays at its first offset until a WriteTxnMarkers (``kafka-transactions.sh abort``) closes it.
    Returns producer_id, producer_epoch and start_offset (what ``abort --start-offset`` takes)."""
    from sandbox import transactions

    with cluster.state.lock:
        p = cluster.state.partition(topic, partition)
        if p is None or p.leader < 0:
            raise ValueError(f"no partition {topic}-{partition} with a leader")
        return transactions.hang(cluster.state, p, records, age_ms)


def sandbox_fixture(scope: str = "session", **kwargs: Any) -> Callable[..., Any]:
    """Build a pytest fixture yielding a running sandbox (import pytest lazily)."""
    import pytest

    @pytest.fixture(scope=scope)  # type: ignore[misc]
    def _fixture() -> Iterator[SandboxCluster]:
        with running_sandbox(**kwargs) as cluster:
            yield cluster

    return _fixture


def set_log_dir_offline(cluster: SandboxCluster, broker: int, path: str, offline: bool = True) -> None:
    """Mark one of a broker's log dirs offline (a failed disk, as Kafka's LogDirFailureChannel
    leaves it) or back online: DescribeLogDirs answers KAFKA_STORAGE_ERROR for it, and
    AlterReplicaLogDirs into it (or of a replica in it) is refused the same way."""
    with cluster.state.lock:
        node = cluster.state.brokers[broker]
        (node.offline_dirs.add if offline else node.offline_dirs.discard)(path)
