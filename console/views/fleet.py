"""The fleet home: every cluster the user may see, from each cluster's summary (no read of Kafka).

The table's rows are written as plain strings (as the topic list's are, ``topic_rows``): fifteen
cells a cluster were most of the template's work; every value is escaped as autoescape would.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from console.fleet import home
from console.formatting import human_duration
from console.forms.fleet import FleetFilterForm
from console.templatetags.console_format import count

_DASH = "–"
_BAD = ' class="error"'
_CONTROLLER_MODE = '<div class="muted">controller mode</div>'


def _headers(query: dict) -> list[dict]:
    """Each header's link: sorted by its column, the other way round when it already is."""
    kept = {k: v for k, v in (("q", query["text"]), ("state", query["state"])) if v}
    out = []
    for key, label, _ in home.COLUMNS:
        flip = key == query["sort"] and not query["descending"]
        params = {**kept, "sort": key, **({"desc": "1"} if flip else {})}
        arrow = ("▼" if query["descending"] else "▲") if key == query["sort"] else ""
        out.append({"key": key, "label": label, "href": "?" + urlencode(params), "arrow": arrow})
    return out


def _figure(value, warn: bool = False) -> str:
    if value is None:
        return f"<td>{_DASH}</td>"
    return f"<td{_BAD if warn and value else ''}>{count(value)}</td>"


def _state_cell(r: home.FleetRow) -> str:
    if r.state == home.UNREACHABLE:
        error = escape(r.error)
        short = escape(r.error if len(r.error) <= 120 else r.error[:119] + "…")
        text = f'<span class="error" title="{error}">unreachable</span><div class="muted">{short}</div>'
    elif r.state == home.UNHEALTHY:
        text = '<span class="error">unhealthy</span>'
    elif r.state == home.NEVER:
        text = '<span class="muted">never snapshotted</span>'
    else:
        text = '<span class="badge">healthy</span>'
    return f"<td>{text}{_CONTROLLER_MODE if r.controller_mode else ''}</td>"


def rows_html(rows: list[home.FleetRow], now) -> SafeString:
    """The table's rows: each cluster linked to its overview, its figures, their age."""
    overview = reverse("cluster_overview", kwargs={"name": "c"}).rpartition("/c/")[0]
    queue = reverse("review_queue")
    out = []
    for r in rows:
        name = escape(r.name)  # a slug: [-a-zA-Z0-9_], as the cluster's URL takes it
        described = f'<div class="muted">{escape(r.description)}</div>' if r.description else ""
        if r.brokers_total is None:
            brokers = f"<td>{_DASH}</td>"
        else:
            brokers = (
                f"<td{_BAD if r.brokers_up < r.brokers_total else ''}>{r.brokers_up} / {r.brokers_total}</td>"
            )
        held = (
            f'<a href="{queue}?cluster={name}&amp;state=pending">{r.held_changes}</a>'
            if r.held_changes
            else "0"
        )
        alerts = (
            f'<a class="{"error" if r.alert_severity == "critical" else "warn"}" href="{overview}/{name}/alerts/">'
            f"{r.open_alerts}</a>"
            if r.open_alerts
            else "0"
        )
        age = f"as of {human_duration(home.as_of(r, now))} ago" if r.taken_at else "never snapshotted"
        age = age.replace(" ", "&nbsp;")  # one line: the column stays narrow
        out.append(
            f'<tr data-cluster="{name}" data-state="{r.state}">'
            f'<td><a href="{overview}/{name}/">{name}</a>{described}</td>'
            f"{_state_cell(r)}"
            f"<td>{escape(r.kafka_version) or _DASH}</td>"
            f'<td class="mono">{escape(r.metadata_version) or _DASH}</td>'
            f"{_figure(r.controller_id)}{brokers}{_figure(r.topics)}{_figure(r.partitions)}"
            f"{_figure(r.under_replicated, True)}{_figure(r.offline, True)}{_figure(r.under_min_isr, True)}"
            f"{_figure(r.consumer_groups)}<td>{r.running_operations}</td><td>{held}</td>"
            f'<td class="open-alerts">{alerts}</td>'
            f'<td class="as-of">{age}</td></tr>\n'
        )
    return mark_safe("".join(out))  # noqa: S308 - every value above is escaped or a number


@login_required
@require_GET
def fleet_home(request):
    form = FleetFilterForm(request.GET or None)
    query = form.query()
    rows = home.fleet(request.user, **query)
    context = {
        "form": form,
        "query": query,
        "fleet": rows,
        "rows_html": rows_html(rows, timezone.now()),
        "headers": _headers(query),
    }
    return render(request, "console/fleet/home.html", context)
