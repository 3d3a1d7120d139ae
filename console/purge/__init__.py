"""Purging records (KIP-107 DeleteRecords): a topic's partitions' log start moved forward, to an offset,
past a time or to the end, as ``kafka-delete-records.sh`` does - with a dry run, a typed confirmation,
change control and the audit trail.

``core`` (pure: the request checked - offsets, a time, the whole topic, kafka-delete-records' JSON
file - and the plan per partition with the bytes estimate and the groups left below the new start),
``reads`` (the dry run from Kafka's answers), ``actions`` (the purge), ``held`` (the ``records.purge``
policy kind and its held kind ``change.purge``), ``audit_names`` (its action names).
"""

__all__ = ["actions", "audit_names", "core", "held", "reads"]
