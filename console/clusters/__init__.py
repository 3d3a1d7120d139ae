"""The cluster registry: register, change, remove, test a connection; roles per cluster.

``actions`` (registry, overview, and ``gateway_for``: the one way to reach a cluster), ``bindings``
(per-cluster roles), ``capabilities`` (what a controller-mode connection offers, KIP-919), ``worker``
(the ``health.check`` kind).
"""

__all__ = ["actions", "bindings", "capabilities", "worker"]
