"""Brokers: per broker its rack, replicas, leaders, under-replicated partitions, log dirs and
throttles in effect, and the partitions it hosts (kafbat#1253).

Open ``reads`` for the list and detail pages, ``overview`` for the cluster overview page's figures
(the brokers' states and the topic counts, kept with the metadata snapshot) (read-only: the area changes nothing on Kafka; a
broker's configs are changed on the configs pages), ``query`` for the broker page's query string,
``throttling`` for the throttles in effect per broker, ``figures`` for the counts and log-dir sizes
that need no I/O.
"""

__all__ = ["figures", "overview", "query", "reads", "throttling"]
