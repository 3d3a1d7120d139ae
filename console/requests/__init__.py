"""Self-service requests: submit within a namespace, four-eyes decide, execute on a worker.

``actions`` (submit, approve, reject, cancel, list, the auto-approve rule), ``approvals`` (four eyes
counted one way for requests and held changes: distinct approvers of the reviewed digest, never the
requester, as many as the change-control policy asks for the kind; what an Approve did), ``checks`` (the
requester policy each area declares for its held kinds: namespaces, console policy, Kafka validate-only),
``display`` (a payload as the request page shows it), ``notify`` (in-app and e-mail), ``worker`` (the
``request.execute`` kind: a request or held change runs through its held kind, ``changes.kinds.run``),
``kinds`` (the request kinds offered; each is a held kind asked for by a requester).
"""

__all__ = ["actions", "approvals", "checks", "display", "kinds", "notify", "worker"]
