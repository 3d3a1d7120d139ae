"""The fleet: every cluster the caller may see, together.

``home`` (the fleet home's rows: every visible cluster from its summary row, which
``telemetry.summary`` writes, with its running operations and changes waiting for approval; the
page, the API and ``manage.py kafka fleet`` call it), ``search`` (topics, consumer groups and ACL
principals by name across clusters, from the snapshots).
"""

__all__ = ["home", "search"]
