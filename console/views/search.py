"""The cross-cluster search page: one box, every visible cluster's topics, groups and principals."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, urlencode

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import RFC3986_SUBDELIMS
from django.views.decorators.http import require_GET

from console import patterns
from console.fleet import search as fleet_search
from console.forms.search import KIND_LABELS, SearchForm, pattern_message

_ROUTES = {fleet_search.TOPIC: ("topic_detail", "topic"), fleet_search.GROUP: ("group_detail", "group")}
_MARK = "SEARCH-NAME"
_PATH_SAFE = RFC3986_SUBDELIMS + "/~:@"  # what django.urls.reverse leaves unquoted in a path


def linker(cluster: str, kind: str) -> Callable[[str], str | None]:
    """The page of each name found in one cluster: the topic's, the group's, or the ACL list filtered by
    principal - ``reverse``'s URL, built from one ``reverse`` per cluster and kind (a result may list
    thousands). None for a name no route takes (an empty group id; a "/" in a topic's)."""
    if kind == fleet_search.PRINCIPAL:
        acls = reverse("acl_list", kwargs={"name": cluster}) + "?"
        return lambda name: acls + urlencode({"principal": name})
    route, arg = _ROUTES[kind]
    head, _, tail = reverse(route, kwargs={"name": cluster, arg: _MARK}).partition(_MARK)
    slash_ok = kind == fleet_search.GROUP  # <path:group>; <str:topic> takes no "/"
    return lambda name: (
        head + quote(name, safe=_PATH_SAFE) + tail if name and (slash_ok or "/" not in name) else None
    )


def _kind_row(cluster: str, found: fleet_search.Found) -> dict:
    link = linker(cluster, found.kind)
    return {
        "label": KIND_LABELS[found.kind],
        "hits": [{"name": h.name, "acls": h.acls, "url": link(h.name)} for h in found.hits],
        "more": found.more,
        "as_of": found.as_of,
        "live": found.source == "metadata",
        "missing": found.missing,
    }


def _rows(result: fleet_search.SearchResult) -> list[dict]:
    """The template's display values: per cluster, per kind, the names with their links."""
    return [
        {
            "name": c.cluster,
            "overview": reverse("cluster_overview", kwargs={"name": c.cluster}),
            "kinds": [_kind_row(c.cluster, f) for f in c.kinds],
        }
        for c in result.clusters
    ]


@login_required
@require_GET
def search_page(request):
    """Names matching the query in every cluster the user may see (an empty query: the form alone)."""
    form = SearchForm(request.GET if request.GET.get("q") else None)
    result = None
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        try:
            result = fleet_search.search(request.user, data["q"], regex=data["regex"], kinds=form.kinds())
        except patterns.PatternError as exc:
            form.add_error("q", pattern_message(exc))
    context = {"form": form, "result": result, "clusters": _rows(result) if result else []}
    return render(request, "console/fleet/search.html", context)
