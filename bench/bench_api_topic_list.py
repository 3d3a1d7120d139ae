"""The API's topic list vs the HTML topic list page's own service call, at 20,000 topics.

Estate: ``bench_topic_list.build_sandbox`` (20,000 topics x 5 partitions x RF 3 on 30 brokers), in
a process of its own (as a real cluster runs outside the console; ``harness.RemoteSandbox``).

API side: ``GET /api/v1/clusters/<c>/topics/`` through Django's test client with a read-only API
token: middleware, token authentication (a row lookup and a SHA-256), DRF's request/response
cycle, the query's validation, ``topics.reads.list_topics``, the JSON of the page. Service side:
``topics.reads.list_topics`` called as the topic list page calls it (same actor, default query:
first page of 50 by name).

The gated RESULT is a page load at 20,000 topics: each call (both sides) starts with the metadata
cache empty (``topics.cache.clear()``, as after TOPIC_METADATA_CACHE_S), so it reads the 20,000
topics' metadata and the page's configs from Kafka - the work ``bench_topic_list`` measures for
the page. The warm case (snapshot and configs cached, the service call is then ~1 ms of filtering
20,000 rows) is printed too, not gated: there the ratio is the API's fixed per-request cost
(Django, DRF, the token lookup, the JSON; ~2-3 ms) over a millisecond, and the absolute figure
is the one to read (the HTML page around the same call is printed for scale).

GC: setup (Django, the console's state) frozen with ``gc.freeze()`` before the runs; both sides in
this process. RUNS alternating runs (which side goes first alternates as well: the second read of
the same metadata is served warmer by the cluster); min / median / max and the per-run ratios
printed; RESULT is median(API) / median(service), printed last; exit 1 above 1.2.
"""

from __future__ import annotations

import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.group_setup import profile_top  # noqa: E402
from bench.harness import RemoteSandbox, Runs, freeze, gate, setup_console, teardown  # noqa: E402

RUNS = 7
REPEAT = 20  # warm calls per run: one is a few milliseconds
GOAL = 1.2


def main() -> None:
    from bench.bench_topic_list import PARTITIONS, TOPICS

    os.environ["TOPIC_METADATA_CACHE_S"] = "86400"  # the snapshot stays warm on both sides
    os.environ["TOPIC_CONFIG_CACHE_S"] = "86400"
    started = time.perf_counter()
    from bench.bench_topic_list import build_sandbox

    sandbox = RemoteSandbox(build_sandbox)
    try:
        browser, cluster = setup_console(sandbox.bootstrap_servers)
        logging.getLogger("kafka").setLevel(logging.ERROR)
        from django.contrib.auth import get_user_model
        from django.test import Client

        from console.api import tokens
        from console.topics import reads

        actor = get_user_model().objects.get(username="bench")
        secret = tokens.create_token(actor=actor, name="bench", scope="read", days=1).secret
        api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
        url = f"/api/v1/clusters/{cluster.name}/topics/"
        print(
            f"sandbox (own process, {TOPICS:,} topics x {PARTITIONS}) + console in {time.perf_counter() - started:.1f}s"
        )

        def api_call() -> None:
            response = api.get(url)
            if response.status_code != 200:
                raise SystemExit(f"{url} answered {response.status_code}: {response.content[:300]!r}")

        def html_page() -> None:
            if browser.get(f"/c/{cluster.name}/topics/").status_code != 200:
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
        service_call()

        from console.topics import cache as metadata_cache

        def cold(fn):
            def call() -> None:
                metadata_cache.clear()  # a page load after the snapshot expired: 20,000 topics from Kafka
                fn()

            return call

        freeze()  # setup out of the collector, for both sides
        m = Runs()
        for run in range(RUNS):
            sides = [("api", cold(api_call)), ("service", cold(service_call))]
            for name, fn in sides if run % 2 == 0 else sides[::-1]:  # who goes first alternates too
                t = time.perf_counter()
                fn()
                m.add(name, time.perf_counter() - t)
            for name, fn in (
                ("api warm", api_call),
                ("service warm", service_call),
                ("page warm", html_page),
            ):
                t = time.perf_counter()
                for _ in range(REPEAT):
                    fn()
                m.add(name, (time.perf_counter() - t) / REPEAT)
        print("\nprofile of one warm API call (console code, by cumulative time):")
        print(profile_top(api_call, 15, "console/"))
        print("warm (snapshot and configs cached; not gated):")
        print(m.line("api warm", f"  GET {url}"))
        print(m.line("service warm", "  topics.reads.list_topics (the page's call)"))
        print(m.line("page warm", f"  GET /c/{cluster.name}/topics/ (the HTML page itself, for scale)"))
        extra = (m.median("api warm") - m.median("service warm")) * 1000
        print(f"  the API adds {extra:.2f} ms per call; {m.ratios('api warm', 'service warm')}")
        print(f"page load (metadata cache empty, {TOPICS:,} topics read from Kafka; gated):")
        print(m.line("api", f"  GET {url}"))
        print(m.line("service", "  topics.reads.list_topics (the page's call)"))
        print("  " + m.ratios("api", "service"))
        ratio = m.median("api") / m.median("service")
    finally:
        teardown(sandbox)
    gate("api_topic_list", ratio, GOAL)


if __name__ == "__main__":
    main()
