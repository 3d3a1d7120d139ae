"""Share groups (KIP-932), as ``kafka-share-groups.sh`` shows and changes them, where the cluster
supports them (``share.version`` >= 1): the list and a group's page (members, per-partition start
offset, log end and lag), resetting a group's start offsets, deleting its offsets of a topic, deleting
the group.

``core`` (pure: lag, input, the reset plan, the members refusal), ``reads`` (support, the list, a group,
the reset's dry run), ``actions`` (reset, delete offsets, delete group: ``group.manage``, refused while
the group has members, audited), ``held`` (the policy kinds and held kinds ``change.share_reset``,
``change.share_offsets_delete``, ``change.share_delete``), ``audit_names``.
"""

__all__ = ["actions", "audit_names", "core", "held", "reads"]
