"""Client quota list, first page with 100,000 entities vs the raw ``DescribeClientQuotas``.

Sandbox: 3 brokers holding 100,000 quota entities (50,000 users, 40,000 users with a client id,
10,000 client ids; one to three keys each), in a process of its own. Console side: the whole page
(Django test client: middleware, auth, the area's read, the gateway's DescribeClientQuotas decoded
with kafka-python, ordering by kind and name, the first page of 200 rendered) and the API's first
page. Raw floor on a warmed client: kafka-python's ``DescribeClientQuotasRequest`` (no filter)
through kafka-python's own client, decoded into its response objects (the decoder the console uses).
confluent-kafka has no DescribeClientQuotas. 7 alternating runs.
Prints ``RESULT quota_list ratio=<console/floor> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import list_page_bench  # noqa: E402
from bench.raw_clients import KpRaw  # noqa: E402

USERS, USER_CLIENTS, CLIENTS = 50_000, 40_000, 10_000
ENTITIES = USERS + USER_CLIENTS + CLIENTS
GOAL = 1.5


def build_sandbox():
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=3, controllers=1, port=0, speed=0, seed="bench-quotas")
    cluster.start()
    quotas = cluster.state.client_quotas
    with cluster.state.lock:
        for i in range(USERS):
            quotas[(("user", f"app-{i:06d}"),)] = {"producer_byte_rate": 1048576.0 + i}
        for i in range(USER_CLIENTS):
            quotas[(("client-id", f"c-{i % 7}"), ("user", f"app-{i:06d}"))] = {
                "consumer_byte_rate": 2097152.0,
                "request_percentage": 25.5,
            }
        for i in range(CLIENTS):
            quotas[(("client-id", f"svc-{i:05d}"),)] = {
                "producer_byte_rate": 524288.0,
                "consumer_byte_rate": 524288.0,
                "controller_mutation_rate": 10.0,
            }
        cluster.state.touch()
    return cluster


def kafka_python_raw(bootstrap: str):
    from kafka.protocol.admin import DescribeClientQuotasRequest

    kp = KpRaw(bootstrap)

    def raw() -> int:
        response = kp.send(DescribeClientQuotasRequest(components=[], strict=False))
        assert response.error_code == 0, response
        return len(response.entries)

    return raw


def main() -> None:
    list_page_bench(
        "quota_list",
        GOAL,
        build_sandbox,
        ("raw kafka-python DescribeClientQuotas", kafka_python_raw),
        path="quotas/",
        total=ENTITIES,
        noun="entities",
    )


if __name__ == "__main__":
    main()
