"""Batch-create parsers: YAML / JSON / CSV round trips (hypothesis) and positioned errors."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from console.topics.batch import (
    BatchParseError,
    TopicSpec,
    detect_format,
    parse_batch,
    parse_csv,
    parse_json,
    parse_yaml,
)

NAMES = st.text(alphabet="abcdefxyz0123456789._-", min_size=1, max_size=40).filter(
    lambda s: s not in (".", "..")
)
KEYS = st.sampled_from(["retention.ms", "cleanup.policy", "segment.bytes", "min.insync.replicas"])
VALUES = st.text(alphabet="abc0123456789", min_size=1, max_size=12)
SPECS = st.lists(
    st.builds(
        TopicSpec,
        name=NAMES,
        partitions=st.integers(min_value=1, max_value=10_000),
        replication_factor=st.integers(min_value=1, max_value=5),
        configs=st.dictionaries(KEYS, VALUES, max_size=3),
    ),
    min_size=1,
    max_size=8,
)


def as_dicts(specs):
    return [
        {
            "name": s.name,
            "partitions": s.partitions,
            "replication_factor": s.replication_factor,
            "configs": s.configs,
        }
        for s in specs
    ]


@settings(max_examples=60)
@given(SPECS)
def test_yaml_round_trips(specs):
    assert parse_yaml(yaml.safe_dump({"topics": as_dicts(specs)})) == specs


@settings(max_examples=60)
@given(SPECS)
def test_json_round_trips(specs):
    assert parse_json(json.dumps(as_dicts(specs), indent=2)) == specs


@settings(max_examples=60)
@given(SPECS)
def test_csv_round_trips(specs):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["name", "partitions", "replication_factor", "configs"])
    for s in specs:
        writer.writerow(
            [s.name, s.partitions, s.replication_factor, ";".join(f"{k}={v}" for k, v in s.configs.items())]
        )
    assert parse_csv(out.getvalue()) == specs


@settings(max_examples=200)
@given(st.text(max_size=300), st.sampled_from([None, "yaml", "json", "csv"]))
def test_any_text_parses_or_fails_with_positions(text, fmt):
    try:
        specs = parse_batch(text, fmt)
    except BatchParseError as exc:
        assert exc.problems
        assert all(p.line >= 1 and p.column >= 1 for p in exc.problems)
    else:
        assert all(isinstance(s, TopicSpec) for s in specs)


@pytest.mark.parametrize(
    ("text", "fmt", "where", "fragment"),
    [
        ("topics:\n  - name: a\n    partitions: six\n", "yaml", (3, 17), "whole number"),
        ("- name: a\n  colour: red\n", "yaml", (2, 3), "unknown field 'colour'"),
        ("- partitions: 3\n", "yaml", (1, 3), "no name"),
        ("topics: [\n", "yaml", (2, 1), ""),
        ('[{"name": "a",}]', "json", (1, 15), "double quotes"),
        ('[\n  {"name": "a", "partitions": "x"}\n]', "json", (2, 31), "whole number"),
        ("name,partitions\na,1\nb,two\n", "csv", (3, 2), "whole number"),
        ("name,partitions\na,1,2\n", "csv", (2, 1), "expected 2 fields"),
        ("name,colour\na,red\n", "csv", (1, 2), "unknown column"),
        ("name,configs\na,retention.ms\n", "csv", (2, 2), "key=value"),
        ("- name: a\n  assignment: [[1, 2], [x]]\n", "yaml", (2, 25), "broker id"),
    ],
)
def test_errors_name_the_line_and_column(text, fmt, where, fragment):
    with pytest.raises(BatchParseError) as info:
        parse_batch(text, fmt)
    problem = info.value.problems[0]
    assert (problem.line, problem.column) == where, str(info.value)
    assert fragment in problem.message


def test_every_problem_is_reported_not_just_the_first():
    with pytest.raises(BatchParseError) as info:
        parse_yaml("- name: a\n  partitions: x\n- name: b\n  replication_factor: y\n")
    assert [p.line for p in info.value.problems] == [2, 4]


def test_formats_are_detected():
    assert detect_format("[]") == "json"
    assert detect_format("name,partitions\n") == "csv"
    assert detect_format("topics:\n") == "yaml"
    assert detect_format("anything", "t.csv") == "csv"


def test_assignments_and_rf_aliases():
    specs = parse_yaml(
        "- name: a\n  assignment: [[1, 2], [2, 3]]\n- name: b\n  rf: 2\n- name: c\n  replication-factor: 3\n"
    )
    assert specs[0].assignment == ((1, 2), (2, 3))
    assert [s.replication_factor for s in specs[1:]] == [2, 3]
