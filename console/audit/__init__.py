"""The audit trail: the hash chain's only writer, reviewers' search and export.

``store`` records events (each hash keyed with AUDIT_HMAC_KEY) and walks the chain; ``review``
searches and shows what a reader may see, ``export`` streams it out; ``marker`` keeps the signed
verified-up-to marker the chain check (console/integrity) starts from; ``anchor`` writes and checks
the head saved for an external witness; ``archive`` exports and prunes the oldest events.
``accounts`` records log-ins, log-outs, failed log-ins and every change made in Django's admin;
``refusals`` records refused changes (outcome "refused", with the reason); ``outcomes`` the
"requested" event of a change sent to Kafka and its outcome (nothing lost in between);
``recorded`` saves or deletes a row of the console's own settings and appends its event in one
transaction; ``audit_names`` names the trail's own actions and the accounts' (each area names its
actions in its own ``audit_names``).
"""

__all__ = [
    "accounts",
    "anchor",
    "archive",
    "audit_names",
    "export",
    "marker",
    "outcomes",
    "recorded",
    "refusals",
    "review",
    "store",
]
