"""Change windows: per-cluster freeze windows (no changes, except break glass) and maintenance
windows, one-off or weekly in a named time zone, and the cluster's "changes only in maintenance
windows" rule.

``core`` (pure: which window is in force at a moment, the next moment a change may run, the
calendar's occurrences), ``guard`` (the windows of a cluster read as ``core.Spec`` and the one
refusal, ``ChangeWindowClosed``, that change control raises on every path), ``actions`` (add and
end a window, the cluster's rule: admins, audited), ``reads`` (lists and the calendar),
``audit_names``. Change control (console/changes: the gate, the door, scheduled runs) builds on
this package, never the other way.
"""

__all__ = ["actions", "audit_names", "core", "guard", "reads"]
