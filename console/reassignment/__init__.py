"""Partition reassignment (KIP-455 / KIP-179), throttles and leader elections.

Request side: ``actions`` (read the cluster, preview, start, cancel), ``dry_run`` (the dry run of
Start and what Start may run afterwards, for every door), ``reads`` (a cluster's reassignments for a
door, and whether their figures are current), ``external`` (cancelling
reassignments started outside the console),
``elections`` (preferred/unclean, with its ``election.run`` kind), ``throttles`` (the ledger,
changing the rate), ``janitor`` (owed and foreign throttles), ``queue`` (a paced move's queue, pause
and resume). Paced moves: ``pacing`` (pure: the next batch under N per broker, rates per broker,
which throttles a settled partition gives back), ``takeback`` (giving them back as partitions finish). Pure core: ``planner``, ``intents``,
``balance`` (plans) and ``progress`` (bytes, replica states). Worker side: ``worker`` declares the
``reassignment.execute`` kind, ``poll`` is its move step (and ``poll.kafka_verify``, what Kafka's
own --verify reads, for the CLI), ``finish`` its end (throttles back, elect,
revert, give up). ``held`` declares the held reassignment, throttle change and election (change
control). ``store`` alone knows the row and live-progress encodings; ``audit_names`` the area's audit
action names.
"""

__all__ = [
    "actions",
    "audit_names",
    "balance",
    "dry_run",
    "elections",
    "external",
    "held",
    "intents",
    "janitor",
    "pacing",
    "planner",
    "poll",
    "progress",
    "queue",
    "reads",
    "store",
    "takeback",
    "throttles",
    "worker",
]
