"""The audit chain's integrity for reviewers: the whole-chain check (audit page, ``audit_anchor``,
metrics), the full re-verification on a worker (the ``audit.verify`` Operation kind) and the alarm a
broken chain raises on the notification channels.

It sits above ``console/audit`` (which records and walks the chain) because it uses the Operation
runner and notifications, which themselves record audit events."""
