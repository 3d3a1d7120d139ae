"""Topic search (substring and regex over 20,000 names, warm cache) vs the fastest raw Metadata read.

Same estate as bench_topic_list (the sandbox in its own process). Console: a substring search and
a regex search, each a full page view; the gated figure is the slower one's median. Floor: the
faster of confluent-kafka ``list_topics()`` and a full kafka-python ``MetadataRequest`` (collector
paused as the console pauses it around its fetch). GC: setup frozen for both sides; 7 alternating
runs, min / median / max printed.
Prints ``RESULT topic_search ratio=<console/floor> goal<=0.2`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_topic_list import against_metadata_read  # noqa: E402
from bench.harness import get_ok  # noqa: E402

GOAL = 0.2


def searches(client, url: str) -> dict:
    """The two console sides; the slower one's median is gated."""
    return {
        "console substring search": lambda: get_ok(client, url, q="topic-19"),
        "console regex search": lambda: get_ok(client, url, q=r"topic-1\d{3}7$", regex="on"),
    }


def main() -> None:
    against_metadata_read("topic_search", GOAL, searches)


if __name__ == "__main__":
    main()
