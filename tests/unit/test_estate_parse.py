"""The estate document, pure: the export's exact text (stable order, one line per ACL binding), and
every kind of bad file named with its line: bad YAML, unknown keys, wrong types, a topic outside the
namespace, names and keys given twice, internal topics, ACLs outside the namespace."""

from __future__ import annotations

import pytest

from console.estate import core
from console.estate.core import Estate, EstateParseError, TopicState
from console.kafka import AclBinding

HEAD = "kind: KafkaEstate\nversion: 1\ncluster: prod\nnamespace: team-a.\n"


def errors(text: str) -> list[str]:
    with pytest.raises(EstateParseError) as refused:
        core.parse(text)
    return refused.value.errors


def test_it_writes_a_stable_diff_friendly_document():
    estate = Estate(
        "prod",
        "team-a.",
        (
            TopicState("team-a.b", 6, 3, {"retention.ms": "1000", "cleanup.policy": "compact"}),
            TopicState("team-a.a", 1, 3),
        ),
        (
            AclBinding("TOPIC", "team-a.", "PREFIXED", "User:b", "*", "WRITE", "ALLOW"),
            AclBinding("GROUP", "team-a.app", "LITERAL", "User:a", "*", "READ", "ALLOW"),
        ),
    )
    text = core.dump(estate)
    assert text == HEAD + (
        "topics:\n"
        "- name: team-a.a\n  partitions: 1\n  replication_factor: 3\n"
        "- name: team-a.b\n  partitions: 6\n  replication_factor: 3\n  configs:\n"
        "    cleanup.policy: compact\n    retention.ms: '1000'\n"
        "acls:\n"
        "- {resource_type: GROUP, resource_name: team-a.app, pattern_type: LITERAL, principal: 'User:a', host: '*', "
        "operation: READ, permission: ALLOW}\n"
        "- {resource_type: TOPIC, resource_name: team-a., pattern_type: PREFIXED, principal: 'User:b', host: '*', "
        "operation: WRITE, permission: ALLOW}\n"
    )
    back = core.parse(text)
    assert back == Estate("prod", "team-a.", tuple(sorted(estate.topics, key=lambda t: t.name)), back.acls)
    assert set(back.acls) == set(estate.acls) and [t.configs for t in back.topics] == [
        {},
        estate.topics[0].configs,
    ]


def test_it_writes_an_empty_estate_and_reads_it_back():
    text = core.dump(Estate("prod", "", (), ()))
    assert text == "kind: KafkaEstate\nversion: 1\ncluster: prod\nnamespace: ''\ntopics: []\nacls: []\n"
    assert core.parse(text) == Estate("prod", "", (), ())


def test_it_names_the_line_and_column_of_bad_yaml():
    assert errors(HEAD + "topics:\n- name: [unclosed\n") == [
        "line 7, column 1: not valid YAML: did not find expected ',' or ']'"
    ]
    assert errors("- just\n- a list\n") == [
        "the file must be a mapping starting with kind: KafkaEstate and version: 1"
    ]


def test_it_names_unknown_keys_and_wrong_types_with_their_lines():
    text = HEAD + (
        "colour: red\n"  # 5
        "topics:\n"
        "- name: team-a.x\n"  # 7
        "  partitions: three\n"
        "  replication_factor: true\n"
        "  retention: 5\n"  # 10
        "  configs: [a, b]\n"
        "- name: team-a.y\n"  # 12
        "  partitions: 1\n"
        "  replication_factor: 1\n"
        "  configs:\n"
        "    retention.ms: {a: 1}\n"  # 16
        "    cleanup.policy: compact\n"
        "    preallocate: false\n"
    )
    assert errors(text) == [
        "line 5: unknown key 'colour' in the document (allowed: kind, version, cluster, namespace, topics, acls)",
        "line 10: unknown key 'retention' in a topic (allowed: name, partitions, replication_factor, configs)",
        "line 8: topic 'team-a.x' partitions must be a whole number of at least 1, not 'three'",
        "line 9: topic 'team-a.x' replication_factor must be a whole number of at least 1, not True",
        "line 11: topic 'team-a.x' configs must be a mapping of names to values",
        "line 16: topic 'team-a.y' config 'retention.ms' needs a plain value",
    ]


def test_it_refuses_the_wrong_kind_or_version():
    assert errors("kind: Other\nversion: 2\ntopics: {}\n") == [
        "line 1: kind must be KafkaEstate",
        "line 2: version must be 1 (the only version this console reads)",
        "line 3: topics must be a list",
    ]


def test_it_refuses_topics_outside_the_namespace_internal_topics_and_names_given_twice():
    text = HEAD + (
        "topics:\n"
        "- {name: team-b.x, partitions: 1, replication_factor: 1}\n"  # 6
        "- {name: __consumer_offsets, partitions: 1, replication_factor: 1}\n"
        "- {name: team-a.x, partitions: 1, replication_factor: 1}\n"
        "- {name: team-a.x, partitions: 2, replication_factor: 1}\n"  # 9
        "- {partitions: 2}\n"
        "- just a name\n"
    )
    assert errors(text) == [
        "line 6: topic 'team-b.x' is outside the namespace 'team-a.'",
        "line 7: topic '__consumer_offsets' is one of Kafka's internal topics; an estate never holds them",
        "line 9: topic 'team-a.x' is listed twice",
        "line 10: topics[4] needs a name",
        "topics[5]: each topic must be a mapping with name, partitions, replication_factor",
    ]


def test_it_refuses_a_key_given_twice():
    assert errors(HEAD + "topics:\n- name: team-a.x\n  partitions: 1\n  partitions: 2\n") == [
        "line 8, column 3: 'partitions' is given twice (first on line 7)"
    ]


def test_it_reads_through_the_bounded_reader_refusing_anchors_and_deep_nesting():
    assert errors(HEAD + "topics:\n- &t {name: team-a.x, partitions: 1, replication_factor: 1}\n- *t\n") == [
        "line 6, column 3: not valid YAML: YAML anchors and aliases (&name, *name) are not allowed; quote a value "
        'that starts with & or *, e.g. host: "*"'
    ]
    assert errors(HEAD + "topics: " + "[" * 30 + "]" * 30 + "\n")[0].startswith(
        "line 5, column 28: not valid YAML: nested deeper than 20 levels"
    )
    assert errors(
        HEAD + "topics:\n- {name: team-a.x, partitions: 1, replication_factor: 1, configs: {? [a]: 1}}\n"
    ) == ["line 6, column 70: a key must be a plain name"]


def test_it_takes_only_the_namespaces_own_acls():
    def acl(resource_type: str, name: str, pattern: str = "LITERAL", op: str = "READ") -> str:
        return (
            f"- {{resource_type: {resource_type}, resource_name: '{name}', pattern_type: {pattern}, "
            f"principal: 'User:a', operation: {op}}}\n"
        )

    text = (
        HEAD
        + "acls:\n"
        + acl("TOPIC", "team-a.x")
        + acl("GROUP", "team-a.", "PREFIXED")
        + acl("TOPIC", "team-a.x")
    )
    assert errors(text) == [
        "line 8: acls[2] (User:a ALLOW READ on TOPIC:LITERAL:team-a.x from *) is listed twice"
    ]
    outside = (
        HEAD
        + "acls:\n"
        + acl("TOPIC", "*")
        + acl("TOPIC", "team", "PREFIXED")
        + acl("CLUSTER", "kafka-cluster", op="ALTER")
    )
    assert [e.split(" is outside")[0] for e in errors(outside)] == [
        "line 6: acls[0] (User:a ALLOW READ on TOPIC:LITERAL:* from *)",
        "line 7: acls[1] (User:a ALLOW READ on TOPIC:PREFIXED:team from *)",
        "line 8: acls[2] (User:a ALLOW ALTER on CLUSTER:LITERAL:kafka-cluster from *)",
    ]
    assert errors(HEAD + "acls:\n" + acl("TOPIC", "team-a.x", op="FLY")) == [
        "line 6: acls[0]: operation 'FLY' is not valid on TOPIC"
    ]
    assert errors(HEAD + "acls:\n- {resource_type: TOPIC, principal: 'User:a', colour: red}\n") == [
        "line 6: unknown key 'colour' in an ACL binding (allowed: resource_type, resource_name, pattern_type, "
        "principal, host, operation, permission)",
        "line 6: acls[0] needs resource_name, operation",
    ]
    whole = "kind: KafkaEstate\nversion: 1\nacls:\n" + acl("CLUSTER", "kafka-cluster", op="ALTER")
    assert core.parse(whole).acls == (
        AclBinding("CLUSTER", "kafka-cluster", "LITERAL", "User:a", "*", "ALTER", "ALLOW"),
    )
