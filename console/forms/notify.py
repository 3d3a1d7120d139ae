"""Notification channel forms (console/notify): shapes only, the area action checks everything again."""

from __future__ import annotations

from django import forms

from console.models.notify import ChannelKind
from console.notify import events


def _recipients(text: str) -> list[str]:
    return [r.strip() for r in text.replace(";", ",").replace("\n", ",").split(",") if r.strip()]


class ChannelForm(forms.Form):
    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(choices=ChannelKind.choices)
    url = forms.CharField(
        required=False,
        max_length=2000,
        label="URL (webhook or Slack-compatible; stored encrypted, never shown again)",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    recipients = forms.CharField(
        required=False,
        max_length=4000,
        label="E-mail recipients (comma-separated)",
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    events = forms.MultipleChoiceField(
        required=False, choices=list(events.LABELS.items()), widget=forms.CheckboxSelectMultiple
    )
    enabled = forms.BooleanField(required=False, initial=True)

    def cleaned_recipients(self) -> list[str]:
        return _recipients(self.cleaned_data.get("recipients") or "")


class ChannelEditForm(ChannelForm):
    """The kind is fixed once created; an empty URL keeps the stored one."""

    rotate_secret = forms.BooleanField(
        required=False, label="Rotate the signing secret (webhooks; shown once)"
    )

    def __init__(self, *args, kind: str, **kwargs):
        super().__init__(*args, **kwargs)
        del self.fields["kind"]
        self.fields["url"].label = "New URL (empty: keep the stored one)"
        if kind == ChannelKind.EMAIL:
            del self.fields["url"], self.fields["rotate_secret"]
        else:
            del self.fields["recipients"]
            if kind != ChannelKind.WEBHOOK:
                del self.fields["rotate_secret"]
