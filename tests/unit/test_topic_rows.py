"""The topic list's rows built as strings (console/views/topic_rows.py) = the markup of the template
loop they replace (kept below as the reference), for every branch of every cell and hostile text."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from django.template import engines

from console.telemetry.sizes import SnapshotSizes, TopicSize
from console.topics.cache import TopicRow
from console.topics.reads import TopicListItem
from console.views.topic_rows import topic_rows_html

# The loop of console/_topic_table.html before the rows were built in Python (verbatim, with the
# console_format filters of issue 38 for the retention and the size).
REFERENCE_LOOP = (
    "{% load console_format %}"
    "    {% for item in page.items %}\n"
    '      <tr data-topic="{{ item.row.name }}">\n'
    '        {% if can_manage %}<td>{% if not item.row.internal %}<input type="checkbox" name="names" value="{{ item.row.name }}" aria-label="select {{ item.row.name }}">{% endif %}</td>{% endif %}\n'
    '        <td class="mono"><a href="{% url \'topic_detail\' name=cluster.name topic=item.row.name %}">{{ item.row.name }}</a>{% if item.row.internal %} <span class="badge">internal</span>{% endif %}</td>\n'
    "        <td>{{ item.row.partitions }}</td>\n"
    "        <td>{{ item.row.replication_factor }}</td>\n"
    '        <td{% if item.row.under_replicated %} class="state-failed"{% endif %}>{{ item.row.under_replicated }}</td>\n'
    "        <td>{% if item.under_min_isr is None %}—{% else %}{{ item.under_min_isr }}{% endif %}</td>\n"
    '        <td{% if item.row.offline %} class="state-failed"{% endif %}>{{ item.row.offline }}</td>\n'
    '        <td>{{ item.cleanup_policy|default:"—" }}</td>\n'
    '        <td>{% if item.retention_ms %}{{ item.retention_ms|config:"retention.ms" }}{% else %}—{% endif %}</td>\n'
    '        <td class="size">{% if not page.sizes.has_snapshot %}<span class="muted">{% if page.sizes.error %}snapshot unreadable{% else %}no snapshot yet{% endif %}</span>{% elif item.size is None %}<span class="muted" title="not in the snapshot of {{ page.sizes.ts|date:\'Y-m-d H:i T\' }}: created since">not in snapshot</span>{% elif not item.size.known %}<span class="muted" title="no broker reported its leader\'s size">unknown</span>{% else %}{% if not item.size.complete %}<span title="{{ item.size.unknown }} of {{ item.size.partitions }} partitions without a size">≥ </span>{% endif %}{{ item.size.bytes|size }}{% endif %}</td>\n'
    "      </tr>\n"
    "    {% endfor %}\n"
)

HOSTILE = "<b>&\"'x"


def _items():
    rows = [
        TopicRow("orders", 3, 2, 0, 0, False),
        TopicRow("__consumer_offsets", 50, 3, 1, 0, True, (2,)),
        TopicRow("bad.topic-1_x", 4, 3, 2, 1, False, (1, 3, 0, 3)),
        TopicRow("with space é", 1, 1, 0, 1, False),  # not a legal Kafka name: reversed as it is
        TopicRow(f"h{HOSTILE}", 1, 1, 0, 0, False),
    ]
    values = [
        ("delete", "604800000", 0, TopicSize(10_000, 3)),
        (None, None, None, None),
        ("compact", "", 2, TopicSize(5, 4, 4)),  # no partition size known
        (HOSTILE, HOSTILE, 1, TopicSize(123_456_789, 10, 3)),  # incomplete
        ("", "-1", 0, TopicSize(0, 1)),
    ]
    return [TopicListItem(r, c, ret, u, s) for r, (c, ret, u, s) in zip(rows, values, strict=True)]


SIZES = [
    SnapshotSizes(),
    SnapshotSizes(error="unreadable file"),
    SnapshotSizes(ts=datetime(2026, 3, 4, 5, 6, tzinfo=UTC), topics={}),
]


@pytest.mark.parametrize("can_manage", [True, False])
@pytest.mark.parametrize("sizes", SIZES, ids=["no-snapshot", "error", "snapshot"])
def test_rows_equal_the_template_loop(can_manage, sizes):
    page = SimpleNamespace(items=_items(), sizes=sizes)
    cluster = SimpleNamespace(name="prod-1")
    template = engines["django"].from_string("".join(REFERENCE_LOOP))
    expected = template.render({"page": page, "cluster": cluster, "can_manage": can_manage})
    got = topic_rows_html(page, cluster.name, can_manage)
    # the template writes "    {{ topic_rows }}\n" where the loop's lines were
    assert "    " + got + "\n" == expected
    assert HOSTILE not in got and "&lt;b&gt;&amp;&quot;&#x27;x" in got


def test_no_rows():
    assert topic_rows_html(SimpleNamespace(items=[], sizes=SnapshotSizes()), "c", True) == ""


# The loop of console/_topic_results.html before its rows were built in Python (verbatim).
RESULTS_LOOP = (
    "    {% for o in result.outcomes %}\n"
    '      <tr data-topic="{{ o.name }}"><td class="mono">{{ o.name }}</td>\n'
    '        <td class="{% if o.ok %}state-succeeded{% else %}state-failed{% endif %}">{{ o.status }}</td>\n'
    '        <td>{% if o.error_name %}<code>{{ o.error_name }}</code> {% endif %}{{ o.message }}{% if o.warning %}<br><span class="muted">⚠ {{ o.warning }}</span>{% endif %}</td></tr>\n'
    "    {% endfor %}\n"
)


def test_result_rows_equal_the_template_loop():
    import re

    from console.topics.actions import TopicOutcome
    from console.views.topic_rows import result_rows_html

    outcomes = [
        TopicOutcome("orders", True, "created"),
        TopicOutcome("a.b", True, "created", warning="collides with a_b"),
        TopicOutcome(
            "taken", False, "already exists", "Topic 'taken' already exists.", "TOPIC_ALREADY_EXISTS"
        ),
        TopicOutcome(HOSTILE, False, HOSTILE, HOSTILE, HOSTILE, HOSTILE),
        TopicOutcome("p", False, "refused by policy", "too many [policy rule: partitions]", "POLICY"),
        TopicOutcome("v", True, "valid (dry run)", ""),
    ]
    expected = engines["django"].from_string(RESULTS_LOOP).render({"result": {"outcomes": outcomes}})
    got = result_rows_html(outcomes)

    def tags(html: str) -> str:  # the loop's indentation and line breaks between tags aside
        return re.sub(r">\s+<", "><", html.strip())

    assert tags(got) == tags(expected)
    assert got.count("<tr ") == 6 and HOSTILE not in got and "&lt;b&gt;&amp;&quot;&#x27;x" in got
    assert result_rows_html([]) == ""
