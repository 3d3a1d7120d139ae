"""Moves between the log dirs of one broker (JBOD, KIP-113 AlterReplicaLogDirs), as
``kafka-reassign-partitions.sh`` does them for a plan's ``log_dirs`` - with a dry run, an optional
intra-broker throttle taken back exactly, progress per replica, change control and the audit trail.

``core`` (pure: the form's and the plan file's moves, their check against what the brokers report,
each move's progress), ``reads`` (a broker's dirs and the moves in progress, the dry run),
``actions`` (start a move: the ``logdir.move`` Operation), ``worker`` (its steps), ``held`` (the
``logdir.move`` policy kind and its held kind ``change.logdir_move``), ``audit_names``.
"""

__all__ = ["actions", "audit_names", "core", "held", "reads", "worker"]
