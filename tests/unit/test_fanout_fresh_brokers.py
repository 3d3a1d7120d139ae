"""A cluster-wide list (consumer groups, share groups, transactions) asks every broker there is now,
not the brokers the client knew when it last read Metadata: a broker that was down then and came back
since coordinates groups and transactions the list must not leave out (the client keeps its Metadata
for a day). This is the flake CI met once: a transaction coordinated by a restarted broker never
listed."""

from __future__ import annotations

import pytest

from console.kafka import ClusterConnection, KafkaGateway
from console.kafka import share_groups as kshare
from sandbox import transactions as tx
from sandbox.handlers.coordinator import coordinator
from sandbox.testing import running_sandbox

IDS = [f"fresh-{i:02d}" for i in range(24)]


@pytest.fixture
def own_sandbox():
    with running_sandbox(brokers=3, controllers=1, port=0) as cluster:
        yield cluster


def test_every_list_asks_the_broker_that_came_back(own_sandbox):
    st = own_sandbox.state
    with st.lock:
        for gid in IDS:
            own_sandbox.add_group(gid, offsets={})
            tx.init_producer_id(st, gid, 60_000)
        live = st.live_brokers()
        owners = {coordinator(st, gid, live) for gid in IDS}
    assert owners == {1, 2, 3}, owners  # every broker coordinates some of them
    gw = KafkaGateway(ClusterConnection(bootstrap_servers=own_sandbox.bootstrap_servers, request_timeout_s=5))
    try:
        own_sandbox.stop_broker(2)
        gw.close()  # a fresh client whose Metadata has no broker 2
        assert gw._kp.broker_ids() == [1, 3]
        own_sandbox.start_broker(2)
        groups = [g.group_id for g in gw.list_consumer_groups()]
        assert groups == IDS
        assert [r[0] for r in gw.list_transactions()] == IDS
        assert {r[1] for r in gw.list_transactions()} == {1, 2, 3}
        kshare.list_groups(gw)  # asks broker 2 as well (no share groups here: it must not fail)
        assert gw._kp.broker_ids() == [1, 2, 3]
    finally:
        gw.close()
