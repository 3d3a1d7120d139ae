"""Topic search (substring and regex over 20,000 names, warm cache) vs a bare ``list_topics()``.

Same sandbox as bench_topic_list. The console figure is the slower of a substring search and
a regex search, each a full page view. Prints ``RESULT topic_search ratio=<console/raw> goal<=0.2`` last.
"""

from __future__ import annotations

from bench_topic_list import (
    BROKERS,
    TOPICS,
    build_sandbox,
    compare,
    get_ok,
    raw_admin,
    setup_console,
    teardown,
)


def main() -> None:
    sandbox = build_sandbox()
    try:
        client, cluster = setup_console(sandbox.bootstrap_servers)
        admin = raw_admin(sandbox.bootstrap_servers)
        url = f"/c/{cluster.name}/topics/"
        sub, raw1 = compare(lambda: get_ok(client, url, q="topic-19"), lambda: admin.list_topics(timeout=60))
        rx, raw2 = compare(
            lambda: get_ok(client, url, q=r"topic-1\d{3}7$", regex="on"),
            lambda: admin.list_topics(timeout=60),
        )
        ours, raw = max(sub, rx), min(raw1, raw2)
        print(
            f"topics={TOPICS} brokers={BROKERS} substring_s={sub:.4f} regex_s={rx:.4f} raw_list_topics_s={raw:.3f}"
        )
    finally:
        teardown(sandbox)
    print(f"RESULT topic_search ratio={ours / raw:.3f} goal<=0.2")


if __name__ == "__main__":
    main()
