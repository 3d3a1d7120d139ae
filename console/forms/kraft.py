"""Forms of the KRaft lifecycle pages: feature levels (``name=level`` lines, the upgrade type), a voter
added or removed, a broker unregistered (its id typed to confirm). The rules are the area's
(``console.quorum.core``): the forms only give their messages a field."""

from __future__ import annotations

from django import forms

from console.quorum import core

UPGRADE_CHOICES = [
    (core.UPGRADE, "upgrade"),
    (core.SAFE_DOWNGRADE, "downgrade (safe: nothing lost)"),
    (core.UNSAFE_DOWNGRADE, "downgrade (unsafe: metadata may be lost)"),
]


def _checked(form, field: str, check, value):
    try:
        return check(value)
    except core.KraftInvalid as exc:
        for problem in exc.errors:
            form.add_error(field, problem)
        return None


class FeaturesForm(forms.Form):
    updates = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "class": "mono"}),
        max_length=2000,
        help_text="One name=level per line, as kafka-features.sh --feature (e.g. metadata.version=27); "
        "metadata.version also by release: metadata.version=4.1-IV1.",
    )
    upgrade_type = forms.ChoiceField(choices=UPGRADE_CHOICES, initial=core.UPGRADE)

    def clean(self):
        data = super().clean()
        if data.get("updates") is not None:
            data["updates"] = _checked(self, "updates", core.feature_updates, data["updates"])
        return data


class VoterRemoveForm(forms.Form):
    node_id = forms.IntegerField(min_value=0, max_value=core.MAX_NODE_ID, label="Voter (node id)")
    allow_leader = forms.BooleanField(
        required=False, label="It may be the active controller (it resigns; the others elect a leader)"
    )


class VoterAddForm(forms.Form):
    node_id = forms.IntegerField(min_value=0, max_value=core.MAX_NODE_ID, label="Controller (node id)")
    directory_id = forms.CharField(
        required=False, max_length=40, help_text="Default: the directory id it fetches the metadata log with."
    )
    endpoint = forms.CharField(
        required=False,
        max_length=300,
        help_text="CONTROLLER://host:port; through the controllers the console knows it.",
    )

    def clean(self):
        data = super().clean()
        if data.get("directory_id"):
            data["directory_id"] = _checked(self, "directory_id", core.directory_id, data["directory_id"])
        if data.get("endpoint"):
            if _checked(self, "endpoint", core.endpoint, data["endpoint"]) is None:
                data["endpoint"] = None
        return data


class UnregisterForm(forms.Form):
    confirmation = forms.CharField(max_length=12, label="Type the broker id to confirm")

    def __init__(self, *args, broker_id: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.broker_id = broker_id

    def clean_confirmation(self):
        value = self.cleaned_data["confirmation"].strip()
        if value != str(self.broker_id):
            raise forms.ValidationError(f"Type {self.broker_id} exactly to confirm.")
        return value
