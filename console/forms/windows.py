"""Change-window forms (console/windows): shapes only; the area actions check everything again.
Times are entered as local date-times in the form's time zone (an IANA name, default UTC)."""

from __future__ import annotations

from django import forms

from console.models.windows import WindowKind
from console.windows import actions as windows
from console.windows import core

WEEKDAY_CHOICES = [("", "one-off (no weekday)")] + [(str(i), d) for i, d in enumerate(core.WEEKDAYS)]
LOCAL = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


class ZonedForm(forms.Form):
    """A form whose date-times are read in its ``time_zone`` field."""

    time_zone = forms.CharField(
        max_length=64, initial="UTC", label="Time zone (IANA name, e.g. Europe/Paris)"
    )

    def clean_time_zone(self) -> str:
        name = self.cleaned_data["time_zone"].strip() or "UTC"
        try:
            core.zone(name)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        return name

    def zoned(self, field: str):
        """The field's date-time in the form's time zone (None when empty)."""
        value = self.cleaned_data.get(field)
        if value is None:
            return None
        return value.replace(tzinfo=core.zone(self.cleaned_data.get("time_zone") or "UTC"))


class WindowForm(ZonedForm):
    kind = forms.ChoiceField(choices=WindowKind.choices)
    reason = forms.CharField(max_length=500)
    starts_at = forms.DateTimeField(required=False, widget=LOCAL, label="Start (weekly: from; default now)")
    ends_at = forms.DateTimeField(required=False, widget=LOCAL, label="End (weekly: until; optional)")
    weekday = forms.TypedChoiceField(
        choices=WEEKDAY_CHOICES, required=False, coerce=int, empty_value=None, label="Weekly on"
    )
    start_time = forms.TimeField(
        required=False, widget=forms.TimeInput(attrs={"type": "time"}), label="Weekly at"
    )
    duration_min = forms.IntegerField(
        required=False, min_value=1, max_value=windows.MAX_DURATION_MIN, label="Weekly: minutes"
    )
    field_order = [
        "kind",
        "reason",
        "starts_at",
        "ends_at",
        "weekday",
        "start_time",
        "duration_min",
        "time_zone",
    ]

    def window(self) -> dict:
        """The add_window arguments."""
        d = self.cleaned_data
        return {
            "kind": d["kind"],
            "reason": d["reason"],
            "starts_at": self.zoned("starts_at"),
            "ends_at": self.zoned("ends_at"),
            "weekday": d.get("weekday"),
            "start_time": d.get("start_time"),
            "duration_min": d.get("duration_min"),
            "time_zone": d["time_zone"],
        }


class ScheduleForm(ZonedForm):
    run_at = forms.DateTimeField(widget=LOCAL, label="Run at (never before)")
    field_order = ["run_at", "time_zone"]
