"""Request forms: one submit form whose fields depend on the kind, the decision, the auto-approve rule.

A consumer group reset request takes the groups area's reset form (mode, scope and value, as on a
group's reset page) under the ``reset-`` prefix, beside the group id."""

from __future__ import annotations

from django import forms

from console.acls import core as acl_core
from console.changes.queue import COMMENT_MAX
from console.forms.groups import ResetForm
from console.groups import reset_payload as group_reset
from console.requests import kinds as request_kinds

_NEEDS_TOPIC = {"topic.create", "topic.config", "topic.partitions", "topic.delete"}
RESET_PREFIX = "reset"
# field -> the kinds it belongs to, where its part of the page is for more kinds than it
FIELD_KINDS = {
    "partitions": "topic.create",
    "replication_factor": "topic.create",
    "total_count": "topic.partitions",
    "configs": "topic.config topic.create",
}  # the ACL and the group reset fields are marked by their fieldset


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
    kind = forms.ChoiceField(choices=request_kinds.CHOICES)
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
    group = forms.CharField(
        required=False,
        max_length=group_reset.MAX_GROUP_ID,
        label="Consumer group",
        help_text="Its id must start with one of your namespaces, as must every topic the reset touches.",
    )
    reason = forms.CharField(
        required=False,
        max_length=COMMENT_MAX,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why (for the approver)",
    )

    def __init__(self, data=None, files=None, **kwargs) -> None:
        super().__init__(data, files, **kwargs)
        for_reset = data is not None and data.get("kind") == request_kinds.GROUP_RESET
        self.reset = ResetForm(
            data if for_reset else None,
            files if for_reset else None,
            prefix=RESET_PREFIX,
            group_id=str((data or {}).get("group") or "").strip(),
        )
        labels = {"mode": "Reset to", "scope": "Reset which partitions", "topic": "Topic to reset"}
        for name, label in labels.items():
            self.reset.fields[name].label = label

    def sections(self) -> list[tuple[str, str, list[tuple]]]:
        """The page's parts in order, as (legend, kinds, rows), each row (field, kinds, modes,
        scopes): the kind, the topic fields, the ACL fields, the group and the reset form's fields,
        the reason. The kinds, modes and scopes mark what each field is for."""
        modes, scopes = dict(ResetForm.MODE_FIELDS), dict(ResetForm.SCOPE_FIELDS)
        legends = {
            "topic": ("Topic", " ".join(sorted(_NEEDS_TOPIC))),
            "acl_principal": ("ACL", "acl.create"),
            "group": ("Consumer group offset reset", request_kinds.GROUP_RESET),
            "reason": ("", ""),
        }
        out: list[tuple[str, str, list[tuple]]] = [("", "", [])]
        for field in self:
            if field.name in legends:
                out.append((*legends[field.name], []))
            out[-1][2].append((field, FIELD_KINDS.get(field.name, ""), "", ""))
            if field.name == "group":
                out[-1][2].extend(
                    (sub, "", modes.get(sub.name, ""), scopes.get(sub.name, "")) for sub in self.reset
                )
        return out

    def clean(self):
        data = super().clean()
        kind = data.get("kind")
        if self.errors or not kind:
            return data
        if kind == request_kinds.GROUP_RESET:
            group = (data.get("group") or "").strip()
            if not group:
                self.add_error("group", "Name the consumer group.")
            elif self.reset.is_valid():
                data["payload"] = {
                    "group": group,
                    "reset": group_reset.spec_to_dict(self.reset.cleaned_data["spec"]),
                }
            else:
                self.add_error(None, "Check the reset fields below.")
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
        required=False, choices=request_kinds.CHOICES, widget=forms.CheckboxSelectMultiple
    )
    max_partitions = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)
