"""Self-service requests: submit within a namespace, four-eyes decide, execute on a worker.

``actions`` (submit, approve, reject, cancel, list, the auto-approve rule, and ``decide``: the review
queue's Approve/Reject for requests and held changes), ``checks`` (the requester policy each area
declares for its held kinds: namespaces, console policy, Kafka validate-only), ``display`` (a payload
as the request page shows it), ``worker`` (the ``request.execute`` kind: a request or held change runs
through its held kind, ``changes.kinds.run``), ``kinds`` (the request kinds offered; each is a held
kind asked for by a requester).

It builds on change control's review queue (``console/changes``: ``queue`` - timeline, one-winner
decision, labels; ``approvals`` - four eyes counted one way for requests and held changes;
``notify`` - in-app and e-mail), never the other way.
"""

__all__ = ["actions", "checks", "display", "kinds", "worker"]
