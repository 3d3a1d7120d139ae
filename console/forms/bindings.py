"""The form that grants a role on a cluster to a user or a group."""

from __future__ import annotations

import re

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from console.models import Role

_PRINCIPAL = re.compile(r"^(User|Group):[^\s,]{1,200}$")


def _split(value: str) -> list[str]:
    return [v.strip() for v in re.split(r"[,\s]+", value or "") if v.strip()]


class GrantRoleForm(forms.Form):
    """One of user or group, a role, and for requesters the prefixes/principals they may request for."""

    user = forms.ModelChoiceField(queryset=get_user_model().objects.order_by("username"), required=False)
    group = forms.ModelChoiceField(queryset=Group.objects.order_by("name"), required=False)
    role = forms.ChoiceField(choices=Role.choices)
    namespaces = forms.CharField(
        required=False, max_length=2000, help_text="Topic-name prefixes, comma separated (requesters only)"
    )
    principals = forms.CharField(
        required=False,
        max_length=2000,
        help_text="Kafka principals like User:app, comma separated (requesters only)",
    )

    def clean_namespaces(self) -> list[str]:
        prefixes = _split(self.cleaned_data["namespaces"])
        for prefix in prefixes:
            if not re.fullmatch(r"[a-zA-Z0-9._-]{1,249}", prefix):
                raise forms.ValidationError(f"'{prefix}' is not a valid topic-name prefix ([a-zA-Z0-9._-]).")
        return prefixes

    def clean_principals(self) -> list[str]:
        principals = _split(self.cleaned_data["principals"])
        for principal in principals:
            if not _PRINCIPAL.match(principal):
                raise forms.ValidationError(f"'{principal}' is not a principal like User:name or Group:name.")
        return principals

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("user")) == bool(data.get("group")):
            raise forms.ValidationError("Choose a user or a group (exactly one).")
        return data
