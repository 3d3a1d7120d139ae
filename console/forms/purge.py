"""The purge page's form: what to purge (offsets per partition, records older than a time, or the
whole topic) and the typed confirmation. The rules are the area's (``purge.core``); the form shapes the
input into a ``Target`` and shows the area's refusal on the field it is about."""

from __future__ import annotations

from django import forms

from console.purge import core

MODE_CHOICES = [
    (core.OFFSETS, "to an offset per partition"),
    (core.TIME, "records older than a time"),
    (core.ALL, "the whole topic (every partition to its end)"),
]


def _pairs(text: str) -> list[tuple[str, str]]:
    """``0:100, 1:-1`` or one ``partition:offset`` a line."""
    out = []
    for item in filter(None, (s.strip() for s in text.replace("\n", ",").split(","))):
        partition, sep, offset = item.partition(":")
        if not sep:
            raise core.TargetError([f"write partition:offset (e.g. 0:100), not '{item[:40]}'"])
        out.append((partition.strip(), offset.strip()))
    return out


class PurgeForm(forms.Form):
    mode = forms.ChoiceField(
        choices=MODE_CHOICES, widget=forms.RadioSelect, initial=core.OFFSETS, label="Purge"
    )
    offsets = forms.CharField(
        required=False,
        max_length=200_000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Offsets",
        help_text="partition:offset, comma or line separated (0:1200, 3:-1); the records below the offset go, -1: up to the end",
    )
    before = forms.CharField(
        required=False,
        max_length=64,
        label="Older than",
        help_text="ISO 8601 (2026-01-31T12:00:00Z; no zone: UTC) or ms since the epoch",
    )
    partitions = forms.CharField(
        required=False,
        max_length=200_000,
        label="Partitions",
        help_text="for a time: 0,2,5 (empty: every partition)",
    )

    def __init__(self, *args, topic: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.topic = topic

    def clean(self):
        data = super().clean()
        mode = data.get("mode")
        try:
            if mode == core.OFFSETS:
                data["target"] = core.offsets_target(self.topic, _pairs(data.get("offsets") or ""))
            elif mode == core.TIME:
                parts = [p.strip() for p in (data.get("partitions") or "").split(",") if p.strip()]
                data["target"] = core.time_target(self.topic, data.get("before") or "", parts)
            elif mode == core.ALL:
                data["target"] = core.all_target(self.topic)
        except core.TargetError as exc:
            field = {core.OFFSETS: "offsets", core.TIME: "before"}.get(mode or "")
            for e in exc.errors:
                self.add_error(field, e)
        return data
