"""Brokers: per broker its rack, replicas, leaders, under-replicated partitions, log dirs and
throttles in effect, and the partitions it hosts (kafbat#1253).

Open ``reads`` for the list and detail pages (read-only: the area changes nothing on Kafka; a
broker's configs are changed on the configs pages).
"""

__all__ = ["reads"]
