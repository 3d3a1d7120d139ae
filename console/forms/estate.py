"""The estate page's forms: the file to plan (pasted or uploaded) and its submission for approval."""

from __future__ import annotations

from django import forms

from console import uploads


class EstatePlanForm(forms.Form):
    """An estate YAML, pasted or uploaded (UTF-8, at most the console's upload limit)."""

    text = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 14}), label="Estate YAML"
    )
    upload = forms.FileField(required=False, label="or upload the file")
    delete = forms.BooleanField(
        required=False, label="Delete topics and ACL bindings of the scope that the file does not list"
    )

    def clean(self):
        data = super().clean()
        text = data.get("text") or ""
        upload = data.get("upload")
        if upload is not None:
            if upload.size > uploads.max_bytes():
                raise forms.ValidationError(f"The file is larger than {uploads.max_bytes():,} bytes.")
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text.") from None
        if not text.strip():
            raise forms.ValidationError("Paste the estate YAML or upload the file.")
        data["text"] = text
        return data


class EstateSubmitForm(forms.Form):
    """The planned file again (as it was planned), with the reason shown to the approvers."""

    text = forms.CharField(strip=False, widget=forms.HiddenInput)
    delete = forms.BooleanField(required=False, widget=forms.HiddenInput)
    reason = forms.CharField(required=False, max_length=2000, label="Reason (shown to the approvers)")
