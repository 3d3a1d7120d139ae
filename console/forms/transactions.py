"""The transactions pages' forms: the list's filter, find-hanging's scope and threshold, and the abort's
partition, start offset and typed confirmation. The rules are the area's (``transactions.core``)."""

from __future__ import annotations

from django import forms

from console.transactions import core

STATE_CHOICES = [("", "any state")] + [(s, s) for s in core.STATES]


class TxnFilterForm(forms.Form):
    state = forms.ChoiceField(choices=STATE_CHOICES, required=False, label="State")
    producer_id = forms.IntegerField(required=False, min_value=0, label="Producer id")
    duration_ms = forms.IntegerField(
        required=False,
        min_value=0,
        label="Running longer than (ms)",
        help_text="ListTransactions v1 (Kafka 3.8+)",
    )
    page = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)


class HangingForm(forms.Form):
    topic = forms.CharField(required=False, max_length=core.MAX_NAME, label="Topic")
    partition = forms.IntegerField(
        required=False, min_value=0, max_value=core.MAX_PARTITION, label="Partition"
    )
    broker_id = forms.IntegerField(
        required=False, min_value=0, max_value=core.MAX_PARTITION, label="Broker id"
    )
    max_transaction_timeout = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=core.MAX_TIMEOUT_MIN,
        initial=core.DEFAULT_MAX_TIMEOUT_MIN,
        label="Maximum transaction timeout (minutes)",
        help_text="open longer than this (since the producer's last write) is a candidate; 15 by default",
    )

    def clean(self):
        d = super().clean()
        if not d.get("topic") and d.get("broker_id") is None:
            raise forms.ValidationError("Give a topic or a broker id to limit the search.")
        if d.get("partition") is not None and not d.get("topic"):
            raise forms.ValidationError("A partition needs its topic.")
        if d.get("max_transaction_timeout") is None:
            d["max_transaction_timeout"] = core.DEFAULT_MAX_TIMEOUT_MIN
        return d


class AbortForm(forms.Form):
    topic = forms.CharField(max_length=core.MAX_NAME, label="Topic")
    partition = forms.IntegerField(min_value=0, max_value=core.MAX_PARTITION, label="Partition")
    start_offset = forms.IntegerField(
        min_value=0, label="Start offset", help_text="the open transaction's first offset"
    )
