"""Topics: list and detail, create (one or a batch), delete, add partitions, under the console policy.

Open ``reads`` for the list and detail pages, ``actions`` for create and add partitions,
``delete`` for the typed-confirmation delete, ``assignment`` to read a typed replica assignment (the
page's format or kafka-topics' ``1:2,2:3``; pure), ``batch`` to parse a pasted YAML/JSON/CSV batch
(pure), ``policy`` for the console's create/alter rules (pure), ``namespaces`` for what a topic-name
prefix asks of a new topic (required configs and defaults; pure), ``cache`` for the short-lived
metadata snapshot every topic read starts from, ``held`` for the held topic actions (deletion,
creation, partition increase) change control reviews and runs.
"""

__all__ = [
    "actions",
    "assignment",
    "batch",
    "cache",
    "confirm",
    "delete",
    "held",
    "namespaces",
    "policy",
    "reads",
]
