"""The cluster registry form, with KIP-919's rule: bootstrap servers or bootstrap controllers, never both."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from console.clusters.actions import EDITABLE_FIELDS
from console.models import Cluster
from console.models.clusters import parse_endpoints


def kip919_error(servers: str, controllers: str) -> str | None:
    """KIP-919: a connection has bootstrap.servers or bootstrap.controllers, never both, never neither."""
    if servers.strip() and controllers.strip():
        return (
            "Give bootstrap servers or bootstrap controllers, not both: an admin client talks either to the "
            "brokers or directly to the KRaft controllers (KIP-919). Register the controllers as a second cluster."
        )
    if not servers.strip() and not controllers.strip():
        return (
            "Give bootstrap servers (brokers) or, to administer the KRaft quorum directly (KIP-919), "
            "bootstrap controllers."
        )
    return None


def validate_connection_fields(servers: str, controllers: str) -> None:
    """Raise ValidationError unless exactly one well-formed address list is given."""
    message = kip919_error(servers, controllers)
    if message:
        raise ValidationError(message)
    parse_endpoints(servers, "Bootstrap servers")
    parse_endpoints(controllers, "Bootstrap controllers")


class ClusterForm(forms.ModelForm):
    """Register or edit a cluster. The SASL password is write-only: blank keeps the stored one."""

    sasl_password = forms.CharField(
        label="SASL password",
        required=False,
        strip=False,
        max_length=1000,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
    )

    class Meta:
        model = Cluster
        fields = list(EDITABLE_FIELDS)
        widgets = {
            "bootstrap_servers": forms.TextInput(attrs={"placeholder": "broker1:9092,broker2:9092"}),
            "bootstrap_controllers": forms.TextInput(
                attrs={"placeholder": "controller1:9093,controller2:9093"}
            ),
            "ca_certificate": forms.Textarea(attrs={"rows": 3, "placeholder": "-----BEGIN CERTIFICATE-----"}),
            "acl_super_users": forms.TextInput(
                attrs={"placeholder": "User:admin;User:ANONYMOUS", "maxlength": 2000}
            ),
        }
        labels = {
            "request_timeout_s": "Request timeout (s)",
            "ca_certificate": "CA certificate (PEM)",
            "acl_super_users": "Brokers' super.users",
            "acl_allow_if_no_acl": "Brokers' allow.everyone.if.no.acl.found",
        }
        help_texts = {
            "bootstrap_controllers": "KIP-919: either bootstrap servers or bootstrap controllers, never both.",
            "acl_super_users": "As in server.properties, e.g. User:admin;User:ANONYMOUS. Kafka hides it from "
            "DescribeConfigs; effective access uses it. Leave blank if unknown.",
            "acl_allow_if_no_acl": "Kafka hides it too; effective access answers 'unknown' without it.",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and self.instance.has_sasl_password:
            self.fields[
                "sasl_password"
            ].help_text = "A password is stored (encrypted). Leave blank to keep it."

    def clean_request_timeout_s(self) -> float:
        value = self.cleaned_data["request_timeout_s"]
        if not 0.5 <= value <= 120:
            raise ValidationError("Use a timeout between 0.5 and 120 seconds.")
        return value

    def clean_ca_certificate(self) -> str:
        pem = self.cleaned_data.get("ca_certificate", "").strip()
        if pem and not (
            pem.startswith("-----BEGIN CERTIFICATE-----")
            and pem.rstrip().endswith("-----END CERTIFICATE-----")
        ):
            raise ValidationError(
                "Paste the CA certificate in PEM form, from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----."
            )
        return pem

    def clean(self) -> dict:
        data = super().clean()
        servers = data.get("bootstrap_servers", "") or ""
        controllers = data.get("bootstrap_controllers", "") or ""
        message = kip919_error(servers, controllers)
        if message:
            self.add_error(None, message)
        for field, label, value in (
            ("bootstrap_servers", "Bootstrap servers", servers),
            ("bootstrap_controllers", "Bootstrap controllers", controllers),
        ):
            try:
                # Stored in one canonical form, "host:port,host:port", whatever separators were typed.
                data[field] = ",".join(parse_endpoints(value, label))
            except ValidationError as exc:
                self.add_error(field, exc)
        protocol = data.get("security_protocol", "")
        if protocol.startswith("SASL"):
            if not data.get("sasl_mechanism"):
                self.add_error("sasl_mechanism", f"{protocol} needs a SASL mechanism.")
            if not data.get("sasl_username"):
                self.add_error("sasl_username", f"{protocol} needs a SASL user name.")
            has_stored = bool(self.instance and self.instance.pk and self.instance.has_sasl_password)
            if not data.get("sasl_password") and not has_stored:
                self.add_error("sasl_password", f"{protocol} needs a SASL password.")
        elif data.get("sasl_mechanism") or data.get("sasl_username") or data.get("sasl_password"):
            self.add_error(
                "security_protocol", "SASL settings need a SASL_PLAINTEXT or SASL_SSL security protocol."
            )
        if len(data.get("acl_super_users") or "") > 2000:
            self.add_error("acl_super_users", "At most 2000 characters.")
        for principal in (data.get("acl_super_users") or "").split(";")[:200]:
            if principal.strip() and ":" not in principal.strip():
                self.add_error(
                    "acl_super_users", f"'{principal.strip()[:80]}' is not a principal (Type:name)."
                )
        if data.get("ca_certificate") and protocol not in ("SSL", "SASL_SSL"):
            self.add_error("ca_certificate", "A CA certificate is only used with SSL or SASL_SSL.")
        return data

    def values(self) -> dict:
        return {f: self.cleaned_data[f] for f in self.Meta.fields}
