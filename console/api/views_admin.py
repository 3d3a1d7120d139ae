"""API: cluster administration and the remaining pages' reads: connection test, health check, role
bindings, topic policy, auto-approve rule, a broker, a topic's consumers, the plan export, controllers."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from console import access
from console.api import serializers as s
from console.api import serializers_clusters as sc
from console.api.base import ApiView, paged, plain
from console.api.idempotency import idempotent
from console.api.views_acls_groups import form_data
from console.api.views_ops import operation_json
from console.api.views_topics import cluster_json
from console.brokers import query as broker_query
from console.brokers import reads as broker_reads
from console.clusters import actions as clusters
from console.clusters import bindings, capabilities
from console.clusters import worker as health
from console.forms.bindings import GrantRoleForm
from console.forms.requests import AutoApproveRuleForm
from console.forms.topics import TopicPolicyForm
from console.groups import reads as group_reads
from console.models import RoleBinding
from console.models.requests import AutoApproveRule
from console.quorum import controllers
from console.reassignment import actions as reassignment
from console.requests import actions as requests
from console.topics import policy

ERRORS = {400: s.ErrorBody, 403: s.ErrorBody, 404: s.ErrorBody, 422: s.ErrorBody}


class ClusterTest(ApiView):
    @extend_schema(operation_id="clusters_test", request=None, responses={200: OpenApiTypes.OBJECT, **ERRORS})
    @idempotent
    def post(self, request, name: str):
        """Test the registered connection (audited, as the overview's button)."""
        report = clusters.test_registered(actor=request.user, cluster=self.cluster(name), source_ip=self.ip)
        return Response(plain(report))


class ClusterSettings(ApiView):
    @extend_schema(
        operation_id="clusters_update",
        request=sc.ClusterIn(partial=True),
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
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
            report = clusters.test_settings(
                actor=request.user, cluster=cluster, values=values, secrets=form.secrets, source_ip=self.ip
            )
            return Response(plain(report))
        cluster = clusters.update_cluster(
            actor=request.user, cluster=cluster, values=values, secrets=form.secrets, source_ip=self.ip
        )
        return Response(cluster_json(cluster, request.user))


class ClusterRemove(ApiView):
    @extend_schema(
        operation_id="clusters_remove",
        request=sc.ClusterRemoveIn,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str):
        """Remove the cluster from the console (the Kafka cluster is untouched); refused while work is owed."""
        cluster = self.cluster(name, access.ADMINISTER)
        data = sc.ClusterRemoveIn(data=request.data)
        data.is_valid(raise_exception=True)
        if data.validated_data["confirm_name"] != cluster.name:
            raise ValidationError([f"Type the cluster name '{cluster.name}' to confirm removal."])
        clusters.remove_cluster(actor=request.user, cluster=cluster, source_ip=self.ip)
        return Response({"removed": name})


class HealthCheck(ApiView):
    @extend_schema(
        operation_id="clusters_health_check", request=None, responses={202: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.RUN_OPERATIONS)
        op = health.start_health_check(actor=request.user, cluster=cluster, source_ip=self.ip)
        return Response(operation_json(op), status=202)


def binding_json(b: RoleBinding) -> dict:
    return {
        "id": b.pk,
        "user": b.user.username if b.user_id else None,
        "group": b.group.name if b.group_id else None,
        "role": b.role,
        "namespaces": b.namespaces or [],
        "principals": b.principals or [],
    }


class Bindings(ApiView):
    @extend_schema(operation_id="access_list", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        rows = list(
            cluster.bindings.select_related("user", "group").order_by("role", "user__username", "group__name")
        )
        return Response(paged(rows, request, binding_json))

    @extend_schema(
        operation_id="access_grant", request=s.GrantIn, responses={201: OpenApiTypes.OBJECT, **ERRORS}
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        data = s.GrantIn(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        user = get_user_model().objects.filter(username=d.get("user")).first() if d.get("user") else None
        group = Group.objects.filter(name=d.get("group")).first() if d.get("group") else None
        if (d.get("user") and user is None) or (d.get("group") and group is None):
            raise ValidationError(["No such user or group."])
        fields = {
            "user": user.pk if user else "",
            "group": group.pk if group else "",
            "role": d["role"],
            "namespaces": "\n".join(d["namespaces"]),
            "principals": "\n".join(d["principals"]),
        }
        cleaned = form_data(GrantRoleForm(fields))
        binding = bindings.grant_role(actor=request.user, cluster=cluster, source_ip=self.ip, **cleaned)
        return Response(binding_json(binding), status=201)


class BindingRevoke(ApiView):
    @extend_schema(operation_id="access_revoke", request=None, responses={200: OpenApiTypes.OBJECT, **ERRORS})
    @idempotent
    def post(self, request, name: str, binding_id: int):
        cluster = self.cluster(name, access.ADMINISTER)
        binding = RoleBinding.objects.filter(pk=binding_id, cluster=cluster).first()
        if binding is None:
            raise Http404("No such role binding.")
        described = binding_json(binding)
        bindings.revoke_role(actor=request.user, binding=binding, source_ip=self.ip)
        return Response({"revoked": described})


def _policy_json(cluster) -> dict:
    return plain(policy.rules_for(cluster))


class TopicPolicy(ApiView):
    @extend_schema(operation_id="topics_policy_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        return Response(_policy_json(self.cluster(name)))

    @extend_schema(
        operation_id="topics_policy_update",
        request=s.TopicPolicyIn,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str):
        """Replace the cluster's topic policy (cluster admins); fields left out become unrestricted."""
        cluster = self.cluster(name, access.ADMINISTER)
        data = s.TopicPolicyIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = {k: "" if v is None else v for k, v in data.validated_data.items()}
        values = form_data(TopicPolicyForm(fields))
        policy.update_topic_policy(actor=request.user, cluster=cluster, values=values, source_ip=self.ip)
        return Response(_policy_json(cluster))


class RequestRules(ApiView):
    @extend_schema(operation_id="requests_rules_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        rule = AutoApproveRule.objects.filter(cluster=cluster).first()
        if rule is None:
            return Response({"enabled": False, "kinds": [], "max_partitions": None})
        return Response({"enabled": rule.enabled, "kinds": rule.kinds, "max_partitions": rule.max_partitions})

    @extend_schema(
        operation_id="requests_rules_update",
        request=s.AutoApproveIn,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str):
        cluster = self.cluster(name, access.ADMINISTER)
        data = s.AutoApproveIn(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        fields = {
            "enabled": d["enabled"],
            "kinds": d["kinds"],
            "max_partitions": d.get("max_partitions") or "",
        }
        cleaned = form_data(AutoApproveRuleForm(fields))
        rule = requests.set_auto_approve_rule(
            actor=request.user, cluster=cluster, **cleaned, source_ip=self.ip
        )
        return Response({"enabled": rule.enabled, "kinds": rule.kinds, "max_partitions": rule.max_partitions})


class BrokerDetail(ApiView):
    @extend_schema(operation_id="brokers_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str, broker: str):
        cluster = self.cluster(name)
        reason = capabilities.unavailable_reason(cluster, "log_dirs")
        if reason:
            raise ValidationError([reason])
        q = broker_query.PartitionQuery.from_params(request.query_params)
        try:
            detail = broker_reads.describe_broker(actor=request.user, cluster=cluster, broker=broker, query=q)
        except broker_reads.UnknownBroker:
            raise Http404("No such broker.") from None
        return Response(plain(detail))


class TopicConsumers(ApiView):
    @extend_schema(operation_id="topics_consumers", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str, topic: str):
        cluster = self.cluster(name)
        reason = capabilities.unavailable_reason(cluster, "groups")
        if reason:
            raise ValidationError([reason])
        rows = group_reads.topic_consumers(actor=request.user, cluster=cluster, topic=topic)
        return Response(paged(rows, request))


class PlanExport(ApiView):
    @extend_schema(
        operation_id="reassignments_export",
        parameters=[OpenApiParameter("topics", str, description="comma-separated topic names")],
        responses={(200, "application/json"): OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request, name: str):
        """The topics' current assignment in kafka-reassign-partitions' JSON (to edit and submit)."""
        cluster = self.cluster(name)
        topics = [t.strip() for t in request.query_params.get("topics", "").split(",") if t.strip()]
        text = reassignment.export_assignment(cluster, topics)
        return HttpResponse(text, content_type="application/json")


class Controller(ApiView):
    @extend_schema(operation_id="quorum_controller_retrieve", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request, name: str, node_id: int):
        cluster = _controllers_cluster(self, name)
        return Response(
            plain(controllers.describe_controller(actor=request.user, cluster=cluster, node_id=node_id))
        )

    @extend_schema(
        operation_id="quorum_controller_log_levels",
        request=s.LogLevelsIn,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    @idempotent
    def post(self, request, name: str, node_id: int):
        """Set (or RESET) log levels on one controller; ``dry_run`` (the default) only validates."""
        cluster = _controllers_cluster(self, name, access.MANAGE_CONFIGS)
        data = s.LogLevelsIn(data=request.data)
        data.is_valid(raise_exception=True)
        result = controllers.change_log_levels(
            actor=request.user,
            cluster=cluster,
            node_id=node_id,
            levels=dict(data.validated_data["levels"]),
            dry_run=data.validated_data["dry_run"],
            source_ip=self.ip,
        )
        return Response(plain(result), status=200 if result.ok else 207)


def _controllers_cluster(view: ApiView, name: str, perm: str = access.VIEW):
    cluster = view.cluster(name, perm)
    reason = capabilities.unavailable_reason(cluster, "controllers")
    if reason:
        raise ValidationError([reason])
    return cluster
