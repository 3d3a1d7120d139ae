"""The estate as code: a cluster's or a namespace's desired state as a YAML document (topics with
partitions, replication factor and overridden configs; the ACL bindings on them), exported, planned
against the live cluster (a diff per resource, checked by Kafka's validate-only) and applied as one
change held for four eyes.

``core`` the document and the namespace's scope (pure), ``plan`` the diff (pure), ``reads`` the
live state, export and plan (cluster view), ``held`` the held change ``estate.apply`` and its
submission, ``apply`` its run through the topics, configs and ACL areas' own actions.
"""

__all__ = ["apply", "core", "held", "plan", "reads"]
