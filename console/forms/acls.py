"""ACL forms: the list filter, one binding, a pasted batch, and the effective-access question."""

from __future__ import annotations

from django import forms

from console.acls import core as acl_core

_ANY = [("ANY", "any")]


def _choices(values) -> list[tuple[str, str]]:
    return [(v, v) for v in values]


class AclFilterForm(forms.Form):
    """The list (and delete-by-filter) filter; empty fields match anything."""

    resource_type = forms.ChoiceField(required=False, choices=_ANY + _choices(acl_core.RESOURCE_TYPES))
    pattern_type = forms.ChoiceField(
        required=False,
        choices=_choices(acl_core.FILTER_PATTERN_TYPES),
        help_text="MATCH: literal, wildcard and prefixed bindings that apply to the name",
    )
    resource_name = forms.CharField(required=False, max_length=acl_core.NAME_MAX)
    principal = forms.CharField(
        required=False, max_length=acl_core.NAME_MAX, help_text="User:name or Group:name"
    )
    host = forms.CharField(required=False, max_length=64)
    operation = forms.ChoiceField(required=False, choices=_ANY + _choices(acl_core.ALL_OPERATIONS))
    permission = forms.ChoiceField(required=False, choices=_ANY + _choices(acl_core.PERMISSIONS))
    group_by = forms.ChoiceField(
        required=False, choices=[("principal", "principal"), ("resource", "resource")]
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000, widget=forms.HiddenInput)

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                data["filter"] = acl_core.validate_filter(data)
            except acl_core.AclValidationError as exc:
                for error in exc.errors:
                    self.add_error(None, error)
        return data

    def query(self) -> dict:
        """The list's arguments (acls.list_acls): what a valid form narrows, else every binding grouped
        by principal, first page."""
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}
        return {
            "acl_filter": data.get("filter") or acl_core.validate_filter({}),
            "group_by": data.get("group_by") or "principal",
            "page": data.get("page") or 1,
        }


class AclBindingForm(forms.Form):
    """One binding to create."""

    resource_type = forms.ChoiceField(choices=_choices(acl_core.RESOURCE_TYPES))
    pattern_type = forms.ChoiceField(choices=_choices(acl_core.PATTERN_TYPES))
    resource_name = forms.CharField(max_length=acl_core.NAME_MAX)
    principal = forms.CharField(max_length=acl_core.NAME_MAX, help_text="User:name or Group:name")
    host = forms.CharField(max_length=64, initial="*")
    operation = forms.ChoiceField(choices=_choices(acl_core.ALL_OPERATIONS))
    permission = forms.ChoiceField(choices=_choices(acl_core.PERMISSIONS))

    def clean(self):
        data = super().clean()
        if not self.errors:
            binding, problems = acl_core.validate_binding({k: data[k] for k in acl_core.BINDING_FIELDS})
            for problem in problems:
                self.add_error(None, problem)
            data["binding"] = binding
        return data


class AclBatchForm(forms.Form):
    """Pasted YAML or JSON: a binding, a list of bindings, or {create: [...], delete: [...]}; or the
    same as a file (an export of this or another cluster)."""

    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}),
        max_length=acl_core.BATCH_TEXT_MAX,
        label="Bindings (YAML or JSON)",
        required=False,
    )
    file = forms.FileField(required=False, label="or a file (YAML or JSON, such as an export)")

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        text, upload = (data.get("text") or "").strip(), data.get("file")
        if text and upload:
            self.add_error(None, "paste the bindings or choose a file, not both")
            return data
        if upload:
            if upload.size > acl_core.BATCH_TEXT_MAX:
                self.add_error("file", f"the file is larger than {acl_core.BATCH_TEXT_MAX // 1024} KiB")
                return data
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                self.add_error("file", "the file is not UTF-8 text")
                return data
        if not text.strip():
            self.add_error("text", "paste the bindings or choose a file")
            return data
        try:
            data["creates"], data["delete_filters"] = acl_core.parse_batch(text)
        except acl_core.AclValidationError as exc:
            for error in exc.errors[:50]:
                self.add_error("file" if upload else "text", error)
        return data


class AclExportForm(AclFilterForm):
    """The list's filter and the file's format."""

    output = forms.ChoiceField(
        choices=_choices(acl_core.EXPORT_FORMATS), required=False, help_text="default yaml"
    )

    def clean(self):
        data = super().clean()
        data["output"] = data.get("output") or "yaml"
        return data


class EffectiveAccessForm(forms.Form):
    """A principal and a resource (why may it do X there), a principal alone (everything it can do)
    or a resource alone (who can do what on it)."""

    principal = forms.CharField(
        max_length=acl_core.NAME_MAX, required=False, help_text="User:name; blank: who can use the resource"
    )
    resource_type = forms.ChoiceField(choices=_choices(("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID")))
    resource_name = forms.CharField(
        max_length=acl_core.NAME_MAX,
        required=False,
        help_text="kafka-cluster for CLUSTER; blank: everything the principal can do",
    )
    host = forms.CharField(
        max_length=64,
        initial="*",
        required=False,
        help_text="a client address, or blank / * for any host (bindings for one address are listed with theirs)",
    )

    def clean(self):
        data = super().clean()
        principal, resource = (data.get("principal") or "").strip(), (data.get("resource_name") or "").strip()
        host = (data.get("host") or "").strip() or "*"
        for problem in (
            None if principal or resource else "give a principal, a resource, or both",
            acl_core.check_principal(principal) if principal else None,
            acl_core.check_host(host),
            None
            if host == "*" or (principal and resource)
            else "a host applies only when both a principal and a resource are given",
        ):
            if problem and not self.errors:
                self.add_error(None, problem)
        return data
