"""Client quotas (KIP-546): users', client ids' and IPs' quotas listed, the quota that applies to a
client, and changes to them - authorised, held by change control, audited.

``core`` (pure: entities and their names, Kafka's keys and values checked, the diff, the effective
quota by Kafka's precedence), ``reads`` (the list with its filter, one entity, the effective quota),
``actions`` (alter, with Kafka's validate-only as the dry run), ``held`` (the ``quota.alter`` policy
kind and its held kind), ``audit_names`` (its action names).
"""

__all__ = ["actions", "audit_names", "core", "held", "reads"]
