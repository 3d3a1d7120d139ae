"""API: search across clusters, with the page's form and the same area call (console/fleet/search.py)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from console import patterns
from console.api.base import ApiView, form_data, plain, reads
from console.fleet import search as fleet_search
from console.forms.search import SearchForm, pattern_message

SEARCH_PARAMS = [
    OpenApiParameter("q", str, required=True, description="part of a name, or an RE2 pattern with regex"),
    OpenApiParameter("regex", bool, required=False),
    OpenApiParameter("kind", str, many=True, enum=list(fleet_search.KINDS), required=False),
]


def result_json(result: fleet_search.SearchResult) -> dict:
    """The clusters with something to show, each kind's names (at most the cap), how many more, and
    the time of what they were read from."""
    return {**plain(result), "total": result.total}


class Search(ApiView):
    @reads("search", parameters=SEARCH_PARAMS)
    def get(self, request):
        """Topics, consumer groups and principals matching ``q`` in every cluster the caller may see."""
        form = SearchForm(request.query_params)
        data = form_data(form)  # 400 with the form's messages (a regex RE2 refuses among them)
        try:
            result = fleet_search.search(request.user, data["q"], regex=data["regex"], kinds=form.kinds())
        except patterns.PatternError as exc:
            raise ValidationError([f"q: {pattern_message(exc)}"]) from None
        return Response(result_json(result))
