"""API shapes of the cluster registry. Secrets are write-only: accepted, never in an answer.

Files (a PKCS#12 keystore, a keytab) travel as base64 text in JSON and reach the registry form as
uploads, so the API and the page read them with the same code and the same messages.
"""

from __future__ import annotations

import base64
import binascii

from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework import serializers

from console.clusters.actions import EDITABLE_FIELDS
from console.forms.clusters import ClusterForm

__all__ = ["ClusterIn", "ClusterOut", "ClusterRemoveIn", "cluster_form"]


def _text(help_text: str, **kwargs) -> serializers.CharField:
    return serializers.CharField(required=False, allow_blank=True, default="", help_text=help_text, **kwargs)


def _secret(help_text: str) -> serializers.CharField:
    return serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        write_only=True,
        trim_whitespace=False,
        help_text=help_text,
    )


class CertificateOut(serializers.Serializer):
    subject = serializers.CharField()
    issuer = serializers.CharField()
    not_after = serializers.DateTimeField()
    sha256 = serializers.CharField()


class ClusterOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    bootstrap_servers = serializers.CharField()
    bootstrap_controllers = serializers.CharField()
    security_protocol = serializers.CharField()
    sasl_mechanism = serializers.CharField()
    sasl_username = serializers.CharField()
    ssl_check_hostname = serializers.BooleanField()
    tls_min_version = serializers.CharField()
    ca_certificates = CertificateOut(many=True)
    client_certificate = CertificateOut(allow_null=True)
    oauth_token_endpoint = serializers.CharField()
    oauth_client_id = serializers.CharField()
    oauth_scope = serializers.CharField()
    oauth_extension_names = serializers.ListField(child=serializers.CharField())
    kerberos_principal = serializers.CharField()
    kerberos_service_name = serializers.CharField()
    secrets_stored = serializers.DictField(
        child=serializers.BooleanField(), help_text="per secret: whether one is stored (never its value)"
    )
    permissions = serializers.ListField(child=serializers.CharField())


class ClusterIn(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    description = _text("")
    bootstrap_servers = _text("bootstrap.servers")
    bootstrap_controllers = _text("bootstrap.controllers (KIP-919)")
    security_protocol = serializers.CharField(default="PLAINTEXT", help_text="security.protocol")
    sasl_mechanism = _text("sasl.mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI")
    sasl_username = _text("sasl.username (PLAIN, SCRAM)")
    sasl_password = _secret("sasl.password (PLAIN, SCRAM); write-only, blank keeps the stored one")
    ca_certificate = _text("ssl.truststore / ssl.ca.location: CA bundle, PEM")
    client_certificate = _text("ssl.keystore.certificate.chain: client certificate chain, PEM")
    client_key = _secret("ssl.keystore.key: client private key, PEM; write-only")
    client_key_passphrase = _secret("ssl.key.password: opens an encrypted key once; never stored")
    client_pkcs12_base64 = _secret("ssl.keystore.location (PKCS12): the .p12/.pfx file as base64")
    client_pkcs12_password = _secret("ssl.keystore.password: opens the PKCS#12 file once; never stored")
    ssl_check_hostname = serializers.BooleanField(
        required=False,
        default=True,
        help_text="ssl.endpoint.identification.algorithm=https; off needs a superuser",
    )
    tls_min_version = serializers.CharField(required=False, default="TLSv1.2", help_text="TLSv1.2 or TLSv1.3")
    oauth_token_endpoint = _text("sasl.oauthbearer.token.endpoint.url")
    oauth_client_id = _text("sasl.oauthbearer.client.credentials.client.id")
    oauth_client_secret = _secret("sasl.oauthbearer.client.credentials.client.secret; write-only")
    oauth_scope = _text("sasl.oauthbearer.scope")
    oauth_extensions = _text("SASL extensions (KIP-342), one name=value a line")
    kerberos_principal = _text("sasl.kerberos principal, e.g. console@EXAMPLE.ORG")
    kerberos_keytab_base64 = _secret("the keytab file as base64; write-only")
    kerberos_service_name = serializers.CharField(
        required=False, allow_blank=True, default="kafka", help_text="sasl.kerberos.service.name"
    )
    kerberos_krb5_conf = _text("krb5.conf text (realm and KDCs)")
    request_timeout_s = serializers.FloatField(required=False, default=10)
    acl_super_users = _text("")
    acl_allow_if_no_acl = _text("")
    test_only = serializers.BooleanField(
        required=False, default=False, write_only=True,
        help_text="Test connection with these settings and answer the report; nothing is saved",
    )  # fmt: skip


class ClusterRemoveIn(serializers.Serializer):
    confirm_name = serializers.CharField(help_text="the cluster's name, typed again")


FILES = {"client_pkcs12_base64": "client_pkcs12", "kerberos_keytab_base64": "kerberos_keytab"}


def cluster_form(validated: dict, cluster=None) -> ClusterForm:
    """The registry form over the API's input (a change: over the saved settings, the fields sent replacing
    them). Base64 files become uploads; a bad one is a ValidationError naming the field."""
    data = {f: getattr(cluster, f) for f in EDITABLE_FIELDS} if cluster is not None else {}
    files = {}
    for key, value in validated.items():
        if key == "test_only":
            continue
        if key not in FILES:
            data[key] = value
        elif value:
            try:
                files[FILES[key]] = SimpleUploadedFile(FILES[key], base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                raise ValidationError([f"{key}: not valid base64."]) from None
    return ClusterForm(data, files, instance=cluster)
