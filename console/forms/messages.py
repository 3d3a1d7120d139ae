"""Forms of the messages area: the browser's filter bar (a GET: the URL is the query), the produce form,
and the data-access page's grant and masking-rule forms. They turn input into the area's types; the
area decides what is allowed and what makes sense (``BrowseInvalid``, ``grants``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from console.messages import core
from console.messages.core import BrowseQuery
from console.models.messages import MaskKind

MAX_INT64 = 2**63 - 1
MODES = (
    ("newest", "newest"),
    ("oldest", "oldest"),
    ("offset", "from offset"),
    ("timestamp", "from time"),
    ("follow", "follow (live)"),
)
DECODINGS = (("auto", "auto"), ("text", "text"), ("json", "JSON"), ("hex", "hex"))
_PREFIX = re.compile(r"^[a-zA-Z0-9._-]{0,249}$")


def _text(label: str, max_length: int = 500, placeholder: str = "") -> forms.CharField:
    attrs = {"placeholder": placeholder} if placeholder else {}
    return forms.CharField(
        required=False, max_length=max_length, label=label, widget=forms.TextInput(attrs=attrs)
    )


class BrowseForm(forms.Form):
    """Where to read from, how many, what to keep and how to show it (kafka-console-consumer's options)."""

    mode = forms.ChoiceField(choices=MODES, initial="newest", label="Read")
    partition = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=10**6,
        widget=forms.NumberInput(attrs={"placeholder": "all"}),
    )
    offset = forms.IntegerField(required=False, min_value=0, max_value=MAX_INT64)
    timestamp = forms.DateTimeField(
        required=False,
        label="From (UTC)",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}, format="%Y-%m-%dT%H:%M:%S"),
    )
    count = forms.IntegerField(required=False, min_value=1, max_value=core.MAX_MESSAGES, initial=50)
    key = _text("Key contains")
    header = _text("Header", placeholder="name or name=value")
    value = _text("Value contains")
    json_path = _text("JSON path", placeholder="$.customer.id or $.id=42")
    decode = forms.ChoiceField(choices=DECODINGS, initial="auto", required=False, label="Show as")
    reason = _text("Unmasked, because", max_length=500, placeholder="ticket or reason (audited)")
    cursor = forms.CharField(required=False, max_length=20000, widget=forms.HiddenInput)

    def __init__(self, *args, may_unmask: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not may_unmask:
            del self.fields["reason"]

    def clean_cursor(self) -> dict[int, int] | None:
        return core.parse_cursor(self.cleaned_data["cursor"])

    def clean_timestamp(self) -> datetime | None:
        when = self.cleaned_data["timestamp"]
        # The field says UTC: a time without a zone is UTC whatever the server's zone.
        return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when

    def query(self) -> BrowseQuery:
        """The area's query for a valid form."""
        data = self.cleaned_data
        when = data.get("timestamp")
        return BrowseQuery(
            mode=data["mode"],
            partition=data.get("partition"),
            offset=data.get("offset"),
            timestamp_ms=None if when is None else int(when.timestamp() * 1000),
            count=data.get("count") or 50,
            cursor=data.get("cursor"),
            key_contains=data.get("key") or "",
            header=data.get("header") or "",
            value_contains=data.get("value") or "",
            json_path=data.get("json_path") or "",
            decode=data.get("decode") or "auto",
            unmasked_reason=(data.get("reason") or "").strip(),
        )


def parse_headers(text: str) -> list[tuple[str, bytes]]:
    """Headers as "name=value" lines (blank lines skipped); every bad line named by its number."""
    headers, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            problems.append(f"Line {number}: '{line.strip()[:80]}' is not name=value.")
            continue
        headers.append((name.strip(), value.encode()))
    if problems:
        raise forms.ValidationError(problems)
    return headers


class ProduceForm(forms.Form):
    """One message: where it goes, its key, value and headers (text, sent as UTF-8)."""

    partition = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=10**6,
        widget=forms.NumberInput(attrs={"placeholder": "by key"}),
        help_text="Empty: Kafka's default partitioner picks (by the key's hash; no key: any partition).",
    )
    key = forms.CharField(required=False, max_length=100_000, strip=False, help_text="Empty: no key.")
    value = forms.CharField(
        required=False, max_length=1_000_000, strip=False, widget=forms.Textarea(attrs={"rows": 8})
    )
    headers = forms.CharField(
        required=False,
        max_length=100_000,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "trace-id=abc123"}),
        help_text="One name=value per line.",
    )

    def clean_headers(self) -> list[tuple[str, bytes]]:
        return parse_headers(self.cleaned_data["headers"])

    def message(self) -> dict:
        """The produce call's arguments for a valid form."""
        data = self.cleaned_data
        return {
            "partition": data.get("partition"),
            "key": data["key"].encode() if data.get("key") else None,
            "value": (data.get("value") or "").encode(),
            "headers": data["headers"],
        }


def _prefix(value: str) -> str:
    value = (value or "").strip()
    if not _PREFIX.match(value):
        raise forms.ValidationError(f"'{value}' is not a topic-name prefix ([a-zA-Z0-9._-]).")
    return value


class DataGrantForm(forms.Form):
    """A data grant: to a user or a group, for topics starting with a prefix ("" = every topic)."""

    user = forms.ModelChoiceField(queryset=get_user_model().objects.order_by("username"), required=False)
    group = forms.ModelChoiceField(queryset=Group.objects.order_by("name"), required=False)
    prefix = forms.CharField(
        required=False, max_length=249, help_text="Topic-name prefix; empty for every topic of the cluster."
    )
    read = forms.BooleanField(required=False, initial=True, label="Read (data.read)")
    write = forms.BooleanField(required=False, label="Write (data.write)")
    unmasked = forms.BooleanField(
        required=False, label="Unmasked reads", help_text="May read without masking, giving a reason."
    )

    def clean_prefix(self) -> str:
        return _prefix(self.cleaned_data["prefix"])

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("user")) == bool(data.get("group")):
            raise forms.ValidationError("Choose a user or a group (exactly one).")
        if not (data.get("read") or data.get("write")):
            raise forms.ValidationError("Grant read, write or both.")
        return data


class MaskingRuleForm(forms.Form):
    """A masking rule for topics starting with a prefix."""

    prefix = forms.CharField(
        required=False, max_length=249, help_text="Topic-name prefix; empty for every topic of the cluster."
    )
    kind = forms.ChoiceField(choices=MaskKind.choices)
    expression = forms.CharField(
        max_length=500, help_text="$.card.number, a header's name, or a regular expression (RE2)."
    )
    note = forms.CharField(required=False, max_length=500)

    def clean_prefix(self) -> str:
        return _prefix(self.cleaned_data["prefix"])
