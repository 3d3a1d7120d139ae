"""The audit action names of the topics area; stored as written.

A refusal is recorded under the name of the change it refused (the partition increase is
``topic.partitions.add`` whether it ran or was refused, its dry run ``topic.partitions.validate``).
"""

from __future__ import annotations

TOPIC_CREATE = "topic.create"
TOPIC_CREATE_VALIDATE = "topic.create.validate"
TOPIC_DELETE = "topic.delete"
TOPIC_PARTITIONS_ADD = "topic.partitions.add"
TOPIC_PARTITIONS_VALIDATE = "topic.partitions.validate"
TOPIC_POLICY_UPDATE = "topic_policy.update"
