"""The cross-cluster search page: one box, every visible cluster's topics, groups and principals."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from console import patterns
from console.fleet import search as fleet_search
from console.forms.search import KIND_LABELS, SearchForm, pattern_message


def _link(cluster: str, kind: str, name: str) -> str:
    """The page of one name found: the topic's, the group's, or the ACL list filtered by principal."""
    if kind == fleet_search.TOPIC:
        return reverse("topic_detail", kwargs={"name": cluster, "topic": name})
    if kind == fleet_search.GROUP:
        return reverse("group_detail", kwargs={"name": cluster, "group": name})
    return reverse("acl_list", kwargs={"name": cluster}) + "?" + urlencode({"principal": name})


def _rows(result: fleet_search.SearchResult) -> list[dict]:
    """The template's display values: per cluster, per kind, the names with their links."""
    return [
        {
            "name": c.cluster,
            "overview": reverse("cluster_overview", kwargs={"name": c.cluster}),
            "kinds": [
                {
                    "label": KIND_LABELS[f.kind],
                    "hits": [
                        {"name": h.name, "acls": h.acls, "url": _link(c.cluster, f.kind, h.name)}
                        for h in f.hits
                    ],
                    "more": f.more,
                    "as_of": f.as_of,
                    "live": f.source == "metadata",
                    "missing": f.missing,
                }
                for f in c.kinds
            ],
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
