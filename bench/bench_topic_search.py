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

from bench.bench_topic_list import build_sandbox, raw_metadata_floors  # noqa: E402
from bench.harness import RemoteSandbox, alternate, freeze, gate, get_ok, setup_console, teardown  # noqa: E402

GOAL = 0.2


def main() -> None:
    sandbox = RemoteSandbox(build_sandbox)
    try:
        client, cluster = setup_console(sandbox.bootstrap_servers)
        floors = raw_metadata_floors(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/"
        get_ok(client, url)
        freeze()
        m = alternate(
            {
                "console substring search": lambda: get_ok(client, url, q="topic-19"),
                "console regex search": lambda: get_ok(client, url, q=r"topic-1\d{3}7$", regex="on"),
                **floors,
            }
        )
        m.report()
        floor = m.fastest(floors)
        ours = max(("console substring search", "console regex search"), key=m.median)
        print(f"floor: {floor}; gated console side: {ours}")
        print(m.ratios(ours, floor))
        ratio = m.median(ours) / m.median(floor)
    finally:
        teardown(sandbox)
    gate("topic_search", ratio, GOAL)


if __name__ == "__main__":
    main()
