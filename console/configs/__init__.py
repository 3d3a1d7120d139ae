"""Topic and broker configs: describe with sources and defaults, incremental alter with a dry run.

``actions`` holds all of it (permission → validate → audit → gateway).
"""

__all__ = ["actions"]
