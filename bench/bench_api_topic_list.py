"""The API's topic list at 20,000 topics: cold against the wire, warm against the HTML page.

Estate: ``bench_topic_list.build_sandbox`` (20,000 topics x 5 partitions x RF 3 on 30 brokers), in
a process of its own (as a real cluster runs outside the console; ``harness.RemoteSandbox``).

API call: ``GET /api/v1/clusters/<c>/topics/`` through Django's test client with a read-only API
token: middleware, token authentication (a row lookup and a SHA-256), DRF's request/response
cycle, the query's validation, ``topics.reads.list_topics``, the JSON of the first page.

Gated RESULT, cold: the API call with the metadata cache emptied first (``topics.cache.clear()``,
as after TOPIC_METADATA_CACHE_S), so it reads the 20,000 topics' metadata and the page's configs
from Kafka, against the raw Metadata floor (``bench_topic_list.wire_floor``): the same full
Metadata answer read whole off a plain socket, nothing decoded - the bytes the API must receive
(a client's decoded read is slower than the console's own C decoding, so no floor). Shown, not
gated: the page's service call cold (``topics.reads.list_topics`` as the HTML page calls it) and
confluent-kafka's / kafka-python's decoded reads. Goal <= 1.5.

Second goal, warm (snapshot and configs cached): the API call against the HTML topic list page
for the same first page (``GET /c/<c>/topics/``, the browser's door to the same service call),
each timed over REPEAT calls per run; goal <= 1.2 (the API costs no more than the page). Printed as
a goal line before RESULT; exit 1 if missed.

GC: setup (Django, the console's state) frozen with ``gc.freeze()`` before the runs; both sides in
this process, the collector paused around the raw read as the console pauses it around its own.
7 alternating runs for each comparison (which side goes first alternates); min / median / max and
the per-run ratios printed. Prints ``RESULT api_topic_list ratio=<cold API/wire> goal<=1.5`` last.

At 100,000 partitions the answer crosses loopback in ~6 ms while a cached page costs ~12 ms and the
cold page ~0.1 s (the snapshot of 20,000 topics built from the decoded answer), so the cold goal is
dominated by the console's per-topic work, not by the wire.
"""

from __future__ import annotations

import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.group_setup import profile_top  # noqa: E402
from bench.harness import RemoteSandbox, Runs, alternate, cold, compare, gate, setup_console, teardown  # noqa: E402

RUNS = 7
REPEAT = 20  # warm calls per run: one is a few milliseconds
GOAL = 1.5
WARM_GOAL = 1.2


def main() -> None:
    from bench.bench_topic_list import PARTITIONS, TOPICS, build_sandbox, client_reads, wire_floor

    os.environ["TOPIC_METADATA_CACHE_S"] = "86400"  # the snapshot stays warm unless a side empties it
    os.environ["TOPIC_CONFIG_CACHE_S"] = "86400"
    started = time.perf_counter()
    sandbox = RemoteSandbox(build_sandbox)
    try:
        browser, cluster = setup_console(sandbox.bootstrap_servers)
        logging.getLogger("kafka").setLevel(logging.ERROR)
        from django.contrib.auth import get_user_model
        from django.test import Client

        from console.identity import tokens
        from console.topics import reads

        actor = get_user_model().objects.get(username="bench")
        secret = tokens.create_token(actor=actor, name="bench", scope="read", days=1).secret
        api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
        url = f"/api/v1/clusters/{cluster.name}/topics/"
        page_url = f"/c/{cluster.name}/topics/"
        print(
            f"sandbox (own process, {TOPICS:,} topics x {PARTITIONS}) + console in {time.perf_counter() - started:.1f}s"
        )

        def api_call() -> None:
            response = api.get(url)
            if response.status_code != 200:
                raise SystemExit(f"{url} answered {response.status_code}: {response.content[:300]!r}")

        def html_page() -> None:
            if browser.get(page_url).status_code != 200:
                raise SystemExit("the topic list page did not answer 200")

        def service_call() -> None:
            reads.list_topics(actor=actor, cluster=cluster)  # the topic list page's call, default query

        api_call()  # the snapshot, the first page's configs, connections
        page = reads.list_topics(actor=actor, cluster=cluster)
        body = api.get(url).json()
        assert page.cluster_topics == TOPICS and body["count"] == page.total == TOPICS, (
            page.total,
            body["count"],
        )
        assert [t["name"] for t in body["results"]] == [i.row.name for i in page.items]

        def repeated(fn):
            def call() -> None:
                for _ in range(REPEAT):
                    fn()

            return call

        print(f"cold (metadata cache empty, {TOPICS:,} topics read from Kafka; gated against the wire):")
        ratio = compare(
            {"API call (cold)": cold(api_call)},
            wire_floor(sandbox.bootstrap_servers),
            shown={
                "service call (cold, the page's)": cold(service_call),
                **client_reads(sandbox.bootstrap_servers),
            },
            note="the wire: the answer's bytes received, nothing decoded",
        )
        print(f"\nwarm (snapshot and configs cached; {REPEAT} calls per run; gated against the page):")
        warm_sides = {
            f"API call (warm) x{REPEAT}": repeated(api_call),
            f"HTML page (warm) x{REPEAT}": repeated(html_page),
        }
        m: Runs = alternate(
            {**warm_sides, f"service call (warm) x{REPEAT}": repeated(service_call)}, runs=RUNS
        )
        m.report()
        api_warm, page_warm = warm_sides
        print(m.ratios(api_warm, page_warm))
        warm_ratio = m.median(api_warm) / m.median(page_warm)
        print("\nprofile of one warm API call (console code, by cumulative time):")
        print(profile_top(api_call, 15, "console/"))
    finally:
        teardown(sandbox)
    gate("api_topic_list", ratio, GOAL, [("warm API / warm HTML page (median)", warm_ratio, WARM_GOAL)])


if __name__ == "__main__":
    main()
