"""Consumer groups: the list and a group's page, offset resets, deleting groups and their offsets.

Open ``reads`` for the list (search, filters, sort, paging, total lag), a group's members and
per-partition lag, and the groups consuming a topic; ``trend`` for a group's lag over time from
the telemetry snapshots; ``core`` for the reset planner (kafka-consumer-groups --reset-offsets,
pure); ``actions`` for the reset's dry run and execution; ``delete`` for deleting a group or its
offsets of a topic (each authorised and audited); ``held`` for the held reset and deletes (change
control); ``reset_payload`` for a reset's stored payload (the spec, the attached dry run, its digest,
drift from it: pure). ``manage.py kafka groups …`` is console/management/cli/groups.py, as every
area's command line.
"""

__all__ = ["actions", "core", "delete", "held", "reads", "reset_payload", "trend"]
