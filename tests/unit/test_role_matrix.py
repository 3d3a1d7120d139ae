"""Every view × every role → the expected status, generated from one table."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.models import Operation

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "admin", "operator", "requester", "auditor", "viewer", "outsider")
LOGIN = "login"

# view name, method, kwargs kind, then the status per role in ROLES order.
MATRIX = [
    ("home", "get", None, (LOGIN, 302, 302, 302, 302, 302, 302)),
    ("cluster_list", "get", None, (LOGIN, 200, 200, 200, 200, 200, 200)),
    ("fleet_home", "get", None, (LOGIN, 200, 200, 200, 200, 200, 200)),
    ("review_queue", "get", None, (LOGIN, 200, 200, 200, 200, 200, 200)),
    ("cluster_new", "get", None, (LOGIN, 200, 403, 403, 403, 403, 403)),
    ("cluster_overview", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("cluster_settings", "get", "cluster", (LOGIN, 200, 403, 403, 403, 403, 404)),
    ("cluster_test", "post", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("cluster_remove", "post", "cluster", (LOGIN, 302, 403, 403, 403, 403, 404)),
    ("cluster_access", "get", "cluster", (LOGIN, 200, 403, 403, 403, 403, 404)),
    ("capacity", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("capacity_run", "post", "cluster", (LOGIN, 302, 302, 403, 403, 403, 404)),
    ("capacity_snapshot", "post", "cluster", (LOGIN, 302, 302, 403, 403, 403, 404)),
    ("health_check_start", "post", "cluster", (LOGIN, 302, 302, 403, 403, 403, 404)),
    ("quorum_page", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("operation_detail", "get", "operation", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("operation_progress", "get", "operation", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("topic_list", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("topic_create", "get", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("topic_batch_create", "get", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("topic_delete", "post", "cluster", (LOGIN, 302, 302, 403, 403, 403, 404)),
    ("broker_configs_default", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("topic_policy", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("broker_list", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("broker_detail", "get", "broker", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("audit_list", "get", None, (LOGIN, 200, 403, 403, 200, 403, 403)),
    ("audit_chain", "get", None, (LOGIN, 200, 403, 403, 200, 403, 403)),
    ("audit_verify_all", "post", None, (LOGIN, 200, 403, 403, 200, 403, 403)),
    ("audit_export_csv", "get", None, (LOGIN, 200, 403, 403, 200, 403, 403)),
    ("audit_export_jsonl", "get", None, (LOGIN, 200, 403, 403, 200, 403, 403)),
    ("acl_list", "get", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("acl_new", "get", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("reassign_list", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("reassign_new", "get", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("reassign_external_cancel", "post", "cluster", (LOGIN, 302, 302, 403, 403, 403, 404)),
    ("throttle_list", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("throttle_cleanup", "post", "cluster", (LOGIN, 302, 302, 403, 403, 403, 404)),
    ("election_page", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("acl_delete", "get", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("acl_apply", "post", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("acl_effective", "get", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("acl_export", "get", "cluster", (LOGIN, 200, 200, 403, 403, 403, 404)),
    ("request_list", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
    ("request_new", "get", "cluster", (LOGIN, 200, 403, 200, 403, 403, 404)),
    ("request_rules", "get", "cluster", (LOGIN, 200, 403, 403, 403, 403, 404)),
    ("group_list", "get", "cluster", (LOGIN, 200, 200, 200, 200, 200, 404)),
]

CASES = [
    pytest.param(view, method, kind, role, expected, id=f"{view}-{role}")
    for view, method, kind, statuses in MATRIX
    for role, expected in zip(ROLES, statuses, strict=True)
]


@pytest.fixture(autouse=True)
def _private_lake(tmp_path, monkeypatch):
    # The capacity buttons write snapshots; keep them out of the developer's var/lake.
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))


@pytest.mark.parametrize(("view", "method", "kind", "role", "expected"), CASES)
def test_role_matrix(client, personas, kafka_cluster, view, method, kind, role, expected):
    kwargs = {}
    if kind == "cluster":
        kwargs = {"name": kafka_cluster.name}
    elif kind == "broker":
        kwargs = {"name": kafka_cluster.name, "broker": "1"}
    elif kind == "operation":
        op = Operation.objects.create(
            kind="health.check", cluster=kafka_cluster, created_by=personas["operator"]
        )
        kwargs = {"op_id": op.pk}
    if role != "anonymous":
        client.force_login(personas[role])
    url = reverse(view, kwargs=kwargs)
    response = getattr(client, method)(url)
    if expected == LOGIN:
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    else:
        assert response.status_code == expected, response.content[:500]


def test_the_403_page_says_why(client, personas, kafka_cluster):
    client.force_login(personas["viewer"])
    response = client.get(reverse("cluster_settings", kwargs={"name": kafka_cluster.name}))
    assert response.status_code == 403
    assert b"cluster.admin" in response.content
    assert b"Ask one" in response.content
