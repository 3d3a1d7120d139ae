"""Forms of the reassignment area: the plan (file or intent), the throttle, elections."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from console.reassignment import pacing, planner

MB = 1024 * 1024
MAX_UPLOAD_BYTES = 20 * MB

INTENTS = [
    ("json", "Paste or upload a kafka-reassign-partitions JSON file"),
    ("move_off", "Move selected topics off brokers"),
    ("spread", "Spread selected topics onto brokers"),
    ("rf", "Set the replication factor of selected topics"),
    ("balance", "Balance bytes and leaders across brokers (selected topics, or all)"),
]


def _int_list(value: str, label: str) -> list[int]:
    out = []
    for part in value.replace(" ", ",").split(","):
        if not part.strip():
            continue
        if not part.strip().isdigit():
            raise ValidationError(f"{label}: '{part.strip()}' is not a broker id.")
        out.append(int(part))
    return out


def _names(value: str) -> list[str]:
    return [n.strip() for n in value.replace("\n", ",").split(",") if n.strip()]


class PlanForm(forms.Form):
    """A plan from a file or from an intent, the throttle, and whether to elect leaders afterwards."""

    # Which intents each field belongs to; the page shows only the chosen intent's fields.
    INTENT_FIELDS = (
        ("plan_json", "json"),
        ("plan_file", "json"),
        ("topics", "balance move_off spread rf"),
        ("brokers", "move_off spread"),
        ("replication_factor", "rf"),
    )

    intent = forms.ChoiceField(choices=INTENTS, initial="json", widget=forms.RadioSelect)
    plan_json = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 8, "class": "mono"}), label="Plan JSON"
    )
    plan_file = forms.FileField(required=False, label="or upload a plan file")
    topics = forms.CharField(required=False, help_text="Comma-separated topic names (for the intents).")
    brokers = forms.CharField(
        required=False, help_text="Comma-separated broker ids (move off / spread onto)."
    )
    replication_factor = forms.IntegerField(required=False, min_value=1, max_value=32)
    throttle_mb = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=12,
        decimal_places=3,
        initial=10,
        label="Throttle (MiB/s)",
        help_text="Per broker, for leaders and followers. Leave empty to move without a throttle.",
    )
    leader_throttle_mb = forms.DecimalField(
        required=False,
        max_digits=12,
        decimal_places=3,
        label="Leader throttle (MiB/s)",
        help_text="Optional: the leader (sending) replication rate of each broker, instead of the throttle.",
    )
    follower_throttle_mb = forms.DecimalField(
        required=False,
        max_digits=12,
        decimal_places=3,
        label="Follower throttle (MiB/s)",
        help_text="Optional: the follower (receiving) replication rate of each broker, instead of the throttle.",
    )
    broker_throttles = forms.CharField(
        required=False,
        label="Per-broker throttles (MiB/s)",
        help_text="Optional: broker=rate for brokers of this move that get their own leader and follower "
        "rate, e.g. 3=5, 4=20.",
    )
    max_moves_per_broker = forms.IntegerField(
        required=False,
        label="Max moves per broker",
        help_text="Optional: at most this many partitions moving per broker at once (a partition counts "
        "against every broker it adds or removes); the rest wait in a queue, which you can pause.",
    )
    elect_preferred = forms.BooleanField(required=False, label="Elect preferred leaders when done")

    PACING_FIELDS = ("leader_throttle_mb", "follower_throttle_mb", "broker_throttles", "max_moves_per_broker")

    def clean_plan_file(self):
        f = self.cleaned_data.get("plan_file")
        if f and f.size > MAX_UPLOAD_BYTES:
            raise ValidationError(f"The file is larger than {MAX_UPLOAD_BYTES // MB} MiB.")
        return f

    def clean(self):
        data = super().clean()
        intent = data.get("intent")
        if intent == "json":
            text = data.get("plan_json") or ""
            upload = data.get("plan_file")
            if upload:
                try:
                    text = upload.read().decode("utf-8")
                except UnicodeDecodeError:
                    self.add_error("plan_file", "The file is not UTF-8 text.")
                    return data
            try:
                data["plan"] = planner.parse_plan(text)
            except planner.PlanParseError as exc:
                self.add_error("plan_json", str(exc))
        elif intent == "balance":
            data["topic_list"] = _names(data.get("topics") or "")
        elif intent in ("move_off", "spread", "rf"):
            data["topic_list"] = _names(data.get("topics") or "")
            if not data["topic_list"]:
                self.add_error("topics", "Name at least one topic.")
            if intent in ("move_off", "spread"):
                try:
                    data["broker_list"] = _int_list(data.get("brokers") or "", "Brokers")
                except ValidationError as exc:
                    self.add_error("brokers", exc)
                else:
                    if not data["broker_list"]:
                        self.add_error("brokers", "Name at least one broker.")
            if intent == "rf" and not data.get("replication_factor"):
                self.add_error("replication_factor", "Give the replication factor to set.")
        throttle = data.get("throttle_mb")
        data["throttle"] = None if throttle in (None, "") else int(throttle * MB)
        data["pacing"] = self._pacing(data)
        return data

    def _pacing(self, data) -> pacing.Pacing:
        """The split rates, per-broker rates and N; each bad one is its field's error."""
        rates = {}
        for name in ("leader_throttle_mb", "follower_throttle_mb"):
            value = data.get(name)
            if value is not None and value <= 0:
                self.add_error(name, "Give a positive rate in MiB/s, or leave it empty.")
            rates[name] = None if value is None or value <= 0 else int(value * MB)
        try:
            brokers = pacing.parse_broker_rates(data.get("broker_throttles") or "", scale=MB)
        except pacing.PacingInvalid as exc:
            self.add_error("broker_throttles", str(exc))
            brokers = {}
        try:
            most = pacing.check_max_moves(data.get("max_moves_per_broker"))
        except pacing.PacingInvalid as exc:
            self.add_error("max_moves_per_broker", str(exc))
            most = None
        return pacing.Pacing(rates["leader_throttle_mb"], rates["follower_throttle_mb"], brokers, most)


class ThrottleForm(forms.Form):
    throttle_mb = forms.DecimalField(
        min_value=0, max_digits=12, decimal_places=3, label="New throttle (MiB/s)"
    )

    @property
    def rate(self) -> int:
        return int(self.cleaned_data["throttle_mb"] * MB)


class ElectionForm(forms.Form):
    """Preferred for selected or all imbalanced partitions; unclean (admins) with a typed confirmation."""

    election_type = forms.ChoiceField(
        choices=[("PREFERRED", "Preferred"), ("UNCLEAN", "Unclean")], initial="PREFERRED"
    )
    scope = forms.ChoiceField(
        choices=[
            ("imbalanced", "Every partition not led by its preferred replica"),
            ("selected", "Only these partitions"),
        ],
        initial="imbalanced",
        widget=forms.RadioSelect,
    )
    partitions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "class": "mono"}),
        help_text="topic-partition, one per line or comma-separated (e.g. orders-3).",
    )
    confirmation = forms.CharField(required=False, label="Type the confirmation for an unclean election")

    def clean(self):
        data = super().clean()
        chosen = []
        for item in _names(data.get("partitions") or ""):
            topic, sep, part = item.rpartition("-")
            if not sep or not topic or not part.isdigit():
                self.add_error("partitions", f"'{item}' is not topic-partition (e.g. orders-3).")
                return data
            chosen.append((topic, int(part)))
        data["chosen"] = chosen
        if data.get("scope") == "selected" and not chosen:
            self.add_error("partitions", "List the partitions to elect.")
        return data
