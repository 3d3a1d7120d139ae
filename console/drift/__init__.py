"""Drift detection: changes made to a cluster outside the console (``kafka-configs.sh``, Terraform,
another console) become audit events of their own.

``observe`` is the telemetry snapshot's hook (``after_snapshot``: read Kafka, compare with the previous
look and with the console's own audited changes, record the rest); ``core`` is the pure comparison;
``store`` keeps each cluster's baseline; ``reads`` lists a cluster's or a topic's recent external
changes for the pages; ``audit_names`` names the event.
"""

__all__ = ["audit_names", "core", "observe", "reads", "store"]
