"""ACL list, first page with 50,000 bindings vs a bare confluent-kafka ``describe_acls()``.

Sandbox: 3 brokers holding 50,000 bindings (5,000 principals x 10 topics), started in-process.
The console side is the whole page view (Django test client: middleware, auth, service, gateway
DescribeAcls, grouping and counts, template) for the first page grouped by principal; the raw side
is ``AdminClient.describe_acls(<match everything>)`` on a warmed client. Medians of interleaved runs.
Prints ``RESULT acl_list ratio=<console/raw> goal<=1.5`` last.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_topic_list import compare, get_ok, setup_console  # noqa: E402

PRINCIPALS = 5_000
TOPICS_PER_PRINCIPAL = 10
BINDINGS = PRINCIPALS * TOPICS_PER_PRINCIPAL


def build_sandbox():
    from sandbox.cluster import SandboxCluster
    from sandbox.state import AclBinding

    cluster = SandboxCluster(brokers=3, controllers=1, port=0, speed=0, seed="bench-acls")
    cluster.start()
    topic, literal, allow, read, write = 2, 3, 3, 3, 4
    with cluster.state.lock:
        for p in range(PRINCIPALS):
            for t in range(TOPICS_PER_PRINCIPAL):
                cluster.state.acls.append(
                    AclBinding(
                        topic,
                        f"bench.topic-{t:02d}",
                        literal,
                        f"User:app-{p:05d}",
                        "*",
                        read if t % 2 else write,
                        allow,
                    )
                )
    return cluster


def raw_admin(bootstrap: str):
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.list_topics(timeout=60)
    everything = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    return lambda: admin.describe_acls(everything, request_timeout=60).result()


def main() -> None:
    sandbox = build_sandbox()
    try:
        client, cluster = setup_console(sandbox.bootstrap_servers)
        raw = raw_admin(sandbox.bootstrap_servers)
        got = len(raw())
        if got != BINDINGS:
            raise SystemExit(f"raw describe_acls returned {got} bindings, expected {BINDINGS}")
        url = f"/c/{cluster.name}/acls/"
        ours, theirs = compare(lambda: get_ok(client, url), raw)
        print(
            f"bindings={BINDINGS} principals={PRINCIPALS} console_first_page_s={ours:.3f} raw_describe_acls_s={theirs:.3f}"
        )
    finally:
        sandbox.shutdown()
    print(f"RESULT acl_list ratio={ours / theirs:.3f} goal<=1.5")


if __name__ == "__main__":
    main()
