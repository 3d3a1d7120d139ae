"""The alerts page's forms (console/alerts): shapes only, the area's actions check everything again.
The API validates the same inputs with its serializers and the command line with its options; all
three hand them to the same actions."""

from __future__ import annotations

from django import forms

from console.alerts.actions import NOTE_MAX, REASON_MAX, SUBJECT_MAX
from console.alerts.rules import RULES
from console.models.alerts import AlertSeverity


class AcknowledgeForm(forms.Form):
    note = forms.CharField(
        max_length=NOTE_MAX,
        label="Note",
        widget=forms.TextInput(attrs={"placeholder": "what is being done about it", "aria-label": "note"}),
    )


class SilenceForm(forms.Form):
    rule = forms.ChoiceField(
        required=False, choices=[("", "every rule"), *((r.name, r.title) for r in RULES.values())]
    )
    subject = forms.CharField(
        required=False,
        max_length=SUBJECT_MAX,
        help_text='e.g. "broker 2" or "group billing"; empty: every subject',
    )
    duration = forms.CharField(
        required=False,
        max_length=20,
        label="For",
        initial="2h",
        help_text="30m, 2h, 1d12h, 1w (at most 30 days); or an end time instead",
    )
    until = forms.DateTimeField(
        required=False,
        label="Or until (UTC)",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    reason = forms.CharField(max_length=REASON_MAX, widget=forms.TextInput)


_SMALL = forms.TextInput(attrs={"inputmode": "decimal", "size": "7"})  # one line per rule in the table


class RuleForm(forms.Form):
    """A rule's setting on the cluster: an empty threshold or severity is the rule's default, an
    empty escalation never escalates."""

    enabled = forms.BooleanField(required=False)
    threshold = forms.FloatField(required=False, widget=_SMALL)
    severity = forms.ChoiceField(required=False, choices=[("", "default"), *AlertSeverity.choices])
    escalate_after_min = forms.IntegerField(required=False, label="Escalate after (min)", widget=_SMALL)
