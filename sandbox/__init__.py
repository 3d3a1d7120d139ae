"""Kafka wire-protocol sandbox cluster (see sandbox/README.md)."""
