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


def sandbox_fixture(scope: str = "session", **kwargs: Any) -> Callable[..., Any]:
    """Build a pytest fixture yielding a running sandbox (import pytest lazily)."""
    import pytest

    @pytest.fixture(scope=scope)  # type: ignore[misc]
    def _fixture() -> Iterator[SandboxCluster]:
        with running_sandbox(**kwargs) as cluster:
            yield cluster

    return _fixture
