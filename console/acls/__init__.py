"""ACLs: list, change (deletes before adds), preview deletes by filter, effective access.

``core`` is the pure part (parse, validate, match, evaluate: no I/O); ``actions`` checks access,
calls the gateway and audits.
"""

__all__ = ["actions", "core"]
