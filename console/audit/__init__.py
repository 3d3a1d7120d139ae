"""The audit trail: the hash chain's only writer, reviewers' search and export, chain verification.

``store`` records events (each hash keyed with AUDIT_HMAC_KEY) and walks the chain; ``review``
searches and shows what a reader may see, ``export`` streams it out; ``chain`` is the chain's status
(the whole-chain check, made cheap by the signed verified-up-to marker of ``marker``) and the full
re-verify (``audit.verify``, its step in ``worker``); ``anchor`` writes and checks the head saved for
an external witness; ``archive`` exports and prunes the oldest events. ``accounts`` records
log-ins, log-outs, failed log-ins and every change made in Django's admin; ``refusals`` records
refused changes (outcome "refused", with the reason).
"""

__all__ = [
    "accounts",
    "anchor",
    "archive",
    "chain",
    "export",
    "outcomes",
    "refusals",
    "review",
    "store",
    "worker",
]
