"""The cluster registry form, with KIP-919's rule: bootstrap servers or bootstrap controllers, never both.

Secrets (SASL password, client private key, OAuth client secret, keytab) are write-only: never rendered
back, blank keeps the stored one (where the secret rule allows, console/clusters/secrets.py). Uploads are
read here with console/clusters/credentials.py: a PEM key opened with its passphrase or a PKCS#12 file
with its password (neither is kept) becomes an unencrypted PKCS#8 key, stored encrypted.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from console.clusters import credentials
from console.clusters.actions import EDITABLE_FIELDS
from console.clusters.core import SECRETS, needs_secret, settings_errors, uses_tls
from console.kafka import kerberos_available
from console.models import Cluster
from console.models.clusters import TlsVersion, parse_endpoints

PASSWORD = forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"})
STORED_HINT = "Stored (encrypted) - leave blank to keep it."
TLS, SASL = "SSL SASL_SSL", "SASL_PLAINTEXT SASL_SSL"
# The form's sections: (id, title, protocols, mechanisms it is used with, fields). Without CSS :has
# support the page shows them all; with it, only those the chosen protocol and mechanism use.
SECTIONS = (
    ("connection", "Connection", "", "", ("name", "description", "bootstrap_servers", "bootstrap_controllers",
                                           "security_protocol", "request_timeout_s")),
    ("tls", "TLS", TLS, "", ("ca_certificate", "ssl_check_hostname", "tls_min_version")),
    ("mtls", "Client certificate (mTLS)", TLS, "", ("client_certificate", "client_key", "client_key_passphrase",
                                                    "client_pkcs12", "client_pkcs12_password")),
    ("sasl", "SASL", SASL, "", ("sasl_mechanism",)),
    ("sasl-password", "SASL PLAIN / SCRAM", SASL, "PLAIN SCRAM-SHA-256 SCRAM-SHA-512",
     ("sasl_username", "sasl_password")),
    ("oauth", "SASL OAUTHBEARER (OIDC client credentials)", SASL, "OAUTHBEARER",
     ("oauth_token_endpoint", "oauth_client_id", "oauth_client_secret", "oauth_scope", "oauth_extensions")),
    ("kerberos", "SASL GSSAPI (Kerberos)", SASL, "GSSAPI",
     ("kerberos_principal", "kerberos_keytab", "kerberos_service_name", "kerberos_krb5_conf")),
    ("authorizer", "Authorizer facts", "", "", ("acl_super_users", "acl_allow_if_no_acl")),
)  # fmt: skip


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


class WriteOnlyTextarea(forms.Textarea):
    """A textarea that never renders its value back (a private key typed into a form that is shown
    again after Test connection or a refused save stays in the browser it was typed in, not the page)."""

    def format_value(self, value: object) -> None:
        return None


def _secret(label: str, help_text: str, max_length: int = 1000) -> forms.CharField:
    """A password or passphrase field: optional, never rendered back, kept as typed (not stripped)."""
    return forms.CharField(
        label=label, required=False, strip=False, max_length=max_length, widget=PASSWORD, help_text=help_text
    )


def _pem_area(placeholder: str, rows: int = 3) -> forms.Textarea:
    return forms.Textarea(attrs={"rows": rows, "placeholder": placeholder, "spellcheck": "false"})


class ClusterForm(forms.ModelForm):
    """Register or edit a cluster. Every field names the Kafka client property it maps to."""

    sasl_password = _secret(
        "SASL password", "sasl.password / sasl.jaas.config password (PLAIN, SCRAM). Write-only."
    )
    client_key = forms.CharField(
        label="Client private key (PEM)",
        required=False,
        strip=True,
        max_length=credentials.MAX_PEM_CHARS,
        widget=WriteOnlyTextarea(
            attrs={
                "rows": 3,
                "placeholder": "-----BEGIN PRIVATE KEY-----",
                "autocomplete": "off",
                "spellcheck": "false",
            }
        ),
        help_text="ssl.keystore.key / ssl.key.pem: PKCS#8, PKCS#1 or SEC1, optionally encrypted. Write-only.",
    )
    client_key_passphrase = _secret(
        "Private key passphrase", "ssl.key.password: opens an encrypted key once; never stored."
    )
    client_pkcs12 = forms.FileField(
        label="Or: PKCS#12 file (.p12/.pfx)",
        required=False,
        help_text="ssl.keystore.location (ssl.keystore.type=PKCS12): the client certificate and key, converted "
        "to PEM; CA certificates in it fill an empty CA bundle.",
    )
    client_pkcs12_password = _secret(
        "PKCS#12 password", "ssl.keystore.password: opens the file once; never stored."
    )
    oauth_client_secret = _secret(
        "Client secret",
        "sasl.oauthbearer.client.credentials.client.secret (clientSecret). Write-only.",
        max_length=2000,
    )
    ssl_check_hostname = forms.TypedChoiceField(
        label="Hostname verification",
        choices=(
            ("True", "On: the certificate must name the broker (recommended)"),
            ("False", "Off: accept any certificate the CA issued"),
        ),
        coerce=lambda v: str(v).lower() == "true",
        required=False,
        empty_value=True,
        help_text="ssl.endpoint.identification.algorithm=https (on by default). Turning it off needs a superuser, "
        "is audited and shows a warning on the cluster page.",
    )
    tls_min_version = forms.ChoiceField(
        label="Minimum TLS version",
        choices=TlsVersion.choices,
        required=False,
        help_text="ssl.enabled.protocols (TLSv1.2 allows TLSv1.2 and TLSv1.3)",
    )
    kerberos_keytab = forms.FileField(
        label="Keytab file",
        required=False,
        help_text="sasl.kerberos keytab (keyTab= in sasl.jaas.config; sasl.kerberos.keytab in librdkafka). Write-only.",
    )

    class Meta:
        model = Cluster
        fields = list(EDITABLE_FIELDS)
        widgets = {
            "bootstrap_servers": forms.TextInput(attrs={"placeholder": "broker1:9092,broker2:9092"}),
            "bootstrap_controllers": forms.TextInput(
                attrs={"placeholder": "controller1:9093,controller2:9093"}
            ),
            "ca_certificate": _pem_area("-----BEGIN CERTIFICATE-----"),
            "client_certificate": _pem_area("-----BEGIN CERTIFICATE-----"),
            "oauth_token_endpoint": forms.URLInput(
                attrs={"placeholder": "https://idp.example.com/realms/kafka/protocol/openid-connect/token"}
            ),
            "oauth_extensions": forms.Textarea(attrs={"rows": 2, "placeholder": "logicalCluster=lkc-abc12"}),
            "kerberos_principal": forms.TextInput(attrs={"placeholder": "console@EXAMPLE.ORG"}),
            "kerberos_krb5_conf": forms.Textarea(
                attrs={"rows": 3, "placeholder": "[libdefaults]\n  default_realm = EXAMPLE.ORG"}
            ),
            "acl_super_users": forms.TextInput(
                attrs={"placeholder": "User:admin;User:ANONYMOUS", "maxlength": 2000}
            ),
        }
        labels = {
            "request_timeout_s": "Request timeout (s)",
            "ca_certificate": "CA bundle (PEM)",
            "client_certificate": "Client certificate (PEM chain)",
            "oauth_token_endpoint": "Token endpoint",
            "oauth_client_id": "Client id",
            "oauth_scope": "Scope",
            "oauth_extensions": "SASL extensions",
            "kerberos_principal": "Principal",
            "kerberos_service_name": "Kerberos service name",
            "kerberos_krb5_conf": "krb5.conf",
            "acl_super_users": "Brokers' super.users",
            "acl_allow_if_no_acl": "Brokers' allow.everyone.if.no.acl.found",
        }
        help_texts = {
            "bootstrap_servers": "bootstrap.servers",
            "bootstrap_controllers": "bootstrap.controllers - KIP-919: either bootstrap servers or bootstrap "
            "controllers, never both.",
            "security_protocol": "security.protocol",
            "sasl_mechanism": "sasl.mechanism",
            "sasl_username": "sasl.username / sasl.jaas.config username (PLAIN, SCRAM)",
            "ca_certificate": "ssl.truststore / ssl.ca.location: one or more CA certificates; blank uses the "
            "system's CAs.",
            "client_certificate": "ssl.keystore.certificate.chain / ssl.certificate.location: the client's own "
            "certificate first, then intermediates.",
            "oauth_token_endpoint": "sasl.oauthbearer.token.endpoint.url (https; http only to a loopback address)",
            "oauth_client_id": "sasl.oauthbearer.client.credentials.client.id (clientId)",
            "oauth_scope": "sasl.oauthbearer.scope (scope), optional",
            "oauth_extensions": "sasl.oauthbearer.extensions / extension_NAME=VALUE (KIP-342): one name=value a "
            "line; names are letters, 'auth' is reserved.",
            "kerberos_principal": "sasl.kerberos.principal (principal= in sasl.jaas.config)",
            "kerberos_service_name": "sasl.kerberos.service.name (the brokers' primary, usually kafka)",
            "kerberos_krb5_conf": "The realm and its KDCs (java.security.krb5.conf / KRB5_CONFIG); blank uses the "
            "host's /etc/krb5.conf.",
            "acl_super_users": "As in server.properties, e.g. User:admin;User:ANONYMOUS. Kafka hides it from "
            "DescribeConfigs; effective access uses it. Leave blank if unknown.",
            "acl_allow_if_no_acl": "Kafka hides it too; effective access answers 'unknown' without it.",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["client_key"].widget.is_required = False
        saved = self.instance if self.instance.pk else None
        for name in SECRETS:
            if saved is not None and saved.has_secret(name):
                self.fields[name].help_text += f" {STORED_HINT}"
        self.secrets: dict[str, str] = {}

    @property
    def sections(self) -> list[dict]:
        """The fields by section, for the template (data-protocols/-mechanisms: what shows it)."""
        return [
            {"id": sid, "title": title, "protocols": protocols, "mechanisms": mechanisms,
             "fields": [self[f] for f in names]}
            for sid, title, protocols, mechanisms, names in SECTIONS
        ]  # fmt: skip

    def clean_request_timeout_s(self) -> float:
        value = self.cleaned_data["request_timeout_s"]
        if not 0.5 <= value <= 120:
            raise ValidationError("Use a timeout between 0.5 and 120 seconds.")
        return value

    def clean_ca_certificate(self) -> str:
        pem = self.cleaned_data.get("ca_certificate", "").strip()
        credentials.parse_certificates(pem, "CA bundle")
        return pem

    def clean_oauth_extensions(self) -> str:
        text = self.cleaned_data.get("oauth_extensions", "")
        return "\n".join(f"{k}={v}" for k, v in credentials.parse_extensions(text))

    def clean_kerberos_keytab(self) -> str:
        upload = self.cleaned_data.get("kerberos_keytab")
        if not upload:
            return ""
        if upload.size > credentials.MAX_KEYTAB_BYTES:
            raise ValidationError(f"Keytab: at most {credentials.MAX_KEYTAB_BYTES // 1024} KiB.")
        return credentials.keytab_text(upload.read())

    def _client_credentials(self, data: dict) -> None:
        upload = data.get("client_pkcs12")
        if upload:
            if upload.size > credentials.MAX_PKCS12_BYTES:
                raise ValidationError(
                    {"client_pkcs12": f"At most {credentials.MAX_PKCS12_BYTES // 1024} KiB."}
                )
            try:
                chain, key, roots = credentials.from_pkcs12(
                    upload.read(), data.get("client_pkcs12_password", "")
                )
            except ValidationError as exc:
                raise ValidationError({"client_pkcs12": exc.messages}) from None
            data["client_certificate"], data["client_key"] = chain, key
            if roots and not data.get("ca_certificate"):
                data["ca_certificate"] = roots.strip()
            return
        if data.get("client_key"):
            try:
                data["client_certificate"], data["client_key"] = credentials.client_credentials(
                    data.get("client_certificate", ""),
                    data["client_key"],
                    data.get("client_key_passphrase", ""),
                )
            except ValidationError as exc:
                raise ValidationError({"client_key": exc.messages}) from None
        elif data.get("client_certificate"):
            try:
                chain = credentials.parse_certificates(data["client_certificate"], "Client certificate")
            except ValidationError as exc:
                raise ValidationError({"client_certificate": exc.messages}) from None
            data["client_certificate"] = credentials.pem_text(chain)

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
        try:
            self._client_credentials(data)
        except ValidationError as exc:
            self.add_error(None, exc)
        data["kerberos_service_name"] = (data.get("kerberos_service_name") or "").strip() or "kafka"
        data["tls_min_version"] = data.get("tls_min_version") or TlsVersion.TLS_1_2
        if not uses_tls(data):  # meaningless without TLS: kept at their defaults
            data["ssl_check_hostname"], data["tls_min_version"] = True, TlsVersion.TLS_1_2
        for name in SECRETS:
            if data.get(name) and not needs_secret(name, data) and name not in self.errors:
                self.add_error(name, "Not used with this security protocol and SASL mechanism.")
        saved = self.instance if self.instance.pk else None
        has = {n: bool(data.get(n)) or bool(saved is not None and saved.has_secret(n)) for n in SECRETS}
        for field, messages in settings_errors(data, has, kerberos_available()).items():
            if field not in self.errors:
                self.add_error(field if field in self.fields else None, messages)
        self._authorizer_facts(data)
        self.secrets = {n: data.get(n) or "" for n in SECRETS}
        return data

    def _authorizer_facts(self, data: dict) -> None:
        if len(data.get("acl_super_users") or "") > 2000:
            self.add_error("acl_super_users", "At most 2000 characters.")
        for principal in (data.get("acl_super_users") or "").split(";")[:200]:
            if principal.strip() and ":" not in principal.strip():
                self.add_error(
                    "acl_super_users", f"'{principal.strip()[:80]}' is not a principal (Type:name)."
                )

    def values(self) -> dict:
        return {f: self.cleaned_data[f] for f in self.Meta.fields}
