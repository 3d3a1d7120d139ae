"""SCRAM users list, first page with 100,000 users vs the raw ``DescribeUserScramCredentials``.

Sandbox: 3 brokers whose state holds 100,000 SCRAM users (every user SCRAM-SHA-512, every third one
SCRAM-SHA-256 too; 4096 to 16384 iterations), in a process of its own. Console side: the whole page
(Django test client: middleware, auth, the area's paged read ``scram.reads.list_page``, the gateway's
DescribeUserScramCredentials decoded with kafka-python, ordered by name, the first page of 200
rendered) and the API's first page. Raw floor on a warmed client: kafka-python's ``DescribeUserScramCredentialsRequest`` (every
user) through kafka-python's own client, decoded into its response objects (the decoder the console
uses). confluent-kafka cannot be the floor: its ``describe_user_scram_credentials()`` refuses an
answer of more than 10,000 users (librdkafka: "DescribeUserScramCredentials response protocol parse
failure: Local: Bad message format" from 10,001 users on; 10,000 work). The console pauses the
cyclic collector around the read's decoding, so the raw side runs with it paused too. 7 alternating
runs.
Prints ``RESULT scram_list ratio=<console/floor> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import list_page_bench  # noqa: E402
from bench.raw_clients import KpRaw  # noqa: E402

USERS = 100_000
GOAL = 1.5


def build_sandbox():
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=3, controllers=1, port=0, speed=0, seed="bench-scram")
    cluster.start()
    salt, stored, server = b"s" * 32, b"k" * 64, b"v" * 64  # never logged in with: only described
    credentials = []
    for i in range(USERS):
        user = f"app-{i:06d}"
        credentials.append(("SCRAM-SHA-512", user, (salt, stored, server, 4096 + i % 12289)))
        if i % 3 == 0:
            credentials.append(("SCRAM-SHA-256", user, (salt[:24], stored[:32], server[:32], 8192)))
    with cluster.state.lock:
        cluster.state.scram_credentials.replace(credentials)
    return cluster


def kafka_python_raw(bootstrap: str):
    from kafka.protocol.admin import DescribeUserScramCredentialsRequest

    kp = KpRaw(bootstrap)

    def raw() -> int:
        response = kp.send(DescribeUserScramCredentialsRequest(users=None))
        assert response.error_code == 0, response
        return len(response.results)

    return raw


def main() -> None:
    def first_page(shown: str) -> str | None:
        if (
            'data-user="app-000000"' in shown
            and 'data-user="app-000199"' in shown
            and "app-000200" not in shown
        ):
            return None
        return "the page's first page is not users app-000000 to app-000199"

    list_page_bench(
        "scram_list", GOAL, build_sandbox,
        ("raw kafka-python DescribeUserScramCredentials", kafka_python_raw),
        path="scram-users/", total=USERS, noun="users", first_page=first_page,
    )  # fmt: skip


if __name__ == "__main__":
    main()
