"""Request forms: one submit form whose fields depend on the kind, the decision, the auto-approve rule."""

from __future__ import annotations

from django import forms

from console.acls import core as acl_core
from console.models.requests import RequestKind
from console.requests.actions import COMMENT_MAX

_NEEDS_TOPIC = {"topic.create", "topic.config", "topic.partitions", "topic.delete"}


def parse_config_lines(text: str, *, allow_delete: bool) -> list[tuple[str, str, str | None]]:
    """'key=value' lines (SET) and, for changes, '-key' lines (DELETE); raises ValidationError."""
    out, errors = [], []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if allow_delete and line.startswith("-") and "=" not in line:
            out.append(("DELETE", line[1:].strip(), None))
        elif "=" in line:
            key, value = line.split("=", 1)
            out.append(("SET", key.strip(), value.strip()))
        else:
            errors.append(f"line {n}: write key=value{' or -key' if allow_delete else ''}")
    if errors:
        raise forms.ValidationError(errors)
    return out


class RequestForm(forms.Form):
    kind = forms.ChoiceField(choices=RequestKind.choices)
    topic = forms.CharField(required=False, max_length=300, label="Topic name")
    partitions = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)
    replication_factor = forms.IntegerField(required=False, min_value=1, max_value=100)
    total_count = forms.IntegerField(
        required=False, min_value=1, max_value=1_000_000, label="New partition total"
    )
    configs = forms.CharField(
        required=False,
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text="One key=value per line; for a config change, -key removes an override.",
    )
    acl_principal = forms.CharField(required=False, max_length=acl_core.NAME_MAX, label="Principal")
    acl_resource_type = forms.ChoiceField(
        required=False,
        choices=[(t, t) for t in ("TOPIC", "GROUP", "TRANSACTIONAL_ID")],
        label="Resource type",
    )
    acl_pattern_type = forms.ChoiceField(
        required=False, choices=[(p, p) for p in acl_core.PATTERN_TYPES], label="Pattern"
    )
    acl_resource_name = forms.CharField(required=False, max_length=acl_core.NAME_MAX, label="Resource name")
    acl_operation = forms.ChoiceField(
        required=False, choices=[(o, o) for o in acl_core.ALL_OPERATIONS], label="Operation"
    )
    acl_permission = forms.ChoiceField(
        required=False, choices=[(p, p) for p in acl_core.PERMISSIONS], label="Permission"
    )
    acl_host = forms.CharField(required=False, max_length=64, initial="*", label="Host")
    reason = forms.CharField(
        required=False,
        max_length=COMMENT_MAX,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why (for the approver)",
    )

    def clean(self):
        data = super().clean()
        kind = data.get("kind")
        if self.errors or not kind:
            return data
        topic = (data.get("topic") or "").strip()
        if kind in _NEEDS_TOPIC and not topic:
            self.add_error("topic", "Name the topic.")
            return data
        try:
            data["payload"] = self._payload(kind, topic, data)
        except forms.ValidationError as exc:
            self.add_error(None, exc)
        return data

    def _payload(self, kind: str, topic: str, data: dict) -> dict:
        if kind == "topic.create":
            if not data.get("partitions") or not data.get("replication_factor"):
                raise forms.ValidationError("Give the partition count and the replication factor.")
            lines = parse_config_lines(data.get("configs") or "", allow_delete=False)
            return {
                "name": topic,
                "partitions": data["partitions"],
                "replication_factor": data["replication_factor"],
                "configs": {k: v for _, k, v in lines},
            }
        if kind == "topic.config":
            lines = parse_config_lines(data.get("configs") or "", allow_delete=True)
            if not lines:
                raise forms.ValidationError("List at least one config change.")
            return {"topic": topic, "changes": [{"name": k, "op": op, "value": v} for op, k, v in lines]}
        if kind == "topic.partitions":
            if not data.get("total_count"):
                raise forms.ValidationError("Give the new total partition count.")
            return {"topic": topic, "total_count": data["total_count"]}
        if kind == "topic.delete":
            return {"topic": topic}
        binding = {f: data.get(f"acl_{f}") or "" for f in acl_core.BINDING_FIELDS}
        return {"binding": {**binding, "host": binding["host"] or "*"}}


class DecisionForm(forms.Form):
    comment = forms.CharField(
        required=False, max_length=COMMENT_MAX, widget=forms.Textarea(attrs={"rows": 2})
    )


class AutoApproveRuleForm(forms.Form):
    enabled = forms.BooleanField(required=False)
    kinds = forms.MultipleChoiceField(
        required=False, choices=RequestKind.choices, widget=forms.CheckboxSelectMultiple
    )
    max_partitions = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)
