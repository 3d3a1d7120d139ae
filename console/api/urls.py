"""Routes of the REST API (namespace ``api``): /api/v1/…, the OpenAPI schema and its docs page.

Topic routes keep the pages' convention: ``-/…`` cannot clash with a topic's own sub-pages.
tests/unit/test_api_matrix.py classifies every route here.
"""

from __future__ import annotations

from csp.decorators import csp_update
from django.contrib.auth.decorators import login_required
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from console.api import (
    acls,
    alerts,
    audit,
    bindings,
    brokers,
    capacity,
    changes,
    clusters,
    configs,
    elections,
    estate,
    fleet,
    groups,
    logdirs,
    messages,
    notify,
    operations,
    purge,
    quorum,
    quotas,
    reassignment,
    requests,
    scram,
    search,
    share_groups,
    topics,
    transactions,
    windows,
)

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
    path("v1/clusters/", clusters.ClusterList.as_view(), name="clusters"),
    path("v1/fleet/", fleet.Fleet.as_view(), name="fleet"),
    path(C, clusters.ClusterDetail.as_view(), name="cluster"),
    path(C + "settings/", clusters.ClusterSettings.as_view(), name="cluster-settings"),
    path(C + "remove/", clusters.ClusterRemove.as_view(), name="cluster-remove"),
    path(C + "test/", clusters.ClusterTest.as_view(), name="cluster-test"),
    path(C + "health/", clusters.HealthCheck.as_view(), name="cluster-health"),
    path(C + "access/", bindings.Bindings.as_view(), name="access"),
    path(C + "access/<int:binding_id>/revoke/", bindings.BindingRevoke.as_view(), name="access-revoke"),
    path(C + "data-access/grants/", messages.DataGrants.as_view(), name="data-grants"),
    path(
        C + "data-access/grants/<int:grant_id>/revoke/",
        messages.DataGrantRevoke.as_view(),
        name="data-grant-revoke",
    ),
    path(C + "data-access/rules/", messages.MaskingRules.as_view(), name="masking-rules"),
    path(
        C + "data-access/rules/<int:rule_id>/remove/",
        messages.MaskingRuleRemove.as_view(),
        name="masking-rule-remove",
    ),
    path(C + "topics/", topics.TopicList.as_view(), name="topics"),
    path(C + "topics/-/policy/", topics.TopicPolicy.as_view(), name="topics-policy"),
    path(C + "topics/-/batch/", topics.TopicBatch.as_view(), name="topics-batch"),
    path(C + "topics/-/delete/", topics.TopicDelete.as_view(), name="topics-delete"),
    path(C + "topics/<str:topic>/", topics.TopicDetail.as_view(), name="topic"),
    path(C + "topics/<str:topic>/partitions/", topics.TopicPartitions.as_view(), name="topic-partitions"),
    path(C + "topics/<str:topic>/consumers/", groups.TopicConsumers.as_view(), name="topic-consumers"),
    path(C + "topics/<str:topic>/configs/", configs.TopicConfigs.as_view(), name="topic-configs"),
    path(C + "topics/<str:topic>/messages/", messages.TopicMessages.as_view(), name="topic-messages"),
    path(C + "topics/<str:topic>/purge/", purge.TopicPurge.as_view(), name="topic-purge"),
    path(C + "brokers/", brokers.BrokerList.as_view(), name="brokers"),
    path(C + "brokers/<str:broker>/", brokers.BrokerDetail.as_view(), name="broker"),
    path(C + "brokers/<str:broker>/configs/", configs.BrokerConfigs.as_view(), name="broker-configs"),
    path(C + "brokers/<int:broker>/log-dirs/", logdirs.BrokerLogDirs.as_view(), name="broker-log-dirs"),
    path(C + "log-dir-moves/", logdirs.LogDirMoves.as_view(), name="log-dir-moves"),
    path(C + "log-dir-moves/<int:op_id>/", logdirs.LogDirMove.as_view(), name="log-dir-move"),
    path(C + "acls/", acls.AclList.as_view(), name="acls"),
    path(C + "acls/delete/", acls.AclDelete.as_view(), name="acls-delete"),
    path(C + "acls/effective/", acls.AclEffective.as_view(), name="acls-effective"),
    path(C + "acls/export/", acls.AclExport.as_view(), name="acls-export"),
    path(C + "quotas/", quotas.QuotaList.as_view(), name="quotas"),
    path(C + "quotas/effective/", quotas.QuotaEffective.as_view(), name="quotas-effective"),
    path(C + "scram-users/", scram.ScramUsers.as_view(), name="scram-users"),
    path(C + "scram-users/delete/", scram.ScramUserDelete.as_view(), name="scram-users-delete"),
    path(C + "transactions/", transactions.TxnList.as_view(), name="transactions"),
    path(C + "transactions/hanging/", transactions.TxnHanging.as_view(), name="transactions-hanging"),
    path(C + "transactions/producers/", transactions.TxnProducers.as_view(), name="transactions-producers"),
    path(C + "transactions/abort/", transactions.TxnAbort.as_view(), name="transactions-abort"),
    path(
        C + "transactions/id/<path:transactional_id>/", transactions.TxnDetail.as_view(), name="transaction"
    ),
    path(C + "share-groups/", share_groups.ShareGroupList.as_view(), name="share-groups"),
    path(C + "share-groups/reset/", share_groups.ShareGroupReset.as_view(), name="share-groups-reset"),
    path(C + "share-groups/delete/", share_groups.ShareGroupDelete.as_view(), name="share-groups-delete"),
    path(C + "share-groups/<str:group_id>/", share_groups.ShareGroupDetail.as_view(), name="share-group"),
    path(C + "groups/", groups.GroupList.as_view(), name="groups"),
    path(C + "groups/<str:group>/", groups.GroupDetail.as_view(), name="group"),
    path(C + "groups/<str:group>/reset/", groups.GroupReset.as_view(), name="group-reset"),
    path(C + "groups/<str:group>/delete/", groups.GroupDelete.as_view(), name="group-delete"),
    path(
        C + "groups/<str:group>/offsets-delete/",
        groups.GroupOffsetsDelete.as_view(),
        name="group-offsets-delete",
    ),
    path(C + "reassignments/", reassignment.ReassignmentList.as_view(), name="reassignments"),
    path(C + "reassignments/export/", reassignment.PlanExport.as_view(), name="reassignments-export"),
    path(C + "reassignments/external/", reassignment.ExternalMoves.as_view(), name="reassignments-external"),
    path(C + "reassignments/<int:rid>/", reassignment.ReassignmentDetail.as_view(), name="reassignment"),
    path(
        C + "reassignments/<int:rid>/throttle/",
        reassignment.ReassignmentThrottle.as_view(),
        name="reassignment-throttle",
    ),
    path(
        C + "reassignments/<int:rid>/cancel/",
        reassignment.ReassignmentCancel.as_view(),
        name="reassignment-cancel",
    ),
    path(
        C + "reassignments/<int:rid>/pause/",
        reassignment.ReassignmentPause.as_view(),
        name="reassignment-pause",
    ),
    path(
        C + "reassignments/<int:rid>/resume/",
        reassignment.ReassignmentResume.as_view(),
        name="reassignment-resume",
    ),
    path(C + "throttles/", reassignment.Throttles.as_view(), name="throttles"),
    path(C + "elections/", elections.Elections.as_view(), name="elections"),
    path(C + "requests/", requests.RequestList.as_view(), name="requests"),
    path(C + "requests/rules/", requests.RequestRules.as_view(), name="request-rules"),
    path(C + "requests/change-control/", changes.ChangePolicy.as_view(), name="change-policy"),
    path(C + "notifications/", notify.Channels.as_view(), name="notifications"),
    path(C + "notifications/log/", notify.Deliveries.as_view(), name="notifications-log"),
    path(C + "notifications/<int:channel_id>/", notify.Channel.as_view(), name="notification"),
    path(
        C + "notifications/<int:channel_id>/delete/",
        notify.ChannelDelete.as_view(),
        name="notification-delete",
    ),
    path(C + "notifications/<int:channel_id>/test/", notify.ChannelTest.as_view(), name="notification-test"),
    path(C + "requests/<int:request_id>/", requests.RequestDetail.as_view(), name="request"),
    path(C + "requests/<int:request_id>/approve/", requests.RequestApprove.as_view(), name="request-approve"),
    path(C + "requests/<int:request_id>/reject/", requests.RequestReject.as_view(), name="request-reject"),
    path(C + "requests/<int:request_id>/cancel/", requests.RequestCancel.as_view(), name="request-cancel"),
    path(
        C + "requests/<int:request_id>/schedule/", windows.RequestSchedule.as_view(), name="request-schedule"
    ),
    path(
        C + "requests/<int:request_id>/unschedule/",
        windows.RequestUnschedule.as_view(),
        name="request-unschedule",
    ),
    path(C + "windows/", windows.Windows.as_view(), name="windows"),
    path(C + "windows/calendar/", windows.Calendar.as_view(), name="windows-calendar"),
    path(C + "windows/settings/", windows.WindowSettings.as_view(), name="windows-settings"),
    path(C + "windows/<int:window_id>/end/", windows.WindowEnd.as_view(), name="window-end"),
    path(C + "estate/", estate.EstateExport.as_view(), name="estate"),
    path(C + "estate/plan/", estate.EstatePlan.as_view(), name="estate-plan"),
    path(C + "estate/apply/", estate.EstateApply.as_view(), name="estate-apply"),
    path(C + "capacity/", capacity.Capacity.as_view(), name="capacity"),
    path(C + "capacity/run/", capacity.CapacityRun.as_view(), name="capacity-run"),
    path(C + "capacity/snapshot/", capacity.CapacitySnapshot.as_view(), name="capacity-snapshot"),
    path(C + "quorum/", quorum.Quorum.as_view(), name="quorum"),
    path(C + "quorum/features/", quorum.Features.as_view(), name="quorum-features"),
    path(C + "quorum/voters/add/", quorum.VoterAdd.as_view(), name="quorum-voter-add"),
    path(C + "quorum/voters/remove/", quorum.VoterRemove.as_view(), name="quorum-voter-remove"),
    path(C + "brokers/<int:broker>/unregister/", quorum.BrokerUnregister.as_view(), name="broker-unregister"),
    path(C + "alerts/", alerts.Alerts.as_view(), name="alerts"),
    path(
        C + "alerts/<int:alert_id>/acknowledge/", alerts.AlertAcknowledge.as_view(), name="alert-acknowledge"
    ),
    path(C + "alert-silences/", alerts.Silences.as_view(), name="alert-silences"),
    path(C + "alert-silences/<int:silence_id>/", alerts.Silence.as_view(), name="alert-silence"),
    path(C + "alert-rules/", alerts.Rules.as_view(), name="alert-rules"),
    path(C + "alert-rules/<slug:rule>/", alerts.Rule.as_view(), name="alert-rule"),
    path(C + "quorum/controllers/<int:node_id>/", quorum.Controller.as_view(), name="controller"),
    path("v1/audit/events/", audit.AuditEvents.as_view(), name="audit-events"),
    path("v1/audit/events/<int:event_id>/", audit.AuditEvent.as_view(), name="audit-event"),
    path("v1/audit/export/", audit.AuditExport.as_view(), name="audit-export"),
    path("v1/audit/chain/", audit.AuditChain.as_view(), name="audit-chain"),
    path("v1/operations/<int:op_id>/", operations.OperationDetail.as_view(), name="operation"),
    path("v1/search/", search.Search.as_view(), name="search"),  # across every visible cluster
]
