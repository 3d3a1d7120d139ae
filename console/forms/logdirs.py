"""The log-dir pages' forms: a move on one broker (topic, partitions, target dir, optional throttle)
and a plan file (kafka-reassign-partitions.sh's JSON with ``log_dirs``). The rules are the area's
(``logdirs.core``); the forms shape the input and show the area's refusal."""

from __future__ import annotations

from django import forms

from console import uploads
from console.logdirs import core

MIB = 1 << 20


def _partitions(text: str) -> list[int]:
    """``0, 2, 5-7`` -> [0, 2, 5, 6, 7]."""
    out: list[int] = []
    for item in filter(None, (s.strip() for s in text.replace("\n", ",").split(","))):
        lo, sep, hi = item.partition("-")
        if not lo.strip().isdigit() or (sep and not hi.strip().isdigit()):
            raise core.PlanError([f"Partitions are numbers or ranges such as 0, 2, 5-7 (not '{item[:40]}')."])
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a or b - a > core.MAX_MOVES:
            raise core.PlanError([f"The range '{item[:40]}' is empty or too long."])
        out.extend(range(a, b + 1))
    return out


def _throttle(value) -> int | None:
    if value in (None, ""):
        return None
    return int(round(float(value) * MIB))


class MoveForm(forms.Form):
    topic = forms.CharField(max_length=249, label="Topic")
    partitions = forms.CharField(max_length=20_000, label="Partitions", help_text="0, 2, 5-7")
    target = forms.ChoiceField(label="Target log dir", choices=())
    throttle_mib = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=3,
        label="Throttle (MiB/s)",
        help_text="replica.alter.log.dirs.io.max.bytes.per.second on this broker while moving; set back after",
    )

    def __init__(self, *args, broker: int, dirs: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.broker = broker
        self.fields["target"].choices = [(d, d) for d in dirs]

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            parts = _partitions(data["partitions"])
            data["moves"] = core.form_moves(self.broker, data["topic"], parts, data["target"])
        except core.PlanError as exc:
            raise forms.ValidationError(exc.errors) from None
        data["throttle"] = _throttle(data.get("throttle_mib"))
        return data


class PlanForm(forms.Form):
    plan = forms.CharField(
        required=False,
        max_length=5_000_000,
        widget=forms.Textarea(attrs={"rows": 10, "class": "mono"}),
        label="Plan (JSON)",
        help_text='{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["/data-1","any"]}]}',
    )
    plan_file = forms.FileField(required=False, label="or a plan file")
    throttle_mib = MoveForm.base_fields["throttle_mib"]

    def clean(self):
        data = super().clean()
        upload = data.get("plan_file")
        text = data.get("plan") or ""
        if upload:
            try:
                raw = upload.read(uploads.max_bytes() + 1)
                text = raw.decode("utf-8")
                uploads.check_size(text)
            except UnicodeDecodeError as exc:
                raise forms.ValidationError(f"The plan file is not UTF-8 text: {exc}") from None
            except uploads.UploadError as exc:
                raise forms.ValidationError(str(exc)) from None
        if not text.strip():
            raise forms.ValidationError("Paste the plan or choose a plan file.")
        try:
            data["doc"] = uploads.load_json(text)
        except uploads.UploadError as exc:
            raise forms.ValidationError(f"The plan is not JSON: {exc}") from None
        data["throttle"] = _throttle(data.get("throttle_mib"))
        return data
