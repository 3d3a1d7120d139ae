"""The change-control policy form (console/changes)."""

from __future__ import annotations

from django import forms

from console.changes import gate
from console.models import Role


class ChangePolicyForm(forms.Form):
    enabled = forms.BooleanField(required=False, label="Hold the checked actions for approval")
    kinds = forms.MultipleChoiceField(
        required=False, choices=list(gate.KINDS.items()), widget=forms.CheckboxSelectMultiple, label="Actions"
    )
    roles = forms.MultipleChoiceField(
        required=False,
        choices=[(r.value, r.label) for r in (Role.OPERATOR, Role.ADMIN)],
        widget=forms.CheckboxSelectMultiple,
        label="For these roles (none checked: everyone)",
    )
    approvers = forms.TypedChoiceField(
        choices=[(str(n), str(n)) for n in range(1, gate.MAX_APPROVERS + 1)],
        coerce=int,
        initial="1",
        label="Approvers needed (never the author)",
    )
