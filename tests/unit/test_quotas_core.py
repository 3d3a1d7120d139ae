"""The client quotas core (pure): entity names, Kafka's checks before Kafka is asked, the diff, and the
quota that applies as Kafka's DefaultQuotaCallback resolves it, each key on its own."""

from __future__ import annotations

import pytest

from console.quotas import core
from console.quotas.core import Entity, QuotaInvalid, entity_of, parse_entity


def E(text: str) -> Entity:
    return parse_entity(text)


@pytest.mark.parametrize(
    "text, parts, kind, path",
    [
        ("user=alice", (("user", "alice"),), "user", "/users/alice"),
        ("user=<default>", (("user", None),), "user", "/users/<default>"),
        ("client-id=app,user=alice", (("user", "alice"), ("client-id", "app")), "user+client-id", "/users/alice/clients/app"),
        ("user=<default>, client-id=<default>", (("user", None), ("client-id", None)), "user+client-id", "/users/<default>/clients/<default>"),
        ("ip=10.0.0.1", (("ip", "10.0.0.1"),), "ip", "/ips/10.0.0.1"),
        ("ip=<default>", (("ip", None),), "ip", "/ips/<default>"),
        ("user=CN=alice,OU=eng,client-id=app", (("user", "CN=alice,OU=eng"), ("client-id", "app")), "user+client-id", "/users/CN=alice,OU=eng/clients/app"),
    ],
)  # fmt: skip
def test_it_parses_and_names_entities(text, parts, kind, path):
    entity = parse_entity(text)
    assert entity.parts == parts
    assert entity.kind == kind
    assert entity.path == path
    assert parse_entity(entity.name) == entity  # the name reads back as the same entity
    assert entity.target == f"quota:{entity.name}"


def test_the_name_puts_the_user_first():
    assert E("client-id=app,user=alice").name == "user=alice,client-id=app"
    assert entity_of(user="<default>", client_id="app").name == "user=<default>,client-id=app"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "name a user, a client id, both, or an IP"),
        ("alice", "write type=name, not 'alice'"),
        ("group=x", "unknown entity type 'group'"),
        ("user=", "the user name is empty"),
        ("user=a,user=b", "user is named twice"),
        ("ip=10.0.0.1,user=alice", "an IP entity stands alone"),
        ("ip=not a host!", "is not an IP address or host name"),
        ("user=" + "a" * 256, "the user name is longer than 255 characters (256)"),
        ("client-id=" + "c" * 300, "the client-id name is longer than 255 characters (300)"),
        ("user=al\x00ice", "control character"),
    ],
)
def test_it_refuses_bad_entities_clearly(text, expected):
    with pytest.raises(QuotaInvalid) as caught:
        parse_entity(text)
    assert any(expected in e for e in caught.value.errors), caught.value.errors


@pytest.mark.parametrize(
    "entity, changes, expected",
    [
        ("user=alice", {"producer_byte_rate": -5}, "producer_byte_rate must be greater than 0"),
        ("user=alice", {"producer_byte_rate": 0}, "producer_byte_rate must be greater than 0"),
        ("user=alice", {"consumer_byte_rate": "1024.5"}, "consumer_byte_rate must be a whole number"),
        ("user=alice", {"producer_byte_rate": "fast"}, "producer_byte_rate: 'fast' is not a number"),
        ("user=alice", {"producer_byte_rate": "nan"}, "is not a finite number"),
        ("user=alice", {"producer_byte_rate": True}, "is not a number"),
        ("user=alice", {"producer_byte_rate": 2**63}, "producer_byte_rate is too large"),
        ("ip=10.0.0.1", {"producer_byte_rate": 1024}, "producer_byte_rate does not apply to an IP"),
        ("ip=10.0.0.1", {"connection_creation_rate": 2**31}, "connection_creation_rate is too large"),
        ("ip=10.0.0.1", {"connection_creation_rate": 2.5}, "connection_creation_rate must be a whole number"),
        ("user=alice", {"connection_creation_rate": 10}, "connection_creation_rate does not apply to a user or client id"),
        ("user=alice", {"bytes_per_second": 10}, "unknown quota key 'bytes_per_second'"),
        ("user=alice", {}, "nothing to change"),
    ],
)  # fmt: skip
def test_it_refuses_keys_and_values_as_kafka_would(entity, changes, expected):
    with pytest.raises(QuotaInvalid) as caught:
        core.check_changes(E(entity), changes)
    assert any(expected in e for e in caught.value.errors), caught.value.errors


def test_it_names_every_problem_at_once():
    with pytest.raises(QuotaInvalid) as caught:
        core.check_changes(E("user=alice"), {"producer_byte_rate": -1, "nope": 1, "request_percentage": "x"})
    assert len(caught.value.errors) == 3


def test_it_accepts_good_values_and_removals():
    assert core.check_changes(
        E("user=alice,client-id=app"),
        {"producer_byte_rate": "1_048_576", "request_percentage": 12.5, "consumer_byte_rate": None},
    ) == {"producer_byte_rate": 1048576.0, "request_percentage": 12.5, "consumer_byte_rate": None}
    assert core.check_changes(E("ip=<default>"), {"connection_creation_rate": 10}) == {
        "connection_creation_rate": 10.0
    }


def test_the_diff_says_set_change_remove():
    diffs = core.diff({"producer_byte_rate": 100.0, "consumer_byte_rate": 5.0}, {
        "producer_byte_rate": 200.0, "consumer_byte_rate": None, "request_percentage": 50.0
    })  # fmt: skip
    assert [(d.key, d.op, d.before_text, d.after_text) for d in diffs] == [
        ("producer_byte_rate", "change", "100", "200"),
        ("consumer_byte_rate", "remove", "5", "—"),
        ("request_percentage", "set", "—", "50"),
    ]
    assert core.applied(
        {"producer_byte_rate": 100.0, "consumer_byte_rate": 5.0}, {"consumer_byte_rate": None}
    ) == {"producer_byte_rate": 100.0}


LEVELS = [
    "user=alice,client-id=app",
    "user=alice,client-id=<default>",
    "user=alice",
    "user=<default>,client-id=app",
    "user=<default>,client-id=<default>",
    "user=<default>",
    "client-id=app",
    "client-id=<default>",
]


def test_the_8_levels_are_kafkas_order():
    assert [e.name for e in core.levels("alice", "app")] == LEVELS


@pytest.mark.parametrize("level", range(1, 9))
def test_each_level_wins_over_every_less_specific_one(level):
    quotas = {E(name): {"producer_byte_rate": float(i)} for i, name in enumerate(LEVELS, 1) if i >= level}
    got = {e.key: e for e in core.effective(quotas, "alice", "app")}["producer_byte_rate"]
    assert (got.value, got.level, got.source.name) == (float(level), level, LEVELS[level - 1])


def test_each_key_is_resolved_on_its_own():
    quotas = {
        E("user=alice"): {"consumer_byte_rate": 2048.0},  # level 3: consumer only
        E("user=<default>,client-id=<default>"): {"producer_byte_rate": 1024.0, "consumer_byte_rate": 1.0},
        E("client-id=app"): {"request_percentage": 25.0},
        E("user=bob"): {"controller_mutation_rate": 9.0},  # another user: not alice's
    }
    got = {e.key: (e.value, e.level) for e in core.effective(quotas, "alice", "app")}
    assert got == {
        "producer_byte_rate": (1024.0, 5),
        "consumer_byte_rate": (2048.0, 3),
        "request_percentage": (25.0, 7),
        "controller_mutation_rate": (None, None),
    }
    assert {e.key: e.value_text for e in core.effective(quotas, "alice", "app")}[
        "controller_mutation_rate"
    ] == "unlimited"


def test_an_ip_gets_its_own_rate_else_the_default():
    quotas = {
        E("ip=<default>"): {"connection_creation_rate": 10.0},
        E("ip=10.0.0.1"): {"connection_creation_rate": 3.0},
    }
    assert core.effective_ip(quotas, "10.0.0.1").value == 3.0
    assert core.effective_ip(quotas, "10.0.0.2").source.name == "ip=<default>"
    assert core.effective_ip({}, "10.0.0.2").value is None


def test_grouping_by_kind_puts_defaults_first():
    groups = core.group(
        [
            (E(n), {})
            for n in ("user=bob", "ip=1.2.3.4", "user=<default>", "client-id=x", "user=alice,client-id=y")
        ]
    )
    assert [(kind, [e.name for e, _ in rows]) for kind, _, rows in groups] == [
        ("user", ["user=<default>", "user=bob"]),
        ("user+client-id", ["user=alice,client-id=y"]),
        ("client-id", ["client-id=x"]),
        ("ip", ["ip=1.2.3.4"]),
    ]
