"""API: the cluster registry (list, register, show, change, remove, test a connection) and the health
check. Each view calls the area action its page calls."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from rest_framework.response import Response

from console import access
from console.api import serializers_clusters as sc
from console.api.base import ApiView, form_data, paged, plain, reads, writes
from console.api.operations import operation_json
from console.clusters import actions as clusters
from console.clusters import confirm, credentials
from console.clusters import worker as health
from console.clusters.core import SECRETS


def cluster_json(cluster, user) -> dict:
    """A registry entry as the API shows it: settings and certificates' facts; of a secret only whether
    one is stored."""
    client = credentials.certificate_facts(cluster.client_certificate)
    return {
        "name": cluster.name,
        "description": cluster.description,
        "bootstrap_servers": cluster.bootstrap_servers,
        "bootstrap_controllers": cluster.bootstrap_controllers,
        "security_protocol": cluster.security_protocol,
        "sasl_mechanism": cluster.sasl_mechanism,
        "sasl_username": cluster.sasl_username,
        "ssl_check_hostname": cluster.ssl_check_hostname,
        "tls_min_version": cluster.tls_min_version,
        "ca_certificates": [c.as_json() for c in credentials.certificate_facts(cluster.ca_certificate)],
        "client_certificate": client[0].as_json() if client else None,
        "oauth_token_endpoint": cluster.oauth_token_endpoint,
        "oauth_client_id": cluster.oauth_client_id,
        "oauth_scope": cluster.oauth_scope,
        "oauth_extension_names": [k for k, _ in credentials.parse_extensions(cluster.oauth_extensions)],
        "kerberos_principal": cluster.kerberos_principal,
        "kerberos_service_name": cluster.kerberos_service_name,
        "secrets_stored": {name: cluster.has_secret(name) for name in SECRETS},
        "permissions": sorted(access.permissions(user, cluster)),
    }


def _tested(view: ApiView, cluster, form) -> Response:
    """``test_only``: Test connection with the settings sent (nothing saved); the report is the answer."""
    report = clusters.test_settings(
        actor=view.request.user,
        cluster=cluster,
        values=form.values(),
        secrets=form.secrets,
        source_ip=view.ip,
    )
    return Response(plain(report))


class ClusterList(ApiView):
    @reads("clusters_list")
    def get(self, request):
        visible = list(access.visible_clusters(request.user).order_by("name"))
        return Response(paged(visible, request, lambda c: cluster_json(c, request.user)))

    @writes("clusters_register", {201: sc.ClusterOut, 200: OpenApiTypes.OBJECT}, request=sc.ClusterIn)
    def post(self, request):
        access.require(request.user, None, access.ADMINISTER)
        d = self.body(sc.ClusterIn)
        form = sc.cluster_form(d)
        form_data(form)  # 400 with the form's messages
        if d.get("test_only"):
            return _tested(self, None, form)
        cluster = clusters.register_cluster(
            actor=request.user, values=form.values(), secrets=form.secrets, source_ip=self.ip
        )
        return Response(cluster_json(cluster, request.user), status=201)


class ClusterDetail(ApiView):
    @reads("clusters_retrieve")
    def get(self, request, name: str):
        cluster = self.cluster(name)
        data = clusters.overview(actor=request.user, cluster=cluster)
        body = cluster_json(cluster, request.user)
        body["overview"] = {
            "brokers": [plain(b) for b in sorted(data.info.brokers, key=lambda b: b.id)] if data.info else [],
            "active_controller": data.active_controller,
            "error": plain(data.error),
        }
        body["security"] = plain(data.security)  # hostname verification, certificates' expiry and warnings
        return Response(body)


class ClusterSettings(ApiView):
    @writes("clusters_update", request=sc.ClusterIn(partial=True))
    def post(self, request, name: str):
        """Change the registry entry (cluster admins): the fields sent replace the saved ones; a secret
        left blank or out keeps the stored one while the settings it was saved with are unchanged.
        ``test_only``: Test connection with the changed settings instead (nothing saved)."""
        cluster = self.cluster(name, access.ADMINISTER)
        data = sc.ClusterIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        form = sc.cluster_form(data.validated_data, cluster)
        form_data(form)  # 400 with the form's messages
        values = form.values()
        cluster.refresh_from_db()  # the form edited the instance; the action compares with the saved row
        if data.validated_data.get("test_only"):
            return _tested(self, cluster, form)
        cluster = clusters.update_cluster(
            actor=request.user, cluster=cluster, values=values, secrets=form.secrets, source_ip=self.ip
        )
        return Response(cluster_json(cluster, request.user))


class ClusterRemove(ApiView):
    @writes("clusters_remove", request=sc.ClusterRemoveIn)
    def post(self, request, name: str):
        """Remove the cluster from the console (the Kafka cluster is untouched); refused while work is owed."""
        cluster = self.cluster(name, access.ADMINISTER)
        confirm.check_removal(cluster, self.body(sc.ClusterRemoveIn)["confirm_name"])
        clusters.remove_cluster(actor=request.user, cluster=cluster, source_ip=self.ip)
        return Response({"removed": name})


class ClusterTest(ApiView):
    @writes("clusters_test", request=None)
    def post(self, request, name: str):
        """Test the registered connection (audited, as the overview's button)."""
        report = clusters.test_registered(actor=request.user, cluster=self.cluster(name), source_ip=self.ip)
        return Response(plain(report))


class HealthCheck(ApiView):
    @writes("clusters_health_check", 202, request=None)
    def post(self, request, name: str):
        cluster = self.cluster(name, access.RUN_OPERATIONS)
        op = health.start_health_check(actor=request.user, cluster=cluster, source_ip=self.ip)
        return Response(operation_json(op), status=202)
