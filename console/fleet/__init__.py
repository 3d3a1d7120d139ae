"""The fleet: every cluster the caller may see, together.

``search`` (topics, consumer groups and ACL principals by name across clusters, from the snapshots).
"""

__all__ = ["search"]
