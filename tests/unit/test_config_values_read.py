"""console.kafka.config_values_read: DescribeConfigs answers (versions 1-4) read lean from their
bytes, compared with kafka-python's own decoding of the same bytes; overrides picked as the
reassignment area's reader picks them; every truncation and junk refused, never misread (the fields
it skips - synonyms, documentation - are not decoded, so bad UTF-8 there is not its concern)."""

from __future__ import annotations

import random

import pytest
from kafka.protocol.admin import DescribeConfigsResponse

from console.kafka import ConfigResource, KafkaOperationError
from console.kafka.config_values_read import OVERRIDE_SOURCES, _read, read_overrides, read_results
from console.kafka.metadata_read import _Answer

Result = DescribeConfigsResponse.DescribeConfigsResult
Entry = Result.DescribeConfigsResourceResult
Synonym = Entry.DescribeConfigsSynonym
VERSIONS = (1, 2, 3, 4)
KEYS = ["leader.replication.throttled.replicas", "follower.replication.throttled.replicas"]


def answer(version: int) -> bytes:
    def entry(name, value, source, sensitive=False, synonyms=()):
        return Entry(
            name=name,
            value=value,
            read_only=False,
            config_source=source,
            is_sensitive=sensitive,
            synonyms=[Synonym(name=n, value=v, source=s) for n, v, s in synonyms],
            config_type=2,
            documentation="some words" if source == 5 else None,
        )

    return DescribeConfigsResponse(
        version=version,
        throttle_time_ms=3,
        results=[
            Result(
                error_code=0,
                error_message=None,
                resource_type=2,
                resource_name="moving",
                configs=[entry(KEYS[0], "0:1,1:2", 1), entry(KEYS[1], "", 5, synonyms=[(KEYS[1], "", 5)])],
            ),
            Result(
                error_code=0,
                error_message=None,
                resource_type=2,
                resource_name="quiet",
                # retention.ms inherited from a broker's dynamic log.retention.ms: not the topic's own
                configs=[entry(KEYS[0], "", 5), entry(KEYS[1], "", 5), entry("retention.ms", "1000", 2)],
            ),
            Result(
                error_code=3, error_message="no such topic", resource_type=2, resource_name="gone", configs=[]
            ),
            Result(
                error_code=0,
                error_message=None,
                resource_type=4,
                resource_name="1",
                configs=[
                    entry("leader.replication.throttled.rate", "1048576", 2),
                    entry("follower.replication.throttled.rate", "7", 3),  # the default, not broker 1's own
                    entry("zażółć", None, 2, sensitive=True),
                ],
            ),
            Result(
                error_code=0,
                error_message=None,
                resource_type=4,
                resource_name="",
                configs=[
                    entry("follower.replication.throttled.rate", "7", 3),
                ],
            ),
        ],
    ).encode(version=version)


@pytest.mark.parametrize("version", VERSIONS)
def test_it_reads_what_kafka_python_decodes(version):
    data = answer(version)
    got = _read(data, version)
    want = DescribeConfigsResponse.decode(data, version=version)
    assert [(r[0], r[1], r[2], r[3]) for r in got] == [
        (r.resource_type, r.resource_name, r.error_code, r.error_message) for r in want.results
    ]
    assert [r[4] for r in got] == [
        {c.name: (c.value, c.config_source, bool(c.is_sensitive)) for c in r.configs} for r in want.results
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_it_keeps_only_each_resources_own_overrides(version):
    t, b = (lambda n: ConfigResource("TOPIC", n)), (lambda n: ConfigResource("BROKER", n))
    group = [t("moving"), t("quiet"), t("gone"), b("1"), b(""), t("unasked")]
    rates = ["leader.replication.throttled.rate", "follower.replication.throttled.rate", "zażółć"]
    got = read_overrides(_read(answer(version), version), group, KEYS + rates)
    assert got[t("moving")] == {KEYS[0]: "0:1,1:2"}  # the other is Kafka's default
    assert got[t("quiet")] == {}
    assert (
        isinstance(got[t("gone")], KafkaOperationError)
        and got[t("gone")].name == "UNKNOWN_TOPIC_OR_PARTITION"
    )
    # broker 1's own rate; the default's value is not its own; a sensitive override has no value
    assert got[b("1")] == {rates[0]: "1048576", "zażółć": None}
    assert got[b("")] == {rates[1]: "7"}  # the dynamic default itself
    assert read_overrides(_read(answer(version), version), [b("1")], rates[1:2]) == {b("1"): {}}
    assert isinstance(got[t("unasked")], KafkaOperationError) and "no answer" in got[t("unasked")].message


@pytest.mark.parametrize("version", VERSIONS)
def test_every_override_when_no_names_are_given(version):
    t, b = (lambda n: ConfigResource("TOPIC", n)), (lambda n: ConfigResource("BROKER", n))
    got = read_overrides(_read(answer(version), version), [t("moving"), t("quiet"), b("1"), b("")], None)
    assert got == {
        t("moving"): {KEYS[0]: "0:1,1:2"},
        t("quiet"): {},  # its retention.ms comes from a broker
        b("1"): {"leader.replication.throttled.rate": "1048576", "zażółć": None},
        b(""): {"follower.replication.throttled.rate": "7"},
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_asked_for_overrides_the_reader_decodes_only_their_entries(version):
    every = _read(answer(version), version)
    lean = _read(answer(version), version, OVERRIDE_SOURCES)
    assert [r[:4] for r in lean] == [r[:4] for r in every]
    assert [r[4] for r in lean] == [
        {k: v for k, v in r[4].items() if v[1] in OVERRIDE_SOURCES} for r in every
    ]
    assert sum(len(r[4]) for r in lean) < sum(len(r[4]) for r in every)
    group = [ConfigResource("TOPIC", n) for n in ("moving", "quiet")]
    assert read_overrides(lean, group, None) == read_overrides(every, group, None)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_truncation_and_extra_byte_is_refused(version):
    data = answer(version)
    for sources in (None, OVERRIDE_SOURCES):
        for end in range(len(data)):
            with pytest.raises(ValueError):
                _read(data[:end], version, sources)
        with pytest.raises(ValueError):
            _read(data + b"\0", version, sources)


@pytest.mark.parametrize("version", VERSIONS)
def test_random_corruption_reads_as_kafka_python_or_is_refused(version):
    data = answer(version)
    rng = random.Random(version)
    for _ in range(400):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        try:
            got = _read(bytes(bad), version)
        except (ValueError, UnicodeDecodeError):
            continue
        try:
            want = DescribeConfigsResponse.decode(bytes(bad), version=version)
        except (UnicodeDecodeError, ValueError):  # in a field read past unread (a synonym, docs)
            continue
        assert [r[1] for r in got] == [r.resource_name for r in want.results]
        assert [r[4] for r in got] == [
            {c.name: (c.value, c.config_source, bool(c.is_sensitive)) for c in r.configs}
            for r in want.results
        ]


def test_an_unreadable_answer_is_a_kafka_error_and_its_buffer_is_released():
    a = _Answer(4, bytearray(b"hdr" + answer(4)[:-3]), 3)
    with pytest.raises(KafkaOperationError, match="unreadable DescribeConfigs answer"):
        read_results(a)
    assert a.buffer is None
    good = _Answer(4, bytearray(b"hdr" + answer(4)), 3)
    assert [r[1] for r in read_results(good)] == ["moving", "quiet", "gone", "1", ""]
    with pytest.raises(ValueError):
        _read(answer(4), 5)
