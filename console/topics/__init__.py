"""Topics: list and detail, create (one or a batch), delete, add partitions, under the console policy.

Open ``reads`` for the list and detail pages, ``actions`` for create and add partitions,
``delete`` for the typed-confirmation delete, ``batch`` to parse a pasted YAML/JSON/CSV batch
(pure), ``policy`` for the console's create/alter rules (pure), ``cache`` for the short-lived
metadata snapshot every topic read starts from, ``held`` for the held topic actions (deletion,
creation, partition increase) change control reviews and runs.
"""

__all__ = ["actions", "batch", "cache", "confirm", "delete", "held", "policy", "reads"]
