"""URL routes. Cluster pages live under /c/<name>/; the registry under /clusters/."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from console.views import (
    api_tokens,
    bindings,
    clusters,
    fleet,
    health,
    home,
    notify,
    operations,
    requests,
    search,
    sso,
)

urlpatterns = [
    path("", home.home, name="home"),
    path("healthz", health.healthz, name="healthz"),  # docs/operations-health.md
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("login/", sso.LoginView.as_view(), name="login"),
    path("logout/", sso.LogoutView.as_view(), name="logout"),
    path("sso/oidc/login/", sso.oidc_login, name="sso_oidc_login"),
    path("sso/oidc/callback/", sso.oidc_callback, name="sso_oidc_callback"),
    path("clusters/", clusters.cluster_list, name="cluster_list"),
    path("fleet/", fleet.fleet_home, name="fleet_home"),  # every visible cluster's summary (console/fleet)
    path("search/", search.search_page, name="search"),  # across every visible cluster (console/fleet)
    path("requests/", requests.review_queue, name="review_queue"),
    path("clusters/new/", clusters.cluster_new, name="cluster_new"),
    path("c/<slug:name>/", clusters.cluster_overview, name="cluster_overview"),
    path("c/<slug:name>/settings/", clusters.cluster_settings, name="cluster_settings"),
    path("c/<slug:name>/remove/", clusters.cluster_remove, name="cluster_remove"),
    path("c/<slug:name>/test/", clusters.cluster_test, name="cluster_test"),
    path("c/<slug:name>/access/", bindings.access_page, name="cluster_access"),
    path(
        "c/<slug:name>/access/<int:binding_id>/revoke/", bindings.access_revoke, name="cluster_access_revoke"
    ),
    path("c/<slug:name>/health/", operations.health_check_start, name="health_check_start"),
    path("c/<slug:name>/notifications/", notify.notify_channels, name="notify_channels"),
    path("c/<slug:name>/notifications/log/", notify.notify_deliveries, name="notify_deliveries"),
    path("c/<slug:name>/notifications/<int:channel_id>/", notify.notify_channel, name="notify_channel"),
    path(
        "c/<slug:name>/notifications/<int:channel_id>/delete/",
        notify.notify_channel_delete,
        name="notify_channel_delete",
    ),
    path(
        "c/<slug:name>/notifications/<int:channel_id>/test/",
        notify.notify_channel_test,
        name="notify_channel_test",
    ),
    # Each area keeps its own routes module under the cluster prefix.
    path("c/<slug:name>/topics/", include("console.urls_topics")),
    path("c/<slug:name>/brokers/", include("console.urls_brokers")),
    path("c/<slug:name>/groups/", include("console.urls_groups")),
    path("c/<slug:name>/acls/", include("console.urls_acls")),
    path("c/<slug:name>/quotas/", include("console.urls_quotas")),
    path("c/<slug:name>/transactions/", include("console.urls_transactions")),
    path("c/<slug:name>/share-groups/", include("console.urls_share_groups")),
    path("c/<slug:name>/scram-users/", include("console.urls_scram")),
    path("c/<slug:name>/requests/", include("console.urls_requests")),
    path("c/<slug:name>/reassignments/", include("console.urls_reassignments")),
    path("c/<slug:name>/capacity/", include("console.urls_capacity")),
    path("c/<slug:name>/quorum/", include("console.urls_quorum")),
    path("c/<slug:name>/drift/", include("console.urls_drift")),
    path("c/<slug:name>/alerts/", include("console.urls_alerts")),
    path("c/<slug:name>/windows/", include("console.urls_windows")),
    path("c/<slug:name>/estate/", include("console.urls_estate")),
    path("c/<slug:name>/", include("console.urls_purge")),  # topics/<topic>/purge/
    path("c/<slug:name>/", include("console.urls_logdirs")),  # brokers/<id>/log-dirs/, log-dir-moves/
    path("c/<slug:name>/", include("console.urls_messages")),  # topics/<topic>/messages/, data-access/
    path("audit/", include("console.urls_audit")),
    path("operations/<int:op_id>/", operations.operation_detail, name="operation_detail"),
    path("api/", include("console.api.urls")),  # the REST API, namespace "api" (docs/api.md)
    path("account/tokens/", api_tokens.token_page, name="account_tokens"),
    path("account/tokens/<int:token_id>/revoke/", api_tokens.token_revoke, name="account_token_revoke"),
    path("operations/<int:op_id>/progress/", operations.operation_progress, name="operation_progress"),
]

# Django's error answers: the API's JSON under /api/ (console/api/errors.py), the pages elsewhere.
handler400 = "console.api.errors.bad_request"
handler403 = "console.api.errors.permission_denied"
handler404 = "console.api.errors.page_not_found"
handler500 = "console.api.errors.server_error"
