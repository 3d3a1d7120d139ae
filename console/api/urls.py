"""Routes of the REST API (namespace ``api``): /api/v1/…, the OpenAPI schema and its docs page.

Topic routes keep the pages' convention: ``-/…`` cannot clash with a topic's own sub-pages.
tests/unit/test_api_matrix.py classifies every route here.
"""

from __future__ import annotations

from csp.decorators import csp_update
from django.contrib.auth.decorators import login_required
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from console.api import views_acls_groups as ag
from console.api import views_admin as adm
from console.api import views_configs as cf
from console.api import views_misc as misc
from console.api import views_notify as nt
from console.api import views_ops as ops
from console.api import views_topics as t

app_name = "api"

# The docs page is for people: a browser without a session is sent to the login page. Swagger UI
# injects a <style> element, so this page alone also allows inline style elements; its scripts,
# like every page's, come only from this server (the split view: no inline script).
docs_page = csp_update({"style-src-elem": ["'self'", "'unsafe-inline'"]})(
    login_required(SpectacularSwaggerSplitView.as_view(url_name="api:schema"))
)

C = "v1/clusters/<slug:name>/"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", docs_page, name="docs"),
    path("v1/clusters/", t.ClusterList.as_view(), name="clusters"),
    path(C, t.ClusterDetail.as_view(), name="cluster"),
    path(C + "settings/", adm.ClusterSettings.as_view(), name="cluster-settings"),
    path(C + "remove/", adm.ClusterRemove.as_view(), name="cluster-remove"),
    path(C + "test/", adm.ClusterTest.as_view(), name="cluster-test"),
    path(C + "health/", adm.HealthCheck.as_view(), name="cluster-health"),
    path(C + "access/", adm.Bindings.as_view(), name="access"),
    path(C + "access/<int:binding_id>/revoke/", adm.BindingRevoke.as_view(), name="access-revoke"),
    path(C + "topics/", t.TopicList.as_view(), name="topics"),
    path(C + "topics/-/policy/", adm.TopicPolicy.as_view(), name="topics-policy"),
    path(C + "topics/-/batch/", t.TopicBatch.as_view(), name="topics-batch"),
    path(C + "topics/-/delete/", t.TopicDelete.as_view(), name="topics-delete"),
    path(C + "topics/<str:topic>/", t.TopicDetail.as_view(), name="topic"),
    path(C + "topics/<str:topic>/partitions/", t.TopicPartitions.as_view(), name="topic-partitions"),
    path(C + "topics/<str:topic>/consumers/", adm.TopicConsumers.as_view(), name="topic-consumers"),
    path(C + "topics/<str:topic>/configs/", cf.TopicConfigs.as_view(), name="topic-configs"),
    path(C + "brokers/", cf.BrokerList.as_view(), name="brokers"),
    path(C + "brokers/<str:broker>/", adm.BrokerDetail.as_view(), name="broker"),
    path(C + "brokers/<str:broker>/configs/", cf.BrokerConfigs.as_view(), name="broker-configs"),
    path(C + "acls/", ag.AclList.as_view(), name="acls"),
    path(C + "acls/delete/", ag.AclDelete.as_view(), name="acls-delete"),
    path(C + "acls/effective/", ag.AclEffective.as_view(), name="acls-effective"),
    path(C + "groups/", ag.GroupList.as_view(), name="groups"),
    path(C + "groups/<str:group>/", ag.GroupDetail.as_view(), name="group"),
    path(C + "groups/<str:group>/reset/", ag.GroupReset.as_view(), name="group-reset"),
    path(C + "groups/<str:group>/delete/", ag.GroupDelete.as_view(), name="group-delete"),
    path(
        C + "groups/<str:group>/offsets-delete/", ag.GroupOffsetsDelete.as_view(), name="group-offsets-delete"
    ),
    path(C + "reassignments/", ops.ReassignmentList.as_view(), name="reassignments"),
    path(C + "reassignments/export/", adm.PlanExport.as_view(), name="reassignments-export"),
    path(C + "reassignments/external/", ops.ExternalMoves.as_view(), name="reassignments-external"),
    path(C + "reassignments/<int:rid>/", ops.ReassignmentDetail.as_view(), name="reassignment"),
    path(
        C + "reassignments/<int:rid>/throttle/",
        ops.ReassignmentThrottle.as_view(),
        name="reassignment-throttle",
    ),
    path(C + "reassignments/<int:rid>/cancel/", ops.ReassignmentCancel.as_view(), name="reassignment-cancel"),
    path(C + "throttles/", ops.Throttles.as_view(), name="throttles"),
    path(C + "elections/", ops.Elections.as_view(), name="elections"),
    path(C + "requests/", misc.RequestList.as_view(), name="requests"),
    path(C + "requests/rules/", adm.RequestRules.as_view(), name="request-rules"),
    path(C + "requests/change-control/", nt.ChangePolicy.as_view(), name="change-policy"),
    path(C + "notifications/", nt.Channels.as_view(), name="notifications"),
    path(C + "notifications/log/", nt.Deliveries.as_view(), name="notifications-log"),
    path(C + "notifications/<int:channel_id>/", nt.Channel.as_view(), name="notification"),
    path(
        C + "notifications/<int:channel_id>/delete/", nt.ChannelDelete.as_view(), name="notification-delete"
    ),
    path(C + "notifications/<int:channel_id>/test/", nt.ChannelTest.as_view(), name="notification-test"),
    path(C + "requests/<int:request_id>/", misc.RequestDetail.as_view(), name="request"),
    path(C + "requests/<int:request_id>/approve/", misc.RequestApprove.as_view(), name="request-approve"),
    path(C + "requests/<int:request_id>/reject/", misc.RequestReject.as_view(), name="request-reject"),
    path(C + "requests/<int:request_id>/cancel/", misc.RequestCancel.as_view(), name="request-cancel"),
    path(C + "capacity/", misc.Capacity.as_view(), name="capacity"),
    path(C + "capacity/run/", misc.CapacityRun.as_view(), name="capacity-run"),
    path(C + "capacity/snapshot/", misc.CapacitySnapshot.as_view(), name="capacity-snapshot"),
    path(C + "quorum/", misc.Quorum.as_view(), name="quorum"),
    path(C + "quorum/controllers/<int:node_id>/", adm.Controller.as_view(), name="controller"),
    path("v1/audit/events/", misc.AuditEvents.as_view(), name="audit-events"),
    path("v1/audit/events/<int:event_id>/", misc.AuditEvent.as_view(), name="audit-event"),
    path("v1/audit/export/", misc.AuditExport.as_view(), name="audit-export"),
    path("v1/audit/chain/", misc.AuditChain.as_view(), name="audit-chain"),
    path("v1/operations/<int:op_id>/", ops.OperationDetail.as_view(), name="operation"),
]
