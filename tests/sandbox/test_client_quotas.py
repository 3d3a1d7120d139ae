"""Client quotas on the sandbox's own terms: which nodes take AlterClientQuotas (every controller
advertises it, only the active one changes anything, as in KRaft) and that quotas outlive a restart
with ``--state``. Their answers and refusals are held to Kafka's in
tests/contract/test_client_quotas_protocol.py."""

from __future__ import annotations

from kafka.protocol.admin import AlterClientQuotasRequest, DescribeClientQuotasRequest

from sandbox.testing import running_sandbox
from tests.sandbox.conftest import call

pytestmark = []

A = AlterClientQuotasRequest


def _alter(user: str | None, value: float, validate_only: bool = False) -> AlterClientQuotasRequest:
    return A(
        entries=[
            A.EntryData(
                entity=[
                    A.EntryData.EntityData(entity_type="user", entity_name=user),
                    A.EntryData.EntityData(entity_type="client-id", entity_name=None),
                ],
                ops=[A.EntryData.OpData(key="producer_byte_rate", value=value, remove=False)],
            )
        ],
        validate_only=validate_only,
    )


def _described(hostport: str) -> list[tuple[list[tuple[str, str | None]], list[tuple[str, float]]]]:
    answer = call(hostport, DescribeClientQuotasRequest(components=[], strict=False), 1)
    assert (answer.error_code, answer.error_message) == (0, "")
    return [
        ([(e.entity_type, e.entity_name) for e in entry.entity], [(v.key, v.value) for v in entry.values])
        for entry in answer.entries
    ]


def test_it_alters_quotas_only_on_the_active_controller(cluster):
    active, inactive = cluster.bootstrap_controllers.split(",")[:2]
    refused = call(inactive, _alter("alice", 1024.0), 1).entries
    assert [(e.error_code, e.error_message) for e in refused] == [
        (41, "The active controller appears to be node 101.")
    ]
    assert cluster.state.client_quotas == {}
    done = call(active, _alter("alice", 1024.0), 0).entries
    assert [
        (e.error_code, e.error_message, [(x.entity_type, x.entity_name) for x in e.entity]) for e in done
    ] == [(0, None, [("client-id", None), ("user", "alice")])]
    assert _described(cluster.bootstrap_servers.split(",")[0]) == [
        ([("client-id", None), ("user", "alice")], [("producer_byte_rate", 1024.0)])
    ]


def test_it_keeps_client_quotas_in_the_state_file(tmp_path):
    path = str(tmp_path / "state.json")
    with running_sandbox(brokers=1, controllers=0, speed=0, state_file=path) as c:
        broker = c.bootstrap_servers
        assert call(broker, _alter(None, 2048.0), 1).entries[0].error_code == 0
        assert call(broker, _alter("bob", 1.0, validate_only=True), 1).entries[0].error_code == 0
    with running_sandbox(brokers=1, controllers=0, speed=0, state_file=path) as c:
        assert _described(c.bootstrap_servers) == [
            ([("client-id", None), ("user", None)], [("producer_byte_rate", 2048.0)])
        ]
