"""The topic page's tables built as strings (console/views/topic_detail_rows.py) = the markup they
replace: the configs and recent-changes template loops (kept verbatim below) and the former
partition-row builder (kept verbatim below), for every branch of every cell and hostile text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.template import engines
from django.utils import timezone
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe

from console.configs.plan import source_label
from console.kafka.types import ConfigEntry
from console.telemetry.sizes import PartitionSize
from console.templatetags.console_format import count
from console.topics.reads import EventRow, PartitionRow
from console.views.topic_detail_rows import config_rows_html, event_rows_html, partition_rows_html

HOSTILE = "<b>&\"'x"
ESCAPED = "&lt;b&gt;&amp;&quot;&#x27;x"

# The configs loop of console/topic_detail.html before the rows were built in Python (verbatim, with the
# console_format filter of issue 38 for the value).
CONFIGS_LOOP = (
    "{% load console_format %}"
    "  {% for e, source in config_rows %}\n"
    '    <tr{% if e.source == "DYNAMIC_TOPIC_CONFIG" %} class="override"{% endif %}>\n'
    '      <td class="mono" title="{{ e.documentation|default:\'\'|striptags }}">{{ e.name }}</td>\n'
    '      <td class="mono">{% if e.sensitive %}<span class="muted">(hidden)</span>{% elif e.value is None %}(not set){% else %}{{ e.value|config:e.name }}{% endif %}</td>\n'
    '      <td>{% if e.source == "DYNAMIC_TOPIC_CONFIG" %}<strong>{{ source }}</strong>{% else %}{{ source }}{% endif %}</td>\n'
    '      <td>{% if e.read_only %}<span class="badge">read-only</span>{% endif %}{% if e.sensitive %}<span class="badge">sensitive</span>{% endif %}</td>\n'
    "    </tr>\n"
    "  {% endfor %}"
)
# The recent changes loop (verbatim).
EVENTS_LOOP = (
    '{% for e in detail.events %}<tr><td>{{ e.pk }}</td><td>{{ e.created_at|date:"Y-m-d H:i:s" }}</td>'
    '<td>{{ e.actor_name }}</td><td class="mono">{{ e.action }}</td><td>{{ e.outcome }}</td></tr>{% endfor %}'
)


def reference_partition_rows(partitions, sizes=None, size_note="—"):
    """console/views/topics.py's ``_partition_rows`` before the move (verbatim but for the name and the
    console_format filters of issue 38: offsets and counts grouped, sizes in binary units)."""
    from console.templatetags.console_format import size as human_size

    _DASH = "—"
    sizes = sizes or {}

    def size(p):
        got = sizes.get(p.id)
        if got is None:
            return size_note
        return "unknown" if got.bytes is None else human_size(got.bytes)

    offline_badge = '<span class="badge state-failed">offline</span>'
    under_badge = '<span class="badge state-failed">under-replicated</span>'
    moved_badge = '<span class="badge">leader is not preferred</span>'
    no_leader = '<span class="state-failed">none</span>'

    def ids(values) -> str:
        return ", ".join([str(int(v)) for v in values])

    def row(p) -> str:
        health = (
            (offline_badge if p.offline else "")
            + (under_badge if p.under_replicated else "")
            + (moved_badge if p.leader_not_preferred else "")
        )
        messages = p.messages
        return (
            f"<tr><td>{int(p.id)}</td><td>{no_leader if p.offline else int(p.leader)}</td>"
            f'<td class="mono">{ids(p.replicas)}</td><td class="mono">{ids(p.isr)}</td>'
            f'<td class="mono">{ids(p.offline_replicas) or _DASH}</td>'
            f"<td>{_DASH if p.start_offset is None else count(int(p.start_offset))}</td>"
            f"<td>{_DASH if p.end_offset is None else count(int(p.end_offset))}</td>"
            f"<td>{_DASH if messages is None else count(int(messages))}</td>"
            f"<td>{conditional_escape(size(p))}</td><td>{health}</td></tr>"
        )

    return mark_safe("\n".join(row(p) for p in partitions))


PARTITIONS = [
    PartitionRow(0, 1, (1, 2, 3), (1, 2, 3), (), 0, 120),  # healthy
    PartitionRow(1, 2, (1, 2, 3), (2, 3), (), 5, 5),  # under-replicated, leader not preferred
    PartitionRow(2, -1, (3, 1, 2), (), (3, 1, 2), None, None),  # offline, no offsets
    PartitionRow(3, 3, (3, 1, 2), (3, 1, 2), (1,), 10, 4),  # offsets went back: 0 messages
    PartitionRow(4, 1, (1, 2, 3), (1, 2, 3), (), 7, None),  # same replica list as partition 0
    PartitionRow(5, 1, (), (), (), 0, 0),  # no replicas
    PartitionRow(6, 2, (2,), (2,), (), 2_000_000_000_000, 2_000_000_000_001),
    PartitionRow(7, -1, (2, 3), (2, 3), (), None, 9),  # offline with a full ISR; no start offset
]
PART_SIZES = {0: PartitionSize(0, 10_000), 1: PartitionSize(1, None), 3: PartitionSize(3, 123_456_789)}


def test_partition_rows_equal_the_former_builder():
    for sizes, note in ((PART_SIZES, "not in snapshot"), (None, "no snapshot yet"), ({}, HOSTILE)):
        expected = reference_partition_rows(PARTITIONS, sizes, note)
        got = partition_rows_html(PARTITIONS, sizes, note)
        assert got == expected
    assert HOSTILE not in partition_rows_html(PARTITIONS, {}, HOSTILE)
    assert partition_rows_html([]) == ""


def test_a_replica_list_that_is_not_ints_is_refused_not_written():
    with pytest.raises(TypeError):
        partition_rows_html([PartitionRow(0, 1, ("<script>",), (1,), (), 0, 0)])


def _config(name, value, source, *, read_only=False, sensitive=False, doc=None):
    return ConfigEntry(
        name, value, source, read_only, sensitive, source == "DEFAULT_CONFIG", documentation=doc
    )


CONFIGS = [
    _config("retention.ms", "3600000", "DYNAMIC_TOPIC_CONFIG", doc="How <b>long</b> to keep & more"),
    _config("cleanup.policy", HOSTILE, "DYNAMIC_TOPIC_CONFIG"),
    _config("segment.bytes", "1073741824", "DEFAULT_CONFIG", doc=""),
    _config("min.insync.replicas", None, "STATIC_BROKER_CONFIG", read_only=True),
    _config("sasl.jaas.config", None, "DYNAMIC_BROKER_CONFIG", sensitive=True, doc=HOSTILE),
    _config("ssl.key.password", "x", "UNKNOWN_SOURCE", read_only=True, sensitive=True),
    _config(f"n{HOSTILE}", "", "DYNAMIC_DEFAULT_BROKER_CONFIG", doc='<a href="x">a</a> "q"'),
]


def test_config_rows_equal_the_template_loop():
    template = engines["django"].from_string(CONFIGS_LOOP)
    expected = template.render({"config_rows": [(e, source_label(e.source)) for e in CONFIGS]})
    got = config_rows_html(CONFIGS)
    assert "  " + got == expected  # the template writes "  {{ config_rows }}" where the loop was
    assert HOSTILE not in got and ESCAPED in got
    assert config_rows_html([]) == ""


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_event_rows_equal_the_template_loop(zone):
    when = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    events = [
        EventRow(
            pk=1_234_567, created_at=when, actor_name="alice", action="topic.create", outcome="requested"
        ),
        EventRow(pk=2, created_at=when, actor_name=HOSTILE, action=f"a{HOSTILE}", outcome=HOSTILE),
        EventRow(
            pk=3,
            created_at=datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC),
            actor_name="",
            action="x",
            outcome="",
        ),
    ]
    template = engines["django"].from_string(EVENTS_LOOP)
    with timezone.override(zone):  # the user's zone, as the middleware sets it
        expected = template.render({"detail": {"events": events}})
        got = event_rows_html(events)
    assert got == expected
    assert HOSTILE not in got and ESCAPED in got
    assert event_rows_html([]) == ""
