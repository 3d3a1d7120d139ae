"""Transactions (KIP-664), as ``kafka-transactions.sh`` shows and closes them: the cluster's
transactions (paged), one transactional id, a partition's producers, *hanging* transactions found
as ``find-hanging`` finds them, and an admin's abort of one by its start offset (guarded, audited,
held).

``core`` (pure: filters, rows, the hanging rule, the abort's target), ``reads`` (the list, describe,
producers, find-hanging), ``actions`` (the abort), ``held`` (the ``transaction.abort`` policy kind
and its held kind ``change.txn_abort``), ``audit_names`` (its action names).
"""

__all__ = ["actions", "audit_names", "core", "held", "reads"]
