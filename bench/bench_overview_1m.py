"""The cluster overview (the landing page) at 1,000,000 partitions on 200 brokers, cold and warm,
against the wire: the raw reads the page's figures need, in parallel over plain sockets.

Sandbox: 20,000 topics x 50 partitions x RF 3 on 200 brokers (``BENCH_1M_TOPICS`` changes the topic
count), in a process of its own (``harness.RemoteSandbox``). Console sides: ``GET /c/<cluster>/``
(Django test client: middleware, auth, ``brokers.overview.cluster_overview``, gateway, decoder,
template), clients connected:

* cold: the metadata cache emptied first, so the page reads everything: the whole cluster's
  Metadata (the topic and partition counts, under-replicated and offline partitions),
  DescribeCluster (the registered and fenced brokers), DescribeQuorum (the active controller) and
  an ApiVersions to every broker (up or unreachable);
* warm: a second view within the metadata snapshot's life (the figures are kept with it, and the
  page says how old they are): nothing is read from Kafka.

Floor (``raw_clients.Wire``): those same requests (Metadata v12 topics=null, DescribeCluster v2,
DescribeQuorum v1, ApiVersions v3 to each broker) written to plain sockets held open across runs, all
at once, every answer read whole into a buffer, nothing decoded: the bytes the page must receive.
GC: setup frozen for both sides; the collector paused around the raw reads as the console pauses it
around its metadata fetch. 5 alternating runs, medians gated: cold/wire <= 1.5 (the RESULT) and
warm/wire <= 0.05 (an absolute goal, checked before it).
Prints ``RESULT overview_1m ratio=<cold/wire> goal<=1.5`` last; exit 1 when either goal is missed.
"""

from __future__ import annotations

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_topic_list import build_sandbox  # noqa: E402
from bench.bench_topic_list_cold_1m import BROKERS, PARTITIONS, TOPICS  # noqa: E402 - the 1M estate
from bench.harness import alternate, cold, console_on, freeze, gate, gc_paused, get_ok  # noqa: E402
from bench.raw_clients import Wire  # noqa: E402

GOAL = 1.5
WARM_GOAL = 0.05
RUNS = 5
COLD, WARM, FLOOR = "console overview (cold)", "console overview (warm)", "raw socket reads (in parallel)"


def raw_requests(brokers: int) -> list:
    """``[(broker index, request, version)]``: the page's reads, all in flight at once."""
    from kafka.protocol.admin import DescribeClusterRequest, DescribeQuorumRequest
    from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

    T = DescribeQuorumRequest.TopicData
    quorum = DescribeQuorumRequest(
        topics=[T(topic_name="__cluster_metadata", partitions=[T.PartitionData(partition_index=0)])]
    )
    described = DescribeClusterRequest(
        include_cluster_authorized_operations=False, endpoint_type=1, include_fenced_brokers=True
    )
    out = [
        (0, MetadataRequest(topics=None, allow_auto_topic_creation=False), 12),
        (1, described, 2),
        (2, quorum, 1),
    ]
    ping = ApiVersionsRequest(client_software_name="bench-wire", client_software_version="1")
    return out + [(b, ping, 3) for b in range(brokers)]


def cards(body: str) -> dict[str, str]:
    """The overview's cards, label -> the value as read (a count's hover span and its thousands
    separators taken off: ``<span class="hv" title="20000">20,000</span>`` -> ``20000``)."""
    found = re.findall(r'<div class="label">([^<]+)</div><div class="value[^"]*">(.*?)</div>', body)
    return {label: re.sub(r"<[^>]+>", "", value).replace(",", "") for label, value in found}


def main() -> None:
    with console_on(build_sandbox, TOPICS, PARTITIONS, BROKERS) as (sandbox, client, cluster):
        wire = Wire(sandbox.bootstrap_servers)
        sizes = wire.exchange(raw_requests(BROKERS))
        print(
            f"{TOPICS * PARTITIONS:,} partitions on {BROKERS} brokers: {sum(sizes) / 1e6:.1f} MB of answers"
        )
        url = f"/c/{cluster.name}/"
        body = get_ok(client, url).content.decode()
        shown = cards(body)
        expected = {"Brokers": BROKERS, "Topics": TOPICS, "Partitions": TOPICS * PARTITIONS}
        assert {k: shown.get(k) for k in expected} == {k: str(v) for k, v in expected.items()}, shown
        assert shown.get("Under-replicated") == shown.get("Offline partitions") == "0", shown
        assert 'id="overview-age"' in body and body.count(">up</td>") == BROKERS

        def warm(_) -> None:
            get_ok(client, url)

        freeze()
        m = alternate(
            {
                COLD: cold(lambda: get_ok(client, url)),
                WARM: (lambda: get_ok(client, url), warm),  # untimed: a view within the snapshot's life
                FLOOR: gc_paused(lambda: wire.exchange(raw_requests(BROKERS))),
            },
            runs=RUNS,
        )
        m.report()
        print(f"floor: {FLOOR} (the wire: the answers' bytes received, nothing decoded)")
        print(m.ratios(COLD, FLOOR))
        print(m.ratios(WARM, FLOOR))
        cold_ratio, warm_ratio = m.median(COLD) / m.median(FLOOR), m.median(WARM) / m.median(FLOOR)
    gate("overview_1m", cold_ratio, GOAL, absolute=[("warm view / wire", warm_ratio, WARM_GOAL)])


if __name__ == "__main__":
    main()
