"""Self-service requests: submit within a namespace, four-eyes decide, execute on a worker.

``actions`` (submit, approve, reject, cancel, list, the auto-approve rule), ``approvals`` (four eyes
counted one way for requests and held changes: distinct approvers of the reviewed digest, never the
requester, as many as the change-control policy asks for the kind; what an Approve did), ``checks`` (namespace,
policy and Kafka validate-only per kind), ``display`` (a payload as the request page shows it), ``notify`` (in-app and e-mail), ``worker`` (the
``request.execute`` kind, running the change through the owning area's action), ``kinds`` (the kinds
offered, ``group.offsets.reset`` included; its payload is the groups area's ``reset_payload``).
"""

__all__ = ["actions", "approvals", "checks", "display", "kinds", "notify", "worker"]
