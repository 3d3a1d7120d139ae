"""The cross-cluster search box: a query, whether it is a regular expression, which kinds of names."""

from __future__ import annotations

from django import forms

from console import patterns
from console.fleet import search as fleet_search

KIND_LABELS = {
    fleet_search.TOPIC: "Topics",
    fleet_search.GROUP: "Consumer groups",
    fleet_search.PRINCIPAL: "Principals",
}


class SearchForm(forms.Form):
    """The page's and the API's query (``q``, ``regex``, ``kind`` repeated; no kind: every kind)."""

    q = forms.CharField(max_length=patterns.MAX_PATTERN_LENGTH, label="Find", help_text="part of a name")
    regex = forms.BooleanField(required=False, label="Regular expression (RE2)")
    kind = forms.MultipleChoiceField(
        required=False,
        label="Kinds",
        choices=list(KIND_LABELS.items()),
        widget=forms.CheckboxSelectMultiple,
    )

    def clean(self):
        data = super().clean()
        if data.get("regex") and data.get("q"):
            try:
                patterns.compile_pattern(data["q"])
            except patterns.PatternError as exc:
                self.add_error("q", pattern_message(exc))
        return data

    def kinds(self) -> tuple[str, ...]:
        return tuple(self.cleaned_data.get("kind") or fleet_search.KINDS)


def pattern_message(exc: patterns.PatternError) -> str:
    return f"Not a regular expression RE2 accepts: {exc}"
