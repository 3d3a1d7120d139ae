"""Browsing messages on the sandbox: every mode, the limits, masking, permissions and the audit rows."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404

from console import access
from console.clusters.actions import gateway_for
from console.messages import actions, audit_names, reads
from console.messages.core import BrowseInvalid, BrowseQuery
from console.models import AuditEvent, DataGrant

T0 = 1_700_000_000_000


@pytest.fixture
def world(kafka_cluster, personas, sandbox):
    """A topic of its own (prefix "b-<uuid>."), the viewer granted data.read on the prefix."""
    prefix = f"b-{uuid.uuid4().hex[:8]}."
    DataGrant.objects.create(cluster=kafka_cluster, user=personas["viewer"], prefix=prefix, read=True)
    return prefix


def _topic(sandbox, kafka_cluster, name, partitions=1, records=()):
    """Create ``name`` and write ``records``: (partition, key, value, headers, timestamp offset)."""
    sandbox.create_topic(name, partitions=partitions)
    gw = gateway_for(kafka_cluster)
    for partition, key, value, headers, dt in records:
        gw.produce_record(
            name, partition=partition, key=key, value=value, headers=headers, timestamp_ms=T0 + dt
        )
    return name


def _reads():
    return list(AuditEvent.objects.filter(action=audit_names.MESSAGES_READ).order_by("id"))


def _browse(cluster, who, topic, **query):
    return reads.browse(
        actor=who, cluster=cluster, topic=topic, query=BrowseQuery(**query), source_ip="10.1.1.1"
    )


def _ten(prefix):
    return [
        (0, f"k{i}".encode(), json.dumps({"n": i}).encode(), (("h", f"v{i}".encode()),), i) for i in range(10)
    ]


def test_it_reads_from_an_offset_with_every_field_and_audits_the_read(
    sandbox, kafka_cluster, personas, world
):
    topic = _topic(sandbox, kafka_cluster, world + "offset", records=_ten(world))
    result = _browse(kafka_cluster, personas["viewer"], topic, mode="offset", partition=0, offset=3, count=4)
    assert [(m.partition, m.offset, m.key, m.value, m.headers) for m in result.messages] == [
        (0, i, f"k{i}", '{\n  "n": ' + str(i) + "\n}", (("h", f"v{i}"),)) for i in range(3, 7)
    ]
    first = result.messages[0]
    assert (
        first.timestamp,
        first.timestamp_type,
        first.key_kind,
        first.value_kind,
        first.schema_id,
        first.masked_by,
    ) == (
        T0 + 3,
        "CreateTime",
        "text",
        "json",
        None,
        (),
    )
    assert first.size > 0
    assert (result.masked, result.rules, result.cursor, result.stopped, result.scanned) == (
        True,
        (),
        {0: 7},
        "",
        4,
    )
    [event] = _reads()
    assert (event.actor_name, event.cluster_name, event.targets, event.outcome, event.source_ip) == (
        "viewer",
        "sandbox",
        [f"topic:{topic}"],
        "success",
        "10.1.1.1",
    )
    assert event.params == {
        "mode": "offset",
        "partitions": [0],
        "offsets": {"0": "3..6"},
        "read": {"0": "3..6"},
        "shown": 4,
        "scanned": 4,
        "masked": True,
        "rules": [],
        "reason": "",
        "filters": [],
        "stopped": "",
    }


def test_it_stops_at_the_high_watermark_and_says_so(sandbox, kafka_cluster, personas, world):
    topic = _topic(sandbox, kafka_cluster, world + "end", records=_ten(world))
    result = _browse(kafka_cluster, personas["viewer"], topic, mode="offset", partition=0, offset=8, count=5)
    assert ([m.offset for m in result.messages], result.stopped, result.cursor) == (
        [8, 9],
        "reached the high watermark",
        {0: 10},
    )
    at_end = _browse(kafka_cluster, personas["viewer"], topic, mode="offset", partition=0, offset=10, count=5)
    assert (at_end.messages, at_end.stopped, at_end.scanned) == ((), "reached the high watermark", 0)


def test_it_refuses_what_it_cannot_read_with_a_clear_message(sandbox, kafka_cluster, personas, world):
    topic = _topic(sandbox, kafka_cluster, world + "bad", partitions=2, records=_ten(world))
    with sandbox.state.lock:
        sandbox.state.topics[topic].partitions[0].log_start_offset = 5
    viewer = personas["viewer"]
    cases = [
        (
            dict(mode="offset", partition=0, offset=3),
            "offset 3 is below the log start 5 of partition 0: the oldest message there is at 5",
        ),
        (
            dict(mode="offset", partition=0, offset=11),
            "offset 11 is above the high watermark 10 of partition 0: the newest message there is at 9",
        ),
        (
            dict(mode="offset", partition=1, offset=1),
            "offset 1 is above the high watermark 0 of partition 1: it holds no message",
        ),
        (
            dict(mode="offset", partition=2, offset=0),
            f"partition 2 is out of range: topic '{topic}' has partitions 0 to 1",
        ),
        (
            dict(mode="newest", partition=7),
            f"partition 7 is out of range: topic '{topic}' has partitions 0 to 1",
        ),
        (dict(mode="offset", partition=None, offset=0), "mode offset needs a partition and an offset"),
    ]
    for query, message in cases:
        with pytest.raises(BrowseInvalid) as caught:
            _browse(kafka_cluster, viewer, topic, **query)
        assert str(caught.value) == message
    with pytest.raises(Http404) as caught:  # not found, as an unknown topic is on every door
        _browse(kafka_cluster, viewer, world + "missing", mode="newest", partition=None)
    assert str(caught.value) == f"There is no topic '{world}missing' on cluster 'sandbox'."
    assert _reads() == []
    oldest = _browse(kafka_cluster, viewer, topic, mode="oldest", partition=0, count=2)
    assert [m.offset for m in oldest.messages] == [5, 6]


def _spread(prefix):
    """Three partitions, timestamps interleaved: partition i % 3 holds the record of time i."""
    return [(i % 3, f"k{i}".encode(), f"v{i}".encode(), (), i) for i in range(12)]


def test_it_reads_by_timestamp_merging_partitions_by_time(sandbox, kafka_cluster, personas, world):
    topic = _topic(sandbox, kafka_cluster, world + "time", partitions=3, records=_spread(world))
    result = _browse(
        kafka_cluster,
        personas["viewer"],
        topic,
        mode="timestamp",
        partition=None,
        timestamp_ms=T0 + 5,
        count=4,
    )
    assert [(m.partition, m.offset, m.value) for m in result.messages] == [
        (2, 1, "v5"),
        (0, 2, "v6"),
        (1, 2, "v7"),
        (2, 2, "v8"),
    ]
    assert result.cursor == {0: 3, 1: 3, 2: 3}
    one = _browse(
        kafka_cluster, personas["viewer"], topic, mode="timestamp", partition=1, timestamp_ms=T0 + 5, count=10
    )
    assert ([m.value for m in one.messages], one.stopped) == (["v7", "v10"], "reached the high watermark")
    later = _browse(
        kafka_cluster, personas["viewer"], topic, mode="timestamp", partition=None, timestamp_ms=T0 + 99
    )
    assert (later.messages, later.cursor) == ((), {0: 4, 1: 4, 2: 4})


def test_it_reads_the_newest_and_the_oldest(sandbox, kafka_cluster, personas, world):
    topic = _topic(sandbox, kafka_cluster, world + "ends", partitions=3, records=_spread(world))
    viewer = personas["viewer"]
    newest = _browse(kafka_cluster, viewer, topic, mode="newest", partition=None, count=4)
    assert ([m.value for m in newest.messages], newest.stopped, newest.cursor) == (
        ["v8", "v9", "v10", "v11"],
        "",
        {0: 4, 1: 4, 2: 4},
    )
    oldest = _browse(kafka_cluster, viewer, topic, mode="oldest", partition=None, count=4)
    assert ([m.value for m in oldest.messages], oldest.cursor) == (
        ["v0", "v1", "v2", "v3"],
        {0: 2, 1: 1, 2: 1},
    )
    everything = _browse(kafka_cluster, viewer, topic, mode="newest", partition=None, count=50)
    assert ([m.value for m in everything.messages], everything.stopped) == (
        [f"v{i}" for i in range(12)],
        "reached the log start",
    )
    assert [(e.params["offsets"], e.params["read"]) for e in _reads()] == [
        ({"0": "3..3", "1": "3..3", "2": "2..3"}, {"0": "0..3", "1": "0..3", "2": "0..3"}),
        ({"0": "0..1", "1": "0..0", "2": "0..0"}, {"0": "0..3", "1": "0..3", "2": "0..3"}),
        ({"0": "0..3", "1": "0..3", "2": "0..3"}, {"0": "0..3", "1": "0..3", "2": "0..3"}),
    ]


def test_it_follows_from_the_high_watermark_auditing_only_polls_that_show_messages(
    sandbox, kafka_cluster, personas, world
):
    topic = _topic(
        sandbox,
        kafka_cluster,
        world + "live",
        partitions=2,
        records=[(i % 2, None, f"v{i}".encode(), (), i) for i in range(4)],
    )
    viewer = personas["viewer"]
    start = _browse(kafka_cluster, viewer, topic, mode="follow", partition=None)
    assert (start.messages, start.cursor, start.stopped) == ((), {0: 2, 1: 2}, "")
    gw = gateway_for(kafka_cluster)
    for partition, value, dt in ((1, b"new-a", 20), (0, b"new-b", 21)):
        gw.produce_record(topic, partition=partition, key=None, value=value, timestamp_ms=T0 + dt)
    polled = _browse(kafka_cluster, viewer, topic, mode="follow", partition=None, cursor=start.cursor)
    assert ([m.value for m in polled.messages], polled.cursor) == (["new-a", "new-b"], {0: 3, 1: 3})
    quiet = _browse(kafka_cluster, viewer, topic, mode="follow", partition=None, cursor=polled.cursor)
    assert (quiet.messages, quiet.cursor) == ((), {0: 3, 1: 3})
    [event] = _reads()
    assert (event.params["mode"], event.params["offsets"], event.params["shown"]) == (
        "follow",
        {"0": "2..2", "1": "2..2"},
        2,
    )


def test_it_keeps_reading_to_fill_the_count_when_filters_drop_messages(
    sandbox, kafka_cluster, personas, world
):
    records = [
        (0, f"k{i}".encode(), (b"match-" if i % 5 == 0 else b"other-") + str(i).encode(), (), i)
        for i in range(30)
    ]
    topic = _topic(sandbox, kafka_cluster, world + "filter", records=records)
    viewer = personas["viewer"]
    newest = _browse(
        kafka_cluster, viewer, topic, mode="newest", partition=None, count=3, value_contains="match"
    )
    assert ([m.offset for m in newest.messages], newest.stopped) == ([15, 20, 25], "")
    oldest = _browse(
        kafka_cluster, viewer, topic, mode="oldest", partition=0, count=3, value_contains="match"
    )
    assert ([m.offset for m in oldest.messages], oldest.scanned, oldest.cursor) == ([0, 5, 10], 11, {0: 11})
    by_key = _browse(kafka_cluster, viewer, topic, mode="oldest", partition=0, count=50, key_contains="k2")
    assert ([m.offset for m in by_key.messages], by_key.scanned, by_key.stopped) == (
        [2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29],
        30,
        "reached the high watermark",
    )
    assert _reads()[-1].params["filters"] == ["key"]


def test_it_stops_at_the_byte_and_time_limits(sandbox, kafka_cluster, personas, world, monkeypatch):
    topic = _topic(
        sandbox, kafka_cluster, world + "limits", records=[(0, None, b"x" * 1000, (), i) for i in range(20)]
    )
    viewer = personas["viewer"]
    monkeypatch.setattr(reads, "MAX_BYTES", 3000)
    bounded = _browse(kafka_cluster, viewer, topic, mode="oldest", partition=0, count=20)
    assert (bounded.stopped, len(bounded.messages) < 20, bounded.cursor) == (
        "4 MiB read",
        True,
        {0: len(bounded.messages)},
    )
    monkeypatch.setattr(reads, "MAX_BYTES", 4 << 20)
    monkeypatch.setattr(reads, "TIME_LIMIT_S", 0)
    late = _browse(kafka_cluster, viewer, topic, mode="oldest", partition=0, count=20)
    assert (late.messages, late.stopped, late.cursor) == ((), "5 s", {0: 0})


def test_it_masks_by_the_rules_of_the_topic_and_reads_unmasked_only_with_a_grant_and_a_reason(
    sandbox, kafka_cluster, personas, world
):
    admin, viewer = personas["admin"], personas["viewer"]
    secret = {"card": "4111-1111-1111-1111", "name": "ann", "ssn": "123-45-6789"}
    topic = _topic(
        sandbox,
        kafka_cluster,
        world + "pay",
        records=[(0, b"key", json.dumps(secret).encode(), (("auth", b"tok-SECRET"),), 0)],
    )
    rules = [
        actions.add_rule(
            actor=admin, cluster=kafka_cluster, kind="json_path", expression="$.card", prefix=world
        ),
        actions.add_rule(actor=admin, cluster=kafka_cluster, kind="header", expression="auth", prefix=world),
        actions.add_rule(actor=admin, cluster=kafka_cluster, kind="regex", expression=r"\d{3}-\d{2}-\d{4}"),
        actions.add_rule(actor=admin, cluster=kafka_cluster, kind="header", expression="other", prefix="zz."),
    ]
    labels = (
        f"json_path $.card (topics '{world}*')",
        f"header auth (topics '{world}*')",
        r"regex \d{3}-\d{2}-\d{4} (every topic)",
    )
    masked = _browse(kafka_cluster, viewer, topic, mode="oldest", partition=0)
    [m] = masked.messages
    assert json.loads(m.value) == {"card": "***", "name": "ann", "ssn": "***"}
    assert (m.headers, set(m.masked_by), masked.masked, set(masked.rules)) == (
        (("auth", "***"),),
        set(labels),
        True,
        set(labels),
    )
    assert len(rules) == 4
    probe = _browse(
        kafka_cluster, viewer, topic, mode="oldest", partition=0, json_path='$.card="4111-1111-1111-1111"'
    )
    assert (probe.messages, probe.scanned) == ((), 1)
    with pytest.raises(PermissionDenied) as caught:
        _browse(kafka_cluster, viewer, topic, mode="oldest", partition=0, unmasked_reason="incident 7")
    assert "unmasked reads" in str(caught.value)
    DataGrant.objects.filter(user=viewer).update(unmasked=True)
    with pytest.raises(PermissionDenied, match="needs a reason"):
        _browse(kafka_cluster, viewer, topic, mode="oldest", partition=0, unmasked_reason=" ")
    plain = _browse(kafka_cluster, viewer, topic, mode="oldest", partition=0, unmasked_reason="incident 7")
    assert (json.loads(plain.messages[0].value), plain.messages[0].headers, plain.masked, plain.rules) == (
        secret,
        (("auth", "tok-SECRET"),),
        False,
        (),
    )
    events = _reads()
    assert [(e.outcome, e.params["masked"], e.params["reason"]) for e in events] == [
        ("success", True, ""),
        ("success", True, ""),
        ("refused", False, "incident 7"),
        ("refused", False, " "),
        ("success", False, "incident 7"),
    ]
    trail = json.dumps(
        [[e.params, e.before, e.after, e.outcomes, e.targets] for e in AuditEvent.objects.all()]
    )
    for value in ("4111", "123-45-6789", "tok-SECRET"):
        assert value not in trail


def test_it_lets_only_grant_holders_and_superusers_read(sandbox, kafka_cluster, personas, world):
    topic = _topic(sandbox, kafka_cluster, world + "who", records=_ten(world)[:2])
    for name in ("operator", "auditor", "requester", "outsider"):
        with pytest.raises(PermissionDenied) as caught:
            _browse(kafka_cluster, personas[name], topic, mode="newest", partition=None)
        assert (
            str(caught.value)
            == f"You need the 'data.read' permission on cluster 'sandbox' for topic '{topic}'."
        )
    with pytest.raises(PermissionDenied):
        _browse(kafka_cluster, access.system_actor(), topic, mode="newest", partition=None)
    with pytest.raises(PermissionDenied):
        _browse(kafka_cluster, personas["viewer"], "other-topic", mode="newest", partition=None)
    admin = _browse(
        kafka_cluster, personas["admin"], topic, mode="newest", partition=None, unmasked_reason="debugging"
    )
    assert ([m.offset for m in admin.messages], admin.masked) == ([0, 1], False)
    assert [(e.actor_name, e.outcome) for e in _reads()] == [
        ("operator", "refused"),
        ("auditor", "refused"),
        ("requester", "refused"),
        ("outsider", "refused"),
        ("console-system", "refused"),
        ("viewer", "refused"),
        ("admin", "success"),
    ]
    assert (
        _reads()[0].params["refused"]
        == f"You need the 'data.read' permission on cluster 'sandbox' for topic '{topic}'."
    )


def test_it_reads_the_newest_backwards_window_by_window_to_fill_the_count(
    sandbox, kafka_cluster, personas, world, monkeypatch
):
    records = [
        (0, None, (b"match-" if i % 5 == 0 else b"other-") + str(i).encode(), (), i) for i in range(30)
    ]
    topic = _topic(sandbox, kafka_cluster, world + "windows", records=records)
    monkeypatch.setattr(reads, "MAX_MESSAGES", 4)  # windows of 4 records, read from the high watermark back
    result = _browse(
        kafka_cluster,
        personas["viewer"],
        topic,
        mode="newest",
        partition=None,
        count=3,
        value_contains="match",
    )
    assert ([m.offset for m in result.messages], result.scanned, result.cursor) == ([15, 20, 25], 16, {0: 30})
    assert (result.stopped, _reads()[-1].params["read"]) == ("", {"0": "14..29"})
    at_limit = _browse(kafka_cluster, personas["viewer"], topic, mode="oldest", partition=0, count=4)
    assert ([m.offset for m in at_limit.messages], at_limit.stopped) == (
        [0, 1, 2, 3],
        "limit of 500 messages",
    )


def test_it_shows_nothing_when_the_read_cannot_be_audited(
    sandbox, kafka_cluster, personas, world, monkeypatch
):
    from django.db import DatabaseError

    from console.audit.outcomes import AuditUnavailable

    topic = _topic(sandbox, kafka_cluster, world + "noaudit", records=_ten(world)[:1])

    def refuse(**_):
        raise DatabaseError("database is locked")

    monkeypatch.setattr(reads.audit, "record", refuse)
    with pytest.raises(AuditUnavailable, match="so the messages are not shown"):
        _browse(kafka_cluster, personas["viewer"], topic, mode="oldest", partition=0)


def test_a_read_from_the_oldest_asks_for_the_log_starts_only(
    sandbox, kafka_cluster, personas, world, monkeypatch
):
    """One ListOffsets (the log starts), not two: the high watermark each partition's read keeps to
    is its first Fetch answer's. An empty partition is read once and ends where it starts."""
    topic = _topic(sandbox, kafka_cluster, world + "starts", partitions=3, records=_ten(world)[:4])
    with sandbox.state.lock:
        sandbox.state.topics[topic].partitions[0].log_start_offset = 1
    gw = gateway_for(kafka_cluster)

    def no_bounds(name):
        raise AssertionError(f"both bounds of {name} were asked for")

    monkeypatch.setattr(type(gw), "partition_bounds", lambda self, name: no_bounds(name))
    everything = _browse(kafka_cluster, personas["viewer"], topic, mode="oldest", partition=None, count=50)
    assert ([m.offset for m in everything.messages], everything.cursor, everything.stopped) == (
        [1, 2, 3],
        {0: 4, 1: 0, 2: 0},
        "reached the high watermark",
    )
    two = _browse(kafka_cluster, personas["viewer"], topic, mode="oldest", partition=0, count=2)
    assert ([m.offset for m in two.messages], two.cursor, two.stopped) == ([1, 2], {0: 3}, "")
    assert [(e.params["partitions"], e.params["read"]) for e in _reads()] == [
        ([0, 1, 2], {"0": "1..3"}),
        ([0], {"0": "1..2"}),
    ]
