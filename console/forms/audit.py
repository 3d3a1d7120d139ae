"""The audit review filter form (GET): every field optional, bounded, turned into an AuditFilter."""

from __future__ import annotations

from django import forms

from console.audit.review import OUTCOMES, AuditFilter
from console.drift import audit_names as drift_names


class AuditFilterForm(forms.Form):
    actor = forms.CharField(
        required=False,
        max_length=150,
        help_text="A username; also finds the events written with that user's API tokens.",
    )
    action = forms.CharField(required=False, max_length=64, help_text="e.g. topic.create or topic")
    cluster = forms.CharField(required=False, max_length=64)
    resource = forms.CharField(
        required=False,
        max_length=300,
        label="Resource",
        help_text=(
            "Exact and case-sensitive: topic:orders, or a bare name (orders) for any resource of that "
            "name; end with * for names starting with it (topic:orders*)."
        ),
    )
    outcome = forms.ChoiceField(required=False, choices=[("", "any")] + [(o, o) for o in OUTCOMES])
    external = forms.BooleanField(
        required=False,
        label="External changes only",
        help_text="Changes made outside the console (kafka-configs.sh, Terraform, ...), found by the snapshots.",
    )
    since = forms.DateTimeField(
        required=False, label="From (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    until = forms.DateTimeField(
        required=False, label="Until (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        resource = (data.get("resource") or "").strip()
        if resource and not resource.rstrip("*"):
            self.add_error("resource", "Give the start of the name before the *, e.g. topic:orders*.")
        action = (data.get("action") or "").strip()
        if data.get("external") and action not in ("", "drift", drift_names.EXTERNAL_CHANGE):
            self.add_error("external", "External changes have their own action; leave the action empty.")
        if since and until and since >= until:
            self.add_error("until", "'Until' must be after 'From'.")
        return data

    def to_filter(self) -> AuditFilter:
        """The filter for a valid form (an invalid one filters nothing out: the errors are shown)."""
        data = self.cleaned_data if self.is_valid() else {}
        return AuditFilter(
            actor=(data.get("actor") or "").strip(),
            action=drift_names.EXTERNAL_CHANGE
            if data.get("external")
            else (data.get("action") or "").strip(),
            cluster=(data.get("cluster") or "").strip(),
            resource=(data.get("resource") or "").strip(),
            outcome=data.get("outcome") or "",
            since=data.get("since"),
            until=data.get("until"),
        )
