"""The API tokens page's form: a name, a scope and how many days the token lives."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.validators import MaxValueValidator

from console.models.api import TokenScope


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. 'ci-pipeline'.")
    scope = forms.ChoiceField(
        choices=TokenScope.choices,
        initial=TokenScope.READ,
        help_text="A read-only token can never change anything, whatever your roles.",
    )
    days = forms.IntegerField(min_value=1, initial=90, label="Expires after (days)")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["days"].max_value = settings.API_TOKEN_MAX_DAYS
        self.fields["days"].validators.append(MaxValueValidator(settings.API_TOKEN_MAX_DAYS))
        self.fields["days"].widget.attrs["max"] = settings.API_TOKEN_MAX_DAYS
