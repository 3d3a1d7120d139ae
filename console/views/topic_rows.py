"""The topic list's table rows, built as plain strings.

The list's rows were most of its template's work (a loop of ~15 tags per topic); this writes the
same markup the loop in console/_topic_table.html wrote, every value escaped as the template's
autoescape escaped it, and the template writes it as it is.
"""

from __future__ import annotations

import re

from django.template.defaultfilters import date as date_filter
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import template_localtime

from console.templatetags.console_format import config, size

_DASH = "—"


def _size_cell(item, sizes) -> str:
    if not sizes.has_snapshot:
        note = "snapshot unreadable" if sizes.error else "no snapshot yet"
        return f'<span class="muted">{note}</span>'
    known = item.size
    if known is None:
        when = escape(date_filter(template_localtime(sizes.ts), "Y-m-d H:i T"))
        return (
            f'<span class="muted" title="not in the snapshot of {when}: created since">not in snapshot</span>'
        )
    if not known.known:
        return '<span class="muted" title="no broker reported its leader\'s size">unknown</span>'
    prefix = ""
    if not known.complete:
        prefix = f'<span title="{escape(known.unknown)} of {escape(known.partitions)} partitions without a size">≥ </span>'
    return prefix + size(known.bytes)


_INTERNAL = ' <span class="badge">internal</span>'
_FAILED = ' class="state-failed"'
#: Kafka's legal topic names: reversed once and joined (``reverse`` quotes nothing in them)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+")


def topic_rows_html(page, cluster_name: str, can_manage: bool) -> SafeString:
    """``page.items`` (a ``reads.TopicPage``) as the table's rows."""
    head, _, tail = reverse("topic_detail", kwargs={"name": cluster_name, "topic": "t"}).rpartition("/t/")
    sizes = page.sizes
    out = []
    for item in page.items:
        row = item.row
        name = escape(row.name)
        if can_manage:
            box = (
                ""
                if row.internal
                else f'<input type="checkbox" name="names" value="{name}" aria-label="select {name}">'
            )
            check = f"<td>{box}</td>"
        else:
            check = ""
        if _PLAIN_NAME.fullmatch(row.name):
            href = f"{head}/{row.name}/{tail}"
        else:
            href = escape(reverse("topic_detail", kwargs={"name": cluster_name, "topic": row.name}))
        under = row.under_replicated
        offline = row.offline
        out.append(
            f'\n      <tr data-topic="{name}">\n        {check}\n'
            f'        <td class="mono"><a href="{href}">{name}</a>{_INTERNAL if row.internal else ""}</td>\n'
            f"        <td>{escape(row.partitions)}</td>\n"
            f"        <td>{escape(row.replication_factor)}</td>\n"
            f"        <td{_FAILED if under else ''}>{escape(under)}</td>\n"
            f"        <td>{_DASH if item.under_min_isr is None else escape(item.under_min_isr)}</td>\n"
            f"        <td{_FAILED if offline else ''}>{escape(offline)}</td>\n"
            f"        <td>{escape(item.cleanup_policy) if item.cleanup_policy else _DASH}</td>\n"
            f"        <td>{config(item.retention_ms, 'retention.ms') if item.retention_ms else _DASH}</td>\n"
            f'        <td class="size">{_size_cell(item, sizes)}</td>\n'
            "      </tr>\n    "
        )
    return mark_safe("".join(out))  # noqa: S308 - every value above is escaped


def result_rows_html(outcomes) -> SafeString:
    """The results table body of a create or delete (``actions.TopicOutcome`` each): the markup
    the loop in console/_topic_results.html wrote (1,000 rows for a batch), every value escaped."""
    rows = []
    for o in outcomes:
        name = escape(o.name)
        state = "state-succeeded" if o.ok else "state-failed"
        details = (f"<code>{escape(o.error_name)}</code> " if o.error_name else "") + escape(o.message)
        if o.warning:
            details += f'<br><span class="muted">⚠ {escape(o.warning)}</span>'
        rows.append(
            f'<tr data-topic="{name}"><td class="mono">{name}</td>'
            f'<td class="{state}">{escape(o.status)}</td><td>{details}</td></tr>'
        )
    return mark_safe("\n".join(rows))  # noqa: S308 - every value above is escaped
