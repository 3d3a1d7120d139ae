"""The topic list's config columns: which configs it shows, and reading them for a cold first page.

``ConfigPrefetch`` reads the default first page's configs while the gateway packs a fresh
metadata fetch (``reads.list_topics``); ``list_configs`` keeps the list's columns of a
DescribeConfigs answer.
"""

from __future__ import annotations

import threading

from console.clusters.actions import gateway_for
from console.kafka import ConfigResource, KafkaOperationError
from console.kafka.cluster import INTERNAL_TOPICS

LIST_CONFIG_KEYS = ("cleanup.policy", "retention.ms", "min.insync.replicas")


class ConfigPrefetch:
    """The default first page's configs, read on a thread while the gateway packs the metadata.

    The first page by name is the first names of the fetch (and up to the few internal topics it
    hides): the DescribeConfigs goes out as soon as the names are known, so Kafka answers it while
    this process packs 20,000 topics instead of after. What it reads goes into the snapshot's
    config cache; anything it did not get, ``_with_configs`` reads as usual.
    """

    def __init__(self, cluster, count: int) -> None:
        self.gateway = gateway_for(cluster)
        self.count = count + len(INTERNAL_TOPICS)
        self.thread: threading.Thread | None = None
        self.got: dict[str, dict[str, str | None]] = {}

    def start(self, names: list[str]) -> None:
        wanted = names[: self.count]
        if wanted:
            self.thread = threading.Thread(
                target=self._read, args=(wanted,), name="topic-configs", daemon=True
            )
            self.thread.start()

    def _read(self, names: list[str]) -> None:
        try:
            got = self.gateway.describe_configs(
                [ConfigResource("TOPIC", n) for n in names],
                include_documentation=False,
                keys=list(LIST_CONFIG_KEYS),
            )
        except KafkaOperationError:
            return  # the page reads them itself
        self.got = list_configs(got)

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


def list_configs(got: dict) -> dict[str, dict[str, str | None]]:
    """The list's columns of a DescribeConfigs answer (asked with ``keys=LIST_CONFIG_KEYS``: Kafka
    answers those entries only, not the topic's ~40, so less to send and decode)."""
    return {
        res.name: {k: entries[k].value for k in LIST_CONFIG_KEYS if k in entries}
        for res, entries in got.items()
        if not isinstance(entries, KafkaOperationError)
    }
