"""The KRaft metadata quorum page and per-controller configs and log levels (KIP-919)."""

__all__ = ["actions", "controllers"]
