"""The audit action names of the ACLs area; stored as written.

One change (deletes, then creates) is requested as ``acl.change``; its outcome events are
``acl.delete`` and ``acl.create``, one for each half that had bindings.
"""

from __future__ import annotations

ACL_CHANGE = "acl.change"
ACL_DELETE = "acl.delete"
ACL_CREATE = "acl.create"
