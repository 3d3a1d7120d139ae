"""``manage.py kafka cluster describe|register|update|test`` and the connection options ``register_cluster``
shares: one option per registry field, each naming the Kafka client property it maps to.

Secrets are never values on the command line (they would sit in shell history and ``ps``): each is read
from a file (``--client-key-file``, ``--keytab-file``) or an environment variable named by the option
(``--sasl-password-env VAR``, ``--oauth-client-secret-env VAR``). The options fill the registry form, so
the command line reads certificates, keys, PKCS#12 files and keytabs with the page's code and messages.
"""

from __future__ import annotations

import dataclasses
import os

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import CommandError

from console.clusters import actions as cluster_actions
from console.clusters.core import SECRETS
from console.forms.clusters import ClusterForm
from console.management.cli.base import KAFKA, OK, REFUSED, USAGE, common, read_text
from console.models import Cluster

# option dest -> (form field, help naming the Kafka property)
TEXT_OPTIONS = {
    "description": ("description", "a note shown with the name"),
    "bootstrap_servers": ("bootstrap_servers", "bootstrap.servers: host:port,host:port"),
    "bootstrap_controllers": ("bootstrap_controllers", "bootstrap.controllers (KIP-919)"),
    "security_protocol": ("security_protocol", "security.protocol: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    "sasl_mechanism": (
        "sasl_mechanism",
        "sasl.mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI",
    ),
    "sasl_username": ("sasl_username", "sasl.username (PLAIN, SCRAM)"),
    "tls_min_version": ("tls_min_version", "ssl.enabled.protocols floor: TLSv1.2 (default) or TLSv1.3"),
    "oauth_token_endpoint": ("oauth_token_endpoint", "sasl.oauthbearer.token.endpoint.url"),
    "oauth_client_id": ("oauth_client_id", "sasl.oauthbearer.client.credentials.client.id"),
    "oauth_scope": ("oauth_scope", "sasl.oauthbearer.scope"),
    "kerberos_principal": ("kerberos_principal", "sasl.kerberos principal, e.g. console@EXAMPLE.ORG"),
    "kerberos_service_name": ("kerberos_service_name", "sasl.kerberos.service.name (default kafka)"),
    "request_timeout": ("request_timeout_s", "request timeout in seconds"),
}
FILE_OPTIONS = {  # PEM/text files, read as text
    "ca_file": ("ca_certificate", "ssl.truststore / ssl.ca.location: CA bundle, PEM"),
    "client_cert_file": (
        "client_certificate",
        "ssl.keystore.certificate.chain / ssl.certificate.location: PEM",
    ),
    "client_key_file": (
        "client_key",
        "ssl.keystore.key / ssl.key.location: private key, PEM (stored encrypted)",
    ),
    "krb5_conf_file": ("kerberos_krb5_conf", "krb5.conf with the realm and its KDCs"),
    "sasl_password_file": ("sasl_password", "file holding sasl.password"),
    "oauth_client_secret_file": ("oauth_client_secret", "file holding the OAuth client secret"),
}
ENV_OPTIONS = {  # environment variables named on the command line
    "sasl_password_env": ("sasl_password", "VAR holding sasl.password"),
    "oauth_client_secret_env": ("oauth_client_secret", "VAR holding sasl.oauthbearer client secret"),
    "client_key_passphrase_env": (
        "client_key_passphrase",
        "VAR holding ssl.key.password (opens the key once)",
    ),
    "pkcs12_password_env": (
        "client_pkcs12_password",
        "VAR holding ssl.keystore.password (opens the file once)",
    ),
}
BINARY_OPTIONS = {  # uploads
    "pkcs12_file": (
        "client_pkcs12",
        "ssl.keystore.location (PKCS12): .p12/.pfx with the client cert and key",
    ),
    "keytab_file": ("kerberos_keytab", "the principal's keytab (stored encrypted)"),
}


def add_connection_options(p) -> None:
    """Every registry field as an option; secrets only as a file or an environment variable."""
    for table, metavar in (
        (TEXT_OPTIONS, None),
        (FILE_OPTIONS, "PATH"),
        (ENV_OPTIONS, "VAR"),
        (BINARY_OPTIONS, "PATH"),
    ):
        for dest, (_, help_text) in table.items():
            p.add_argument(
                "--" + dest.replace("_", "-"), dest=dest, default=None, metavar=metavar, help=help_text
            )
    p.add_argument(
        "--oauth-extension",
        dest="oauth_extension",
        action="append",
        default=None,
        metavar="NAME=VALUE",
        help="SASL extension (KIP-342), repeatable",
    )
    p.add_argument(
        "--hostname-check", dest="ssl_check_hostname", choices=("on", "off"), default=None,
        help="ssl.endpoint.identification.algorithm: on (default) or off (needs a superuser; audited)",
    )  # fmt: skip


def _env(var: str, option: str) -> str:
    value = os.environ.get(var)
    if value is None:
        raise CommandError(f"--{option}: the environment variable {var} is not set.", returncode=USAGE)
    return value


def _binary(path: str, option: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(1024 * 1024)
    except OSError as exc:
        raise CommandError(
            f"--{option}: cannot read {path}: {exc.strerror or exc}", returncode=USAGE
        ) from None


def given(opts: dict) -> bool:
    """Whether any connection option was given."""
    tables = (TEXT_OPTIONS, FILE_OPTIONS, ENV_OPTIONS, BINARY_OPTIONS)
    return any(opts.get(d) is not None for t in tables for d in t) or bool(
        opts.get("oauth_extension") or opts.get("ssl_check_hostname")
    )


def connection_form(opts: dict, cluster: Cluster | None = None, name: str = "") -> ClusterForm:
    """The registry form filled from the options (over the saved settings when changing a cluster)."""
    if cluster is not None:
        data = {f: getattr(cluster, f) for f in cluster_actions.EDITABLE_FIELDS}
    else:
        data = {
            "name": name,
            "security_protocol": "PLAINTEXT",
            "request_timeout_s": Cluster().request_timeout_s,
        }
    for dest, (field, _) in TEXT_OPTIONS.items():
        if opts.get(dest) is not None:
            data[field] = opts[dest]
    for dest, (field, _) in FILE_OPTIONS.items():
        if opts.get(dest) is not None:
            data[field] = read_text(opts[dest])
    for dest, (field, _) in ENV_OPTIONS.items():
        if opts.get(dest) is not None:
            data[field] = _env(opts[dest], dest.replace("_", "-"))
    if opts.get("oauth_extension") is not None:
        data["oauth_extensions"] = "\n".join(opts["oauth_extension"])
    if opts.get("ssl_check_hostname") is not None:
        data["ssl_check_hostname"] = opts["ssl_check_hostname"] == "on"
    files = {
        field: SimpleUploadedFile(field, _binary(opts[dest], dest.replace("_", "-")))
        for dest, (field, _) in BINARY_OPTIONS.items()
        if opts.get(dest) is not None
    }
    return ClusterForm(data, files, instance=cluster)


def form_errors(form: ClusterForm) -> str:
    """Each field's messages, after the field's label."""
    return "; ".join(
        f"{form.fields[k].label}: {' '.join(v)}" if k in form.fields else " ".join(v)
        for k, v in form.errors.items()
    )


def valid(form: ClusterForm) -> ClusterForm:
    """The form, or a refusal (exit 4) with each field's message."""
    if not form.is_valid():
        raise CommandError(form_errors(form), returncode=REFUSED)
    return form


def add_parsers(area) -> None:
    k = area.add_parser("cluster", help="describe, register, update, test").add_subparsers(
        dest="action", required=True
    )
    common(k.add_parser("describe", help="cluster id, active controller (quorum leader), brokers"))
    p = k.add_parser("register", help="add a cluster to the registry (superusers)")
    common(p, cluster=False)
    p.add_argument("name")
    add_connection_options(p)
    p.set_defaults(needs_cluster=False)
    p = k.add_parser("update", help="change a registered cluster's settings (its admins)")
    common(p)
    add_connection_options(p)
    p = k.add_parser("test", help="Test connection: the saved settings, or the options given over them")
    common(p)
    add_connection_options(p)


class Commands:
    """The ``cluster`` handlers (``self`` is the kafka BaseCommand)."""

    def _cluster_describe(self, cluster, actor) -> int:
        """The overview's facts; the active controller is the KRaft quorum's leader, as on the page."""
        data = cluster_actions.overview(actor=actor, cluster=cluster)
        if data.error is not None:
            raise data.error
        controller = data.active_controller if data.active_controller is not None else "unknown"
        rows = [{"id": b.id, "host": b.host, "port": b.port, "rack": b.rack or ""} for b in data.info.brokers]
        extra = {"cluster_id": data.info.cluster_id, "active_controller": controller}
        if self.opts["output"] != "json":
            self.stdout.write(f"cluster id: {data.info.cluster_id}  active controller: {controller}")
            if data.controller_unknown:
                self.stdout.write(data.controller_unknown)
        self._emit(rows, ["id", "host", "port", "rack"], extra)
        return OK

    def _refused(self, fn, **kwargs):
        try:
            return fn(**kwargs)
        except cluster_actions.PasswordRequired as exc:
            raise CommandError(str(exc), returncode=REFUSED) from None

    def _cluster_register(self, cluster, actor) -> int:
        form = valid(connection_form(self.opts, name=self.opts["name"]))
        made = self._refused(
            cluster_actions.register_cluster, actor=actor, values=form.values(), secrets=form.secrets
        )
        self._say(f"Registered cluster '{made.name}'.")
        self._emit([_row(made)], list(_row(made)))
        return OK

    def _cluster_update(self, cluster, actor) -> int:
        form = valid(connection_form(self.opts, cluster))
        cluster.refresh_from_db()
        saved = self._refused(
            cluster_actions.update_cluster,
            actor=actor,
            cluster=cluster,
            values=form.values(),
            secrets=form.secrets,
        )
        self._say(f"Saved cluster '{saved.name}'.")
        self._emit([_row(saved)], list(_row(saved)))
        return OK

    def _cluster_test(self, cluster, actor) -> int:
        if given(self.opts):
            form = valid(connection_form(self.opts, cluster))
            cluster.refresh_from_db()
            report = self._refused(
                cluster_actions.test_settings,
                actor=actor,
                cluster=cluster,
                values=form.values(),
                secrets=form.secrets,
            )
        else:
            report = cluster_actions.test_registered(actor=actor, cluster=cluster)
        row = {f.name: _plain(getattr(report, f.name)) for f in dataclasses.fields(report)}
        self._emit([row], ["ok", "mode", "cluster_id", "broker_count", "tls_version", "error_name", "error"])
        for role in ("server_certificate", "client_certificate"):
            if row[role] and self.opts["output"] == "table":
                facts = row[role]
                self._say(f"{role.replace('_', ' ')}: {facts['subject']} (issuer {facts['issuer']}), "
                          f"expires {facts['not_after']}")  # fmt: skip
        if not report.ok:
            raise CommandError(f"Connection failed: {report.error_name}: {report.error}", returncode=KAFKA)
        return OK


def _plain(value):
    if dataclasses.is_dataclass(value):
        return {f.name: str(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def _row(cluster: Cluster) -> dict:
    return {
        "name": cluster.name,
        "security_protocol": cluster.security_protocol,
        "sasl_mechanism": cluster.sasl_mechanism,
        "hostname_check": "on" if cluster.ssl_check_hostname else "off",
        "secrets_stored": ",".join(n for n in SECRETS if cluster.has_secret(n)),
    }
