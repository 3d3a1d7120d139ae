"""Topic list, a later page, warm metadata cache vs the fastest raw full Metadata read.

Same estate as bench_topic_list (20,000 topics x 5 partitions x RF 3, 30 brokers, the sandbox in
its own process). Console side: page 3 of the topic list (Django test client) with the snapshot
cached. Floor: the faster (this run's medians) of confluent-kafka ``list_topics()`` and a full
kafka-python ``MetadataRequest`` on warmed clients, with the collector paused as the console
pauses it around its own fetch. The goal says a cached page costs a fifth of one metadata read.
GC: setup frozen for both sides; 7 alternating runs, min / median / max printed.
Prints ``RESULT topic_list_warm ratio=<console/floor> goal<=0.2`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_topic_list import against_metadata_read  # noqa: E402
from bench.harness import get_ok  # noqa: E402

GOAL = 0.2


def main() -> None:
    against_metadata_read(
        "topic_list_warm",
        GOAL,
        lambda client, url: {"console page 3 (warm)": lambda: get_ok(client, url, page=3)},
        page=3,
    )


if __name__ == "__main__":
    main()
