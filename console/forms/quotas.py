"""Forms of the client quotas page: the list's filter, the effective-quota lookup, and a change (an
entity, a value per key to set, a box per key to remove). Kafka's rules for keys and values are the
area's (``quotas.core.check_changes``); the forms only shape the input."""

from __future__ import annotations

from django import forms

from console.quotas import core
from console.quotas.core import QuotaInvalid

TYPE_CHOICES = [("", "all"), (core.USER, "users"), (core.CLIENT_ID, "client ids"), (core.IP, "IPs")]
_NAME_MAX = core.NAME_MAX


class QuotaFilterForm(forms.Form):
    entity_type = forms.ChoiceField(choices=TYPE_CHOICES, required=False, label="Entity type")
    name = forms.CharField(
        required=False,
        max_length=_NAME_MAX,
        label="Name",
        help_text=f"exact name, {core.DEFAULT} for the type's default, empty for any",
    )

    page = forms.IntegerField(required=False, min_value=1, max_value=10**9, widget=forms.HiddenInput)

    def clean(self):
        data = super().clean()
        if data.get("name") and not data.get("entity_type"):
            self.add_error("entity_type", "Choose the entity type the name is of.")
        return data


class EffectiveForm(forms.Form):
    user = forms.CharField(required=False, max_length=_NAME_MAX, label="User")
    client_id = forms.CharField(required=False, max_length=_NAME_MAX, label="Client id")
    ip = forms.CharField(required=False, max_length=64, label="or an IP address")

    def clean(self):
        data = super().clean()
        if data.get("ip") and (data.get("user") or data.get("client_id")):
            raise forms.ValidationError("Ask for a user and client id, or for an IP, not both.")
        if not data.get("ip") and not (data.get("user") and data.get("client_id")):
            raise forms.ValidationError("Give a user and a client id (or an IP address).")
        return data


class QuotaAlterForm(forms.Form):
    """``entity`` as ``user=alice,client-id=app``; per key a value to set or a box to remove it."""

    entity = forms.CharField(
        max_length=3 * _NAME_MAX + 40,
        label="Entity",
        help_text=f"user=alice · user={core.DEFAULT} · user=alice,client-id=app · client-id=app · ip=10.0.0.1",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key in core.ALL_KEYS:
            self.fields[key] = forms.CharField(required=False, max_length=40, label=key)
            self.fields[f"remove_{key}"] = forms.BooleanField(required=False, label=f"remove {key}")

    @property
    def rows(self):
        """(key, unit, value field, remove field) per key, for the template."""
        return [(k, core.UNITS[k], self[k], self[f"remove_{k}"]) for k in core.ALL_KEYS]

    def clean(self):
        data = super().clean()
        try:
            data["entity_obj"] = core.parse_entity(data.get("entity") or "")
        except QuotaInvalid as exc:
            for e in exc.errors:
                self.add_error("entity", e)
        changes: dict[str, object] = {}
        for key in core.ALL_KEYS:
            value, remove = (data.get(key) or "").strip(), data.get(f"remove_{key}")
            if value and remove:
                self.add_error(key, "Set a value or remove the key, not both.")
            elif value:
                changes[key] = value
            elif remove:
                changes[key] = None
        if not changes and not self.errors:
            raise forms.ValidationError("Set or remove at least one quota key.")
        data["changes"] = changes
        return data
