"""Client quotas through the gateway (``console/kafka/quotas.py``), on the sandbox and a real Kafka 4.1:
filtered describes, set/remove with validate-only, Kafka's refusals of what the console's core would
have stopped, and a cluster registered with bootstrap controllers only (KIP-919: the controllers take
AlterClientQuotas but do not serve DescribeClientQuotas). Only this module's ``ctq.`` entities are set,
and removed afterwards; IP entities only ever validate-only."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from console.kafka import KafkaOperationError
from console.kafka.quotas import DEFAULT, EXACT, SPECIFIED, QuotaAlteration, QuotaFilter

from .conftest import eventually

pytestmark = [pytest.mark.contract]
KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate")


def _name() -> str:
    return f"ctq.{uuid.uuid4().hex[:10]}"


@pytest.fixture
def touched(gw) -> Iterator[set]:
    entities: set = set()
    yield entities
    if entities:
        gw.alter_client_quotas([QuotaAlteration(e, {k: None for k in KEYS}) for e in entities])


def _of(gw, filters, strict=False) -> dict:
    return {e.entity: dict(e.values) for e in gw.describe_client_quotas(filters, strict=strict)}


def test_it_sets_filters_and_removes_like_kafka_configs(gw, touched):
    user, client = _name(), _name()
    alone, with_default, with_client = (
        (("user", user),),
        (("user", user), ("client-id", None)),
        (("user", user), ("client-id", client)),
    )
    touched |= {alone, with_default, with_client}
    answer = gw.alter_client_quotas([
        QuotaAlteration(alone, {"producer_byte_rate": 1048576.0, "request_percentage": 50.5}),
        QuotaAlteration(with_default, {"consumer_byte_rate": 2048.0}),
        QuotaAlteration(with_client, {"controller_mutation_rate": 2.5}),
    ])  # fmt: skip
    assert answer == {alone: None, with_default: None, with_client: None}
    everything = {
        alone: {"producer_byte_rate": 1048576.0, "request_percentage": 50.5},
        with_default: {"consumer_byte_rate": 2048.0},
        with_client: {"controller_mutation_rate": 2.5},
    }
    by_user = [QuotaFilter("user", EXACT, user)]
    assert eventually(lambda: _of(gw, by_user), lambda got: got == everything) == everything
    assert _of(gw, by_user, strict=True) == {alone: everything[alone]}
    assert _of(gw, [QuotaFilter("user", EXACT, user), QuotaFilter("client-id", DEFAULT)]) == {
        with_default: everything[with_default]
    }
    assert _of(gw, [QuotaFilter("user", EXACT, user), QuotaFilter("client-id", SPECIFIED)], strict=True) == {
        with_default: everything[with_default],
        with_client: everything[with_client],
    }
    assert _of(gw, [QuotaFilter("client-id", EXACT, client)]) == {with_client: everything[with_client]}
    assert _of(gw, [QuotaFilter("client-id", EXACT, client)], strict=True) == {}
    assert with_client in _of(gw, [])  # no filter: every entity

    assert gw.alter_client_quotas([
        QuotaAlteration(alone, {"producer_byte_rate": None, "request_percentage": 75.0}),
        QuotaAlteration(with_default, {"consumer_byte_rate": None}),
    ]) == {alone: None, with_default: None}  # fmt: skip
    left = {alone: {"request_percentage": 75.0}, with_client: everything[with_client]}
    assert eventually(lambda: _of(gw, by_user), lambda got: got == left) == left


def test_validate_only_answers_and_changes_nothing(gw):
    user = _name()
    entity = (("user", user),)
    assert gw.alter_client_quotas(
        [QuotaAlteration(entity, {"producer_byte_rate": 4096.0})], validate_only=True
    ) == {entity: None}
    assert gw.alter_client_quotas(
        [QuotaAlteration((("ip", "10.11.12.13"),), {"connection_creation_rate": 5.0})], validate_only=True
    ) == {(("ip", "10.11.12.13"),): None}
    assert _of(gw, [QuotaFilter("user", EXACT, user)]) == {}


@pytest.mark.parametrize(
    "entity, ops, words",
    [
        ((("user", "ctq.refused"),), {"producer_byte_rate": -1.0}, "must be greater than 0"),
        ((("user", "ctq.refused"),), {"producer_byte_rate": 1.5}, "fractional"),
        ((("user", "ctq.refused"),), {"bogus_rate": 1.0}, "Invalid configuration key bogus_rate"),
        ((("ip", "10.0.0.1"),), {"producer_byte_rate": 10.0}, "Invalid configuration key producer_byte_rate"),
        ((("ip", "no-such-host.invalid"),), {"connection_creation_rate": 1.0}, "is not a valid IP or resolvable host"),
    ],
)  # fmt: skip
def test_kafka_refuses_what_the_console_core_refuses_first(gw, entity, ops, words):
    err = gw.alter_client_quotas([QuotaAlteration(entity, ops)], validate_only=True)[entity]
    assert isinstance(err, KafkaOperationError) and err.name == "INVALID_REQUEST"
    assert words in err.message


def test_a_bad_filter_is_kafkas_error(gw):
    with pytest.raises(KafkaOperationError) as caught:
        gw.describe_client_quotas([QuotaFilter("ip", SPECIFIED), QuotaFilter("user", SPECIFIED)])
    assert caught.value.name == "INVALID_REQUEST"


def test_over_the_controllers_it_alters_but_cannot_describe(cgw, gw, touched):
    user = _name()
    entity = (("user", user),)
    with pytest.raises(KafkaOperationError) as caught:
        cgw.describe_client_quotas([QuotaFilter("user", EXACT, user)])
    assert caught.value.name == "UNSUPPORTED_ENDPOINT_TYPE"
    assert cgw.alter_client_quotas(
        [QuotaAlteration(entity, {"consumer_byte_rate": 1.0})], validate_only=True
    ) == {entity: None}
    err = cgw.alter_client_quotas([QuotaAlteration(entity, {"consumer_byte_rate": 0.0})], validate_only=True)[
        entity
    ]
    assert err is not None and "must be greater than 0" in err.message
    touched.add(entity)
    assert cgw.alter_client_quotas([QuotaAlteration(entity, {"consumer_byte_rate": 8192.0})]) == {
        entity: None
    }
    want = {entity: {"consumer_byte_rate": 8192.0}}
    assert eventually(lambda: _of(gw, [QuotaFilter("user", EXACT, user)]), lambda g: g == want) == want
