"""ACL list, first page with 50,000 bindings vs the fastest raw ``DescribeAcls``.

Sandbox: 3 brokers holding 50,000 bindings (5,000 principals x 10 topics), in a process of its own.
Console side: the whole page view (Django test client: middleware, auth, service, gateway
DescribeAcls decoded with kafka-python, grouping and counts, template) for the first page grouped
by principal. Raw floors on warmed clients, both returning all 50,000 bindings:

* kafka-python's ``DescribeAclsRequest`` (match everything) through kafka-python's own client,
  decoded into its response objects (the decoder the console uses);
* confluent-kafka ``AdminClient.describe_acls(<match everything>)`` (builds an ``AclBinding``
  object per binding).

The floor is the one with the lower median in this run (printed). GC: setup frozen for both
sides; the collector paused for the raw calls, as the console pauses it while it reads, counts and
sorts the bindings (the page's render runs with it on). 7 alternating runs.
Prints ``RESULT acl_list ratio=<console/floor> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import compare, console_on, gate, gc_paused, get_ok  # noqa: E402
from bench.raw_clients import KpRaw, confluent_admin  # noqa: E402

PRINCIPALS = 5_000
TOPICS_PER_PRINCIPAL = 10
BINDINGS = PRINCIPALS * TOPICS_PER_PRINCIPAL
GOAL = 1.5


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


def confluent_raw(bootstrap: str):
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    admin = confluent_admin(bootstrap)
    everything = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )

    def raw() -> int:
        return len(admin.describe_acls(everything, request_timeout=60).result())

    return raw


def kafka_python_raw(bootstrap: str):
    from kafka.protocol.admin import DescribeAclsRequest

    kp = KpRaw(bootstrap)
    request = dict(
        resource_type_filter=1,  # ANY
        resource_name_filter=None,
        pattern_type_filter=1,  # ANY
        principal_filter=None,
        host_filter=None,
        operation=1,  # ANY
        permission_type=1,  # ANY
    )

    def raw() -> int:
        response = kp.send(DescribeAclsRequest(**request))
        assert response.error_code == 0, response
        return sum(len(r.acls) for r in response.resources)

    return raw


def main() -> None:
    with console_on(build_sandbox) as (sandbox, client, cluster):
        # The collector paused for the raw calls, as the console pauses it while it reads and
        # groups the bindings (console.acls.actions.list_acls).
        floors = {
            "raw kafka-python DescribeAcls": gc_paused(kafka_python_raw(sandbox.bootstrap_servers)),
            "raw confluent describe_acls": gc_paused(confluent_raw(sandbox.bootstrap_servers)),
        }
        for name, fn in floors.items():
            got = fn()
            if got != BINDINGS:
                raise SystemExit(f"{name} returned {got} bindings, expected {BINDINGS}")
        url = f"/c/{cluster.name}/acls/"
        ratio = compare(
            {"console first page": lambda: get_ok(client, url)},
            floors,
            note=f"bindings={BINDINGS} principals={PRINCIPALS}",
        )
    gate("acl_list", ratio, GOAL)


if __name__ == "__main__":
    main()
