"""A multi-broker Kafka wire-protocol sandbox for tests, demos and benchmarks (DESIGN D5)."""

from __future__ import annotations

from sandbox.cluster import SandboxCluster

__all__ = ["SandboxCluster"]
