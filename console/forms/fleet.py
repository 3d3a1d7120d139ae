"""The fleet home's query string (the page's form; the API and the command line validate with it)."""

from __future__ import annotations

from django import forms

from console.fleet.home import SORTS, STATES


class FleetFilterForm(forms.Form):
    """Text in a cluster's name or description, a state, the sort column and direction."""

    q = forms.CharField(
        required=False,
        max_length=200,
        label="Search",
        widget=forms.TextInput(attrs={"placeholder": "name or description", "aria-label": "find clusters"}),
    )
    state = forms.ChoiceField(required=False, choices=[("", "any state"), *STATES.items()])
    sort = forms.ChoiceField(required=False, choices=[(k, k) for k in SORTS])
    desc = forms.BooleanField(required=False)

    def query(self) -> dict:
        """``fleet.home.fleet``'s keyword arguments; an invalid field falls back to its default."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return {
            "text": data.get("q") or "",
            "state": data.get("state") or "",
            "sort": data.get("sort") or "name",
            "descending": bool(data.get("desc")),
        }
