"""The KRaft metadata quorum: the quorum page's reads (``actions``), per-controller configs and log
levels (``controllers``, KIP-919), and the KRaft lifecycle: ``core`` (the rules as plain data: a voter
change that keeps the majority, a broker that may be unregistered, the input checks), ``features``
(UpdateFeatures with Kafka's validate-only as the dry run), ``voters`` (AddRaftVoter / RemoveRaftVoter,
KIP-853), ``unregister`` (UnregisterBroker), ``held`` (their policy and held kinds) and ``audit_names``.
"""

__all__ = ["actions", "audit_names", "controllers", "core", "features", "held", "unregister", "voters"]
