"""The cluster registry: register, change, remove, test a connection; roles per cluster.

``actions`` (registry, overview, and ``gateway_for``: the one way to reach a cluster), ``core`` (which
settings a security protocol and SASL mechanism need), ``credentials`` (reading uploaded certificates,
keys, PKCS#12 files, keytabs and SASL extensions), ``bindings`` (per-cluster roles), ``capabilities``
(what a controller-mode connection offers, KIP-919), ``lookup`` (a cluster by name for a caller: 404 or
403, the getter of every door), ``worker`` (the ``health.check`` kind). Inside:
``secrets`` (where a stored secret may go) and ``probe`` (Test connection).
"""

__all__ = ["actions", "bindings", "capabilities", "confirm", "core", "credentials", "lookup", "worker"]
