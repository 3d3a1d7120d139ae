"""The topic page's three tables (partitions, configs, recent changes), built as plain strings.

A 1,000-partition topic is 10,000 cells, and the configs and events loops were half the template's
work; these write the markup the template loops wrote (every value escaped as autoescape escaped
it), and the template writes it as it is.
"""

from __future__ import annotations

from functools import lru_cache

from django.template.defaultfilters import date as date_filter
from django.utils.html import escape, strip_tags
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import template_localtime

from console.configs.plan import source_label
from console.templatetags.console_format import config, count, size

_DASH = "—"
_OFFLINE = '<span class="badge state-failed">offline</span>'
_UNDER = '<span class="badge state-failed">under-replicated</span>'
_MOVED = '<span class="badge">leader is not preferred</span>'
_NO_LEADER = '<span class="state-failed">none</span>'


def partition_rows_html(partitions, sizes: dict | None = None, size_note: str = _DASH) -> SafeString:
    """The partitions table body (``reads.PartitionRow`` each), in one pass.

    ``sizes`` are the partitions' sizes in the latest telemetry snapshot; ``size_note`` is shown
    for a partition without one ("no snapshot yet", "not in snapshot").
    """
    sizes = sizes or {}
    note = escape(size_note)
    joined: dict[tuple[int, ...], str] = {}  # an in-sync ISR is its replica list: joined once

    def ids(values: tuple[int, ...]) -> str:
        text = joined.get(values)
        if text is None:
            text = joined[values] = ", ".join(map(int.__repr__, values))  # ints only: a str raises
        return text

    rows = []
    for p in partitions:
        # PartitionRow's fields, its offline / under_replicated / leader_not_preferred / messages
        # worked out inline (1,000 rows); every cell is an int, a list of ints or fixed markup,
        # except the size text (escaped).
        pid, leader, replicas, isr, offline_replicas, start, end = p
        offline = leader < 0
        health = (
            (_OFFLINE if offline else "")
            + (_UNDER if len(isr) < len(replicas) else "")
            + (_MOVED if not offline and replicas and leader != replicas[0] else "")
        )
        if start is None or end is None:
            start_cell = _DASH if start is None else count(int(start))
            end_cell = _DASH if end is None else count(int(end))
            messages = _DASH
        else:
            start_cell, end_cell, messages = (
                count(int(start)),
                count(int(end)),
                count(max(0, int(end) - int(start))),
            )
        got = sizes.get(pid)
        if got is None:
            shown = note
        else:
            shown = "unknown" if got.bytes is None else size(got.bytes)
        rows.append(
            f"<tr><td>{int(pid)}</td><td>{_NO_LEADER if offline else int(leader)}</td>"
            f'<td class="mono">{ids(replicas)}</td><td class="mono">{ids(isr)}</td>'
            f'<td class="mono">{ids(offline_replicas) or _DASH}</td>'
            f"<td>{start_cell}</td><td>{end_cell}</td><td>{messages}</td>"
            f"<td>{shown}</td><td>{health}</td></tr>"
        )
    return mark_safe("\n".join(rows))


@lru_cache(maxsize=1024)
def _doc_title(documentation: str) -> str:
    """A config's documentation as a title attribute (Kafka's few hundred texts never change)."""
    return escape(strip_tags(documentation))


_OVERRIDE = "DYNAMIC_TOPIC_CONFIG"
_OVERRIDE_CLASS = ' class="override"'
_HIDDEN = '<span class="muted">(hidden)</span>'
_READ_ONLY = '<span class="badge">read-only</span>'
_SENSITIVE = '<span class="badge">sensitive</span>'


def config_rows_html(configs) -> SafeString:
    """The configs table body (``ConfigEntry`` each, overrides first)."""
    out = []
    for e in configs:
        override = e.source == _OVERRIDE
        source = escape(source_label(e.source))
        if e.sensitive:
            value = _HIDDEN
        else:
            value = "(not set)" if e.value is None else config(e.value, e.name)
        title = _doc_title(e.documentation) if e.documentation else ""
        out.append(
            f"\n    <tr{_OVERRIDE_CLASS if override else ''}>\n"
            f'      <td class="mono" title="{title}">{escape(e.name)}</td>\n'
            f'      <td class="mono">{value}</td>\n'
            f"      <td>{'<strong>' + source + '</strong>' if override else source}</td>\n"
            f"      <td>{_READ_ONLY if e.read_only else ''}{_SENSITIVE if e.sensitive else ''}</td>\n"
            "    </tr>\n  "
        )
    return mark_safe("".join(out))


def event_rows_html(events) -> SafeString:
    """The recent changes table body (``AuditEvent`` each, newest first)."""
    return mark_safe(
        "".join(
            [
                f"<tr><td>{escape(e.pk)}</td>"
                f"<td>{escape(date_filter(template_localtime(e.created_at), 'Y-m-d H:i:s'))}</td>"
                f'<td>{escape(e.actor_name)}</td><td class="mono">{escape(e.action)}</td>'
                f"<td>{escape(e.outcome)}</td></tr>"
                for e in events
            ]
        )
    )
