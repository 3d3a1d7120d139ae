"""Self-service requests: submit within a namespace, four-eyes decide, execute on a worker.

``actions`` (submit, approve, reject, cancel, list, the auto-approve rule), ``checks`` (namespace,
policy and Kafka validate-only per kind), ``display`` (a payload as the request page shows it), ``notify`` (in-app and e-mail), ``worker`` (the
``request.execute`` kind, running the change through the owning area's action).
"""

__all__ = ["actions", "checks", "display", "notify", "worker"]
