"""Forms of the consumer groups area: the list's query string, the offset reset, the deletes."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from console.formatting import human_bytes
from console.groups import actions
from console.groups.core import MODES, ResetPlanError, ResetSpec, parse_offsets_csv, parse_partitions
from console.groups.reads import DEFAULT_PER_PAGE, SORT_KEYS
from console.uploads import UploadError, check_size, max_bytes

MAX_INT64 = 2**63 - 1


class GroupListForm(forms.Form):
    """The list's query string: search, filters, sort, page."""

    q = forms.CharField(
        required=False,
        max_length=500,
        label="Search",
        widget=forms.TextInput(attrs={"placeholder": "group id"}),
    )
    regex = forms.BooleanField(required=False, label="Regex")
    state = forms.CharField(required=False, max_length=50)
    topic = forms.CharField(required=False, max_length=300)
    lagging = forms.BooleanField(required=False, label="Lagging only")
    sort = forms.ChoiceField(required=False, choices=[(k, k) for k in SORT_KEYS])
    desc = forms.BooleanField(required=False)
    page = forms.IntegerField(required=False, min_value=1, max_value=10**9)
    per_page = forms.IntegerField(required=False, min_value=1, max_value=500)

    def query(self) -> dict:
        self.is_valid()  # invalid fields fall back to their defaults; the valid ones still apply
        data = getattr(self, "cleaned_data", {})
        return {
            "query": data.get("q") or "",
            "regex": bool(data.get("regex")),
            "state": data.get("state") or "",
            "topic": data.get("topic") or "",
            "lagging": bool(data.get("lagging")),
            "sort": data.get("sort") or "group",
            "descending": bool(data.get("desc")),
            "page": data.get("page") or 1,
            "per_page": data.get("per_page") or DEFAULT_PER_PAGE,
        }


MODE_LABELS = {
    "to-earliest": "To earliest (the log start)",
    "to-latest": "To latest (the log end: skip everything not yet consumed)",
    "to-datetime": "To a time (the first offset at or after it)",
    "to-offset": "To an offset",
    "shift-by": "Shift by N (negative: re-consume, positive: skip)",
    "from-file": "From a file (CSV topic,partition,offset)",
}
SCOPE_CHOICES = [
    ("all-topics", "All topics of the group (every partition with a committed offset)"),
    ("topic", "One topic (all its partitions)"),
    ("partitions", "Chosen partitions of one topic"),
]


class ResetForm(forms.Form):
    """kafka-consumer-groups --reset-offsets as a form: what to reset (scope) and to what (mode)."""

    # field -> the modes (or scopes) it belongs to; the page shows only the chosen ones (CSS :has)
    MODE_FIELDS = (
        ("timestamp", "to-datetime"),
        ("offset", "to-offset"),
        ("shift", "shift-by"),
        ("file", "from-file"),
        ("file_text", "from-file"),
    )
    SCOPE_FIELDS = (("topic", "topic partitions"), ("partitions", "partitions"))

    mode = forms.ChoiceField(
        choices=[(m, MODE_LABELS[m]) for m in MODES], initial="to-latest", widget=forms.RadioSelect
    )
    scope = forms.ChoiceField(choices=SCOPE_CHOICES, initial="all-topics", widget=forms.RadioSelect)
    topic = forms.CharField(required=False, max_length=300)
    partitions = forms.CharField(required=False, max_length=5000, help_text="e.g. 0,2,5-7")
    timestamp = forms.CharField(
        required=False,
        max_length=60,
        label="Time",
        help_text="2024-05-01T12:00:00 (UTC), with +02:00 for another zone, or epoch milliseconds",
    )
    offset = forms.IntegerField(required=False, min_value=0, max_value=MAX_INT64)
    shift = forms.IntegerField(required=False, min_value=-MAX_INT64, max_value=MAX_INT64, label="Shift by")
    file = forms.FileField(required=False, label="Reset file")
    file_text = forms.CharField(
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 5, "class": "mono", "placeholder": "orders,0,1200\norders,1,1188"}
        ),
        label="or paste it",
        help_text="topic,partition,offset per line, as kafka-consumer-groups --export writes it",
    )

    def __init__(self, *args, group_id: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.group_id = group_id

    def _file_text(self, data: dict) -> str:
        upload = data.get("file")
        if not upload:
            return data.get("file_text") or ""
        raw = upload.read(max_bytes() + 1)
        if len(raw) > max_bytes():
            raise ValidationError({"file": f"The file is larger than {human_bytes(max_bytes())}."})
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError({"file": "The file is not UTF-8 text."}) from None

    def clean(self):
        data = super().clean()
        mode, scope = data.get("mode"), data.get("scope")
        if not mode or not scope:
            return data
        values: dict = {}
        try:
            if mode == "to-datetime":
                if not data.get("timestamp"):
                    raise ValidationError({"timestamp": "Give the time to reset to."})
                values["value"] = actions.timestamp_ms(data["timestamp"])
            elif mode == "to-offset":
                if data.get("offset") is None:
                    raise ValidationError({"offset": "Give the offset to reset to."})
                values["value"] = data["offset"]
            elif mode == "shift-by":
                if data.get("shift") is None:
                    raise ValidationError({"shift": "Give the number of messages to shift by."})
                values["value"] = data["shift"]
            elif mode == "from-file":
                text = self._file_text(data)
                check_size(text)
                values["file_offsets"] = parse_offsets_csv(text, self.group_id)
            if scope == "partitions" and mode != "from-file":
                values["partitions"] = parse_partitions(data.get("partitions") or "")
        except ResetPlanError as exc:
            field = {"to-datetime": "timestamp", "from-file": "file_text"}.get(mode, "partitions")
            for error in exc.errors:
                self.add_error(field, error)
            return data
        except UploadError as exc:
            self.add_error("file_text", exc.message)
            return data
        except ValidationError as exc:
            self.add_error(None, exc)
            return data
        if scope != "all-topics" and mode != "from-file" and not (data.get("topic") or "").strip():
            self.add_error("topic", "Name the topic to reset.")
            return data
        data["spec"] = ResetSpec(mode, scope, (data.get("topic") or "").strip(), **values)
        return data


class ConfirmForm(forms.Form):
    """The typed confirmation (the group id) of an execute or a delete."""

    confirmation = forms.CharField(required=False, max_length=300)


class OffsetsDeleteForm(forms.Form):
    topic = forms.CharField(max_length=300)
    confirmation = forms.CharField(required=False, max_length=300)
