"""The fleet home: every cluster the user may see, from each cluster's summary (no read of Kafka)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from console.fleet import home
from console.formatting import human_duration
from console.forms.fleet import FleetFilterForm


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


@login_required
@require_GET
def fleet_home(request):
    form = FleetFilterForm(request.GET or None)
    query = form.query()
    rows = home.fleet(request.user, **query)
    now = timezone.now()
    shown = [{"row": r, "age": human_duration(home.as_of(r, now)) if r.taken_at else ""} for r in rows]
    context = {"form": form, "query": query, "rows": shown, "headers": _headers(query)}
    return render(request, "console/fleet/home.html", context)
