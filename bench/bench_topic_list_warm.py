"""Topic list, first page, warm metadata cache vs a bare confluent-kafka ``list_topics()``.

Same sandbox as bench_topic_list (20,000 topics x 5 partitions x RF 3, 30 brokers).
Prints ``RESULT topic_list_warm ratio=<console/raw> goal<=0.2`` last.
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
        ours, raw = compare(lambda: get_ok(client, url, page=3), lambda: admin.list_topics(timeout=60))
        print(f"topics={TOPICS} brokers={BROKERS} console_warm_s={ours:.4f} raw_list_topics_s={raw:.3f}")
    finally:
        teardown(sandbox)
    print(f"RESULT topic_list_warm ratio={ours / raw:.3f} goal<=0.2")


if __name__ == "__main__":
    main()
