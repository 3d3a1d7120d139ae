"""Transactions list, first page with 100,000 transactional ids vs the raw ``ListTransactions``.

Sandbox: 3 brokers whose transaction coordinator state holds 100,000 transactional ids (every third
one Ongoing, the rest Empty; each broker coordinates about a third), in a process of its own, its clock
stopped (``speed=0``: nothing times out). The ids are put into the coordinator's state directly
(``sandbox.transactions.TxnMetadata`` rows in ``coordinator_of(state).txns``): producing 100,000
transactions through InitProducerId would take minutes and measure the producer, not the list.
Console side: the whole page (Django test client: middleware, auth, the area's paged read
``transactions.reads.list_page``, one ListTransactions per broker in flight together through the
gateway's kafka-python request client, merged, sorted by id, the first page of 200 made into
objects and rendered) and the API's first page. Raw floor on a warmed client: kafka-python's
``ListTransactionsRequest`` to each broker, all in flight at once on kafka-python's own client,
decoded into its response objects (the decoder the console uses). confluent-kafka 2.16's AdminClient
has no ListTransactions. The console pauses the cyclic collector around the read, so the raw side
runs with it paused too. 7 alternating runs.
Prints ``RESULT transactions_list ratio=<console/floor> goal<=1.5`` last; exit 1 above.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.harness import list_page_bench  # noqa: E402
from bench.raw_clients import KpRaw  # noqa: E402

TRANSACTIONS = 100_000
GOAL = 1.5


def build_sandbox():
    from sandbox import transactions as tx
    from sandbox.cluster import SandboxCluster

    cluster = SandboxCluster(brokers=3, controllers=1, port=0, speed=0, seed="bench-txn")
    cluster.start()
    st = cluster.state
    with st.lock:
        txns = tx.coordinator_of(st).txns
        now = st.now_ms
        for i in range(TRANSACTIONS):
            tid = f"app-txn-{i:06d}"
            ongoing = i % 3 == 0
            txns[tid] = tx.TxnMetadata(
                tid,
                producer_id=10_000 + i,
                producer_epoch=0,
                timeout_ms=900_000,
                state="Ongoing" if ongoing else "Empty",
                start_ms=now if ongoing else -1,
                last_update_ms=now,
            )
        st.next_producer_id = max(st.next_producer_id, 10_000 + TRANSACTIONS)
    return cluster


def kafka_python_raw(bootstrap: str):
    from kafka.protocol.admin.transactions import ListTransactionsRequest

    kp = KpRaw(bootstrap)
    brokers = kp.brokers()

    def raw() -> int:
        asks = [
            (
                ListTransactionsRequest(
                    state_filters=[],
                    producer_id_filters=[],
                    duration_filter=-1,
                    transactional_id_pattern=None,
                ),
                b,
            )
            for b in brokers
        ]
        total = 0
        for response in kp.send_many(asks):
            assert response.error_code == 0, response
            total += len(response.transaction_states)
        return total

    return raw


def main() -> None:
    def first_page(shown: str) -> str | None:
        first, last = 'data-transactional-id="app-txn-000000"', 'data-transactional-id="app-txn-000199"'
        if first in shown and last in shown and "app-txn-000200" not in shown:
            return None
        return "the page's first page is not app-txn-000000 to app-txn-000199"

    list_page_bench(
        "transactions_list", GOAL, build_sandbox,
        ("raw kafka-python ListTransactions (every broker)", kafka_python_raw),
        path="transactions/", total=TRANSACTIONS, noun="transactions", first_page=first_page,
    )  # fmt: skip


if __name__ == "__main__":
    main()
