"""The audit trail: the hash chain's only writer, reviewers' search and export, chain verification.

``store`` records events and walks the chain; ``review`` searches and shows what a reader may see,
``export`` streams it out; ``chain`` is the chain's status and the full re-verify
(``audit.verify``, its step in ``worker``).
"""

__all__ = ["chain", "export", "review", "store", "worker"]
