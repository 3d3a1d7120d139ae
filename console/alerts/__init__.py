"""Health alerts: built-in rules evaluated every minute on every cluster, and their lifecycle.

Open ``rules`` for the rule table (``RULES``) and a cluster's effective settings of it
(``settings_for``); ``core`` for what the rules find from plain data (pure: measures, thresholds,
lags); ``measure`` for each rule's reads on one cluster; ``evaluate`` for a round (each cluster
bounded in time, on the poll worker's own threads); ``lifecycle`` for firing, updating, resolving and
escalating alerts, their audit events and notifications (silences honoured); ``actions`` for what
people do (acknowledge, silence, rule settings); ``reads`` for the lists.
"""

__all__ = ["actions", "audit_names", "core", "evaluate", "lifecycle", "measure", "reads", "rules"]
