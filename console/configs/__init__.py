"""Topic and broker configs: describe with sources and defaults, incremental alter with a dry run.

``plan`` is the pure part (the per-key diff, display labels); ``actions`` reads and alters
(permission → validate → audit → gateway); ``held`` declares the held config change (change control).
"""

__all__ = ["actions", "held", "plan"]
