"""The share groups pages' forms: the list's search and state, a reset (how, which topic or partitions,
the offset or time), and a deletion's topics. The rules are the area's (``share_groups.core``)."""

from __future__ import annotations

from django import forms

from console.share_groups import core

STATE_CHOICES = [("", "any state")] + [(s, s) for s in core.STATES]
MODE_CHOICES = [
    ("to-earliest", "to the earliest offset"),
    ("to-latest", "to the latest offset"),
    ("to-datetime", "to a time"),
    ("to-offset", "to an offset"),
]


class ShareFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=core.MAX_GROUP_ID, label="Group id contains")
    state = forms.ChoiceField(choices=STATE_CHOICES, required=False, label="State")
    page = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)


class ShareResetForm(forms.Form):
    mode = forms.ChoiceField(choices=MODE_CHOICES, label="Reset", initial="to-earliest")
    topic = forms.CharField(
        required=False, max_length=400, label="Topic",
        help_text="'topic' or 'topic:0,1,2'; empty: every topic the group has share state for",
    )  # fmt: skip
    offset = forms.IntegerField(required=False, min_value=0, label="Offset", help_text="for 'to an offset'")
    datetime = forms.CharField(
        required=False,
        max_length=40,
        label="Time",
        help_text="YYYY-MM-DDThh:mm:ss.sss (UTC), for 'to a time'",
    )

    def clean(self):
        d = super().clean()
        try:
            d["spec"] = core.make_spec(
                d.get("mode") or "",
                d.get("topic") or "",
                offset=d.get("offset"),
                datetime_text=d.get("datetime") or "",
            )
        except core.ShareInputError as exc:
            raise forms.ValidationError(exc.errors) from None
        return d


class ShareDeleteForm(forms.Form):
    topics = forms.CharField(
        required=False, max_length=4000, label="Topics",
        help_text="comma-separated: delete the group's offsets of these topics only; empty: delete the group",
    )  # fmt: skip

    def clean_topics(self):
        names = [t.strip() for t in (self.cleaned_data.get("topics") or "").split(",") if t.strip()]
        try:
            return [core.check_topic(t) for t in names] or None
        except core.ShareInputError as exc:
            raise forms.ValidationError(exc.errors) from None
