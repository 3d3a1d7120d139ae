"""Topic search (substring and regex over 20,000 names, warm cache) against the wire read of the
whole cluster's Metadata.

Same estate as bench_topic_list (the sandbox in its own process; ``BENCH_TOPIC_PARTITIONS=50
BENCH_TOPIC_BROKERS=200`` for 1M partitions). Console: a substring search and a regex search, each
a full page view; the gated figure is the slower one's median. Floor
(``bench_topic_list.wire_floor``): the full Metadata answer read whole off a plain socket, nothing
decoded (a client's decoded read is slower than the console's own C decoding, so no floor);
confluent-kafka's and kafka-python's reads are shown, not gated. GC: setup frozen for both sides; 7
alternating runs, min / median / max printed.
Prints ``RESULT topic_search ratio=<console/wire> goal<=0.2`` last; exit 1 above.

At 100,000 partitions the wire takes ~6 ms, so the goal asks for a 1.2 ms search page - under a
Django page's fixed cost; at 1M partitions (wire ~0.1 s) it asks for ~20 ms.
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
