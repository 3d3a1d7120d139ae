"""Client quotas over the wire (KIP-546 DescribeClientQuotas / AlterClientQuotas), asked through
kafka-python's admin connection with kafka-python's own protocol classes, exactly as
``kafka-configs.sh --entity-type users/clients/ips`` asks: the answers (values, defaults, match types,
``strict``, ``validate_only``) and Kafka 4.1's refusals, word for word. Passes on the sandbox and on a
real Kafka shared with others: only this test's own ``sbq.`` entities are set, filtered on and
removed afterwards (IP entities, which cannot carry that prefix, only ever validate-only).

Kafka answers entities in hash order; the answers are compared as sets (``_alter``, ``_describe``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kafka.protocol.admin import AlterClientQuotasRequest, DescribeClientQuotasRequest

from bench.raw_clients import KpRaw

from .conftest import eventually

pytestmark = [pytest.mark.contract]

A, D = AlterClientQuotasRequest, DescribeClientQuotasRequest
EXACT, DEFAULT, SPECIFIED = 0, 1, 2
KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate")
Entity = tuple[tuple[str, str | None], ...]


def _name() -> str:
    return f"sbq.{uuid.uuid4().hex[:10]}"


def _entity(*parts: tuple[str, str | None]) -> list[Any]:
    return [A.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in parts]


def _set(key: str, value: float) -> Any:
    return A.EntryData.OpData(key=key, value=value, remove=False)


def _remove(key: str) -> Any:
    return A.EntryData.OpData(key=key, value=0.0, remove=True)


class Quotas:
    """Alters and describes quotas; removes every key of every entity it set at the end."""

    def __init__(self, bootstrap: str) -> None:
        self.raw = KpRaw(bootstrap)
        self.touched: set[Entity] = set()

    def alter(self, entries: list[tuple[list[Any], list[Any]]], validate_only: bool = False) -> list[Any]:
        """``[(code, message, entity)]`` sorted, the entity as sorted (type, name) pairs."""
        if not validate_only:
            self.touched |= {tuple((e.entity_type, e.entity_name) for e in entity) for entity, _ in entries}
        answer = self.raw.send(
            A(entries=[A.EntryData(entity=e, ops=o) for e, o in entries], validate_only=validate_only)
        )
        out = [
            (e.error_code, e.error_message, tuple(sorted((x.entity_type, x.entity_name) for x in e.entity)))
            for e in answer.entries
        ]
        return sorted(out, key=repr)

    def describe(self, components: list[tuple[str, int, str | None]], strict: bool = False) -> Any:
        """``(code, message, {entity: {key: value}})``; None for the entries Kafka leaves out on errors."""
        answer = self.raw.send(
            D(
                components=[D.ComponentData(entity_type=t, match_type=m, match=s) for t, m, s in components],
                strict=strict,
            )
        )
        entries = None
        if answer.entries is not None:
            entries = {
                tuple(sorted((x.entity_type, x.entity_name) for x in e.entity)): {
                    v.key: v.value for v in e.values
                }
                for e in answer.entries
            }
            assert len(entries) == len(answer.entries)
        return answer.error_code, answer.error_message, entries

    def cleanup(self) -> None:
        try:
            if self.touched:
                self.raw.send(
                    A(
                        entries=[
                            A.EntryData(entity=_entity(*e), ops=[_remove(k) for k in KEYS])
                            for e in self.touched
                        ],
                        validate_only=False,
                    )
                )
        finally:
            self.raw.close()


@pytest.fixture
def quotas(endpoints) -> Iterator[Quotas]:
    q = Quotas(endpoints.bootstrap_servers)
    yield q
    q.cleanup()


def _settled(q: Quotas, components: list[tuple[str, int, str | None]], expected: dict, strict: bool = False):
    """The describe answer once the brokers have applied the change (a real Kafka's brokers apply
    the controller's records a moment after it answered)."""
    return eventually(lambda: q.describe(components, strict), lambda got: got == (0, "", expected))


def test_it_sets_describes_and_removes_quotas_exactly(quotas):
    user, client = _name(), _name()
    assert quotas.alter([
        (_entity(("user", user)), [_set("producer_byte_rate", 1048576.0), _set("request_percentage", 50.5)]),
        (_entity(("user", user), ("client-id", None)), [_set("consumer_byte_rate", 2048.0)]),
        (_entity(("client-id", client), ("user", user)), [_set("controller_mutation_rate", 2.5)]),
    ]) == sorted(
        [
            (0, None, (("user", user),)),
            (0, None, (("client-id", None), ("user", user))),
            (0, None, (("client-id", client), ("user", user))),
        ],
        key=repr,
    )  # fmt: skip
    everything = {
        (("user", user),): {"producer_byte_rate": 1048576.0, "request_percentage": 50.5},
        (("client-id", None), ("user", user)): {"consumer_byte_rate": 2048.0},
        (("client-id", client), ("user", user)): {"controller_mutation_rate": 2.5},
    }
    assert _settled(quotas, [("user", EXACT, user)], everything) == (0, "", everything)

    # remove one key, change another, remove a key that is not set (a no-op): one entity left as it was
    assert quotas.alter([
        (_entity(("user", user)), [_remove("producer_byte_rate"), _set("request_percentage", 75.0)]),
        (_entity(("user", user), ("client-id", None)), [_remove("consumer_byte_rate")]),
        (_entity(("client-id", client), ("user", user)), [_remove("producer_byte_rate")]),
    ]) == sorted(
        [
            (0, None, (("user", user),)),
            (0, None, (("client-id", None), ("user", user))),
            (0, None, (("client-id", client), ("user", user))),
        ],
        key=repr,
    )  # fmt: skip
    left = {
        (("user", user),): {"request_percentage": 75.0},
        (("client-id", client), ("user", user)): {"controller_mutation_rate": 2.5},
    }
    assert _settled(quotas, [("user", EXACT, user)], left) == (0, "", left)


def test_it_matches_exact_default_specified_and_strict_like_kafka(quotas):
    user, client = _name(), _name()
    quotas.alter([
        (_entity(("user", user)), [_set("producer_byte_rate", 1000.0)]),
        (_entity(("user", user), ("client-id", None)), [_set("producer_byte_rate", 2000.0)]),
        (_entity(("user", user), ("client-id", client)), [_set("producer_byte_rate", 3000.0)]),
        (_entity(("client-id", client)), [_set("consumer_byte_rate", 4000.0)]),
    ])  # fmt: skip
    alone = {(("user", user),): {"producer_byte_rate": 1000.0}}
    with_default = {(("client-id", None), ("user", user)): {"producer_byte_rate": 2000.0}}
    with_client = {(("client-id", client), ("user", user)): {"producer_byte_rate": 3000.0}}
    client_alone = {(("client-id", client),): {"consumer_byte_rate": 4000.0}}
    _settled(quotas, [("client-id", EXACT, client)], {**with_client, **client_alone})

    assert quotas.describe([("user", EXACT, user)]) == (0, "", {**alone, **with_default, **with_client})
    assert quotas.describe([("user", EXACT, user)], strict=True) == (0, "", alone)
    assert quotas.describe([("user", EXACT, user), ("client-id", DEFAULT, None)]) == (0, "", with_default)
    # SPECIFIED asks only that the entity has the type: Kafka 4.1 counts the default name too
    assert quotas.describe([("user", EXACT, user), ("client-id", SPECIFIED, None)]) == (
        0,
        "",
        {**with_default, **with_client},
    )
    assert quotas.describe([("client-id", EXACT, client)], strict=True) == (0, "", client_alone)
    assert quotas.describe([("client-id", EXACT, client), ("user", SPECIFIED, None)], strict=True) == (
        0,
        "",
        with_client,
    )
    assert quotas.describe([("user", EXACT, _name())]) == (0, "", {})


def test_it_validates_only_without_changing_anything(quotas):
    user, barrier = _name(), _name()
    assert quotas.alter(
        [(_entity(("user", user)), [_set("producer_byte_rate", 1024.0)])], validate_only=True
    ) == [(0, None, (("user", user),))]
    for ip in (None, "::1", "127.0.0.1", "localhost"):  # an IP entity only ever validated (no sbq. name)
        assert quotas.alter(
            [(_entity(("ip", ip)), [_set("connection_creation_rate", 5.0)])], validate_only=True
        ) == [(0, None, (("ip", ip),))]
    # a change made after it is seen, so the validate-only one would be seen too had it been made
    quotas.alter([(_entity(("user", barrier)), [_set("producer_byte_rate", 1.0)])])
    _settled(quotas, [("user", EXACT, barrier)], {(("user", barrier),): {"producer_byte_rate": 1.0}})
    assert quotas.describe([("user", EXACT, user)]) == (0, "", {})


def _refusal(quotas: Quotas, entity: list[Any], ops: list[Any]) -> tuple[int, str]:
    (answer,) = quotas.alter([(entity, ops)], validate_only=True)
    return answer[0], answer[1]


def test_it_refuses_bad_keys_values_and_entities_like_kafka(quotas):
    u = _name()
    user = _entity(("user", u))
    ip = _entity(("ip", "192.0.2.1"))
    cases = [
        (user, [_set("foo", 1.0)], "Invalid configuration key foo"),
        (user, [_set("connection_creation_rate", 1.0)], "Invalid configuration key connection_creation_rate"),
        (ip, [_set("producer_byte_rate", 1.0)], "Invalid configuration key producer_byte_rate"),
        (user, [_set("producer_byte_rate", 0.0)], "Quota producer_byte_rate must be greater than 0"),
        (user, [_set("request_percentage", -1.0)], "Quota request_percentage must be greater than 0"),
        (user, [_set("producer_byte_rate", 1.5)], "producer_byte_rate cannot be a fractional value."),
        (
            ip,
            [_set("connection_creation_rate", 3e9)],
            "Proposed value for connection_creation_rate is too large for an INT.",
        ),
        (
            user,
            [_set("consumer_byte_rate", 1e19)],
            "Proposed value for consumer_byte_rate is too large for a LONG.",
        ),
        ([], [_set("producer_byte_rate", 1.0)], "Invalid empty client quota entity"),
        (
            _entity(("group", u)),
            [_set("producer_byte_rate", 1.0)],
            "Unhandled client quota entity type: group",
        ),
        (_entity(("user", "")), [_set("producer_byte_rate", 1.0)], "Empty user not supported"),
        (
            _entity(("user", u), ("ip", "192.0.2.1")),
            [_set("producer_byte_rate", 1.0)],
            "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
        ),
        (
            _entity(("ip", "sbq.no-such-host.invalid")),
            [_set("connection_creation_rate", 1.0)],
            "sbq.no-such-host.invalid is not a valid IP or resolvable host.",
        ),
        (
            user,
            [_set("producer_byte_rate", 1.0), _set("producer_byte_rate", 2.0)],
            f"Ignoring duplicate entity ClientQuotaEntity(entries={{user={u}}})",
        ),
    ]
    got = [_refusal(quotas, entity, ops) for entity, ops, _ in cases]
    assert got == [(42, message) for _, _, message in cases]
    # fractions are fine where the quota is a double; the last of two names of a type counts
    assert _refusal(
        quotas, user, [_set("request_percentage", 1.5), _set("controller_mutation_rate", 0.5)]
    ) == (
        0,
        None,
    )
    assert quotas.alter(
        [(_entity(("user", u), ("user", "sbq.other")), [_set("producer_byte_rate", 1.0)])], validate_only=True
    ) == [(0, None, (("user", "sbq.other"),))]


def test_it_refuses_one_entry_and_applies_the_others(quotas):
    user, client = _name(), _name()
    assert quotas.alter([
        (_entity(("user", user)), [_set("producer_byte_rate", 1024.0), _set("foo", 1.0)]),
        (_entity(("client-id", client), ("user", user)), [_set("producer_byte_rate", 1.0), _set("producer_byte_rate", 1.0)]),
        (_entity(("client-id", client)), [_set("consumer_byte_rate", 10.0)]),
    ]) == sorted(
        [
            (42, "Invalid configuration key foo", (("user", user),)),
            (
                42,
                f"Ignoring duplicate entity ClientQuotaEntity(entries={{client-id={client}, user={user}}})",
                (("client-id", client), ("user", user)),
            ),
            (0, None, (("client-id", client),)),
        ],
        key=repr,
    )  # fmt: skip
    expected = {(("client-id", client),): {"consumer_byte_rate": 10.0}}
    assert _settled(quotas, [("client-id", EXACT, client)], expected) == (0, "", expected)
    assert quotas.describe([("user", EXACT, user)]) == (0, "", {})


def test_it_refuses_bad_describe_filters_like_kafka(quotas):
    cases = [
        ([("", EXACT, "x")], 42, "Invalid empty entity type."),
        ([("group", EXACT, "x")], 35, "Unsupported entity type group"),
        (
            [("user", EXACT, "x"), ("user", DEFAULT, None)],
            42,
            "Entity type user cannot appear more than once in the filter.",
        ),
        ([("user", EXACT, None)], 42, "Request specified MATCH_TYPE_EXACT, but set match string to null."),
        (
            [("user", DEFAULT, "x")],
            42,
            "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.",
        ),
        (
            [("user", SPECIFIED, "x")],
            42,
            "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.",
        ),
        ([("user", 7, "x")], 42, "Unknown match type 7"),
        (
            [("ip", SPECIFIED, None), ("user", SPECIFIED, None)],
            42,
            "Invalid entity filter component combination. IP filter component should not be used with "
            "user or clientId filter component.",
        ),
    ]
    assert [quotas.describe(c) for c, _, _ in cases] == [(code, msg, None) for _, code, msg in cases]
