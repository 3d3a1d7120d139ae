"""ACLs: list, change (deletes before adds), preview deletes by filter, effective access.

``core`` is the pure part (parse, validate: no I/O) and ``authorizer`` decides effective access as
Kafka's StandardAuthorizer does (pure too); ``actions`` checks access, calls the gateway and audits;
``held`` declares the held ACL change (change control).
"""

__all__ = ["actions", "authorizer", "core", "held"]
