"""Health alerts: built-in rules evaluated every minute on every cluster, and their lifecycle.

Open ``rules`` for the rule table (``RULES``) and a cluster's effective settings of it
(``settings_for``); ``evaluate`` for one evaluation round of a cluster (what each rule measures,
from the snapshot summary and cheap live reads); ``lifecycle`` for firing, updating, resolving and
escalating alerts, their audit events and notifications (silences honoured); ``actions`` for what
people do (acknowledge, silence, rule settings); ``reads`` for the lists.
"""

__all__ = ["actions", "evaluate", "lifecycle", "reads", "rules"]
