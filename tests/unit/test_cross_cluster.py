"""Object-level access: cluster B's objects (requests, reassignments, role bindings, operations, audit
events) are never shown or changed through cluster A's URLs, nor through B's own URLs by someone
without a role on B. Cluster B runs on a second sandbox; every refused request must change nothing.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from console.clusters import worker as health
from console.clusters.actions import gateway_for
from console.integrity import chain
from console.models import AuditEvent, Cluster, Role, RoleBinding
from console.requests import actions as requests
from sandbox.testing import running_sandbox
from tests.unit.matrix_world import BOUND, World, cluster_admin, kafka_restored

pytestmark = pytest.mark.django_db

B = "cluster-b"
MARKER = "team-b."  # in every name B's requests carry; never on a page reached through A
NOT_SUPERUSERS = ("clusteradmin", "operator", "requester", "auditor", "viewer", "outsider")


@pytest.fixture(scope="module")
def other_sandbox():
    with running_sandbox(brokers=3, controllers=1, speed=0, seed="cluster-b") as sb:  # its own cluster id
        yield sb
        gateway_for(Cluster(name=B, bootstrap_servers=sb.bootstrap_servers, request_timeout_s=5)).close()


@pytest.fixture
def world(personas, kafka_cluster, frozen, other_sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    people = {**personas, "clusteradmin": cluster_admin(kafka_cluster)}
    users = get_user_model()
    people["b-owner"] = users.objects.create_user(username="b-owner", password="pw")
    people["b-requester"] = users.objects.create_user(username="b-requester", password="pw")
    people["b-viewer"] = users.objects.create_user(username="b-viewer", password="pw")
    with kafka_restored(frozen):
        yield World(
            sandbox=frozen, cluster=kafka_cluster, people=people, lake=tmp_path / "lake", other=other_sandbox
        )


@pytest.fixture
def b(world):
    """Cluster B and its objects, made by B's own people (none of the personas holds a role on B)."""
    cluster = Cluster.objects.create(
        name=B, bootstrap_servers=world.other.bootstrap_servers, request_timeout_s=5
    )
    RoleBinding.objects.create(cluster=cluster, user=world.people["b-owner"], role=Role.OPERATOR)
    RoleBinding.objects.create(
        cluster=cluster, user=world.people["b-requester"], role=Role.REQUESTER, namespaces=[MARKER]
    )
    binding = RoleBinding.objects.create(cluster=cluster, user=world.people["b-viewer"], role=Role.VIEWER)
    pending = world.request(cluster, who="b-requester", prefix=MARKER)
    executing = world.request(cluster, who="b-requester", prefix=MARKER)
    requests.approve_request(actor=world.people["b-owner"], request=executing, comment="ok")
    executing.refresh_from_db()
    topic = world.topic(sandbox=world.other, name=f"{MARKER}moving-{cluster.pk}-{pending.pk}")
    return {
        "cluster": cluster,
        "request_id": pending.pk,
        "rid": world.reassignment(cluster, topic=topic, who="b-owner").pk,
        "binding_id": binding.pk,
        "health_op": health.start_health_check(actor=world.people["b-owner"], cluster=cluster).pk,
        "execute_op": executing.operation_id,
        "event": AuditEvent.objects.filter(cluster_id=cluster.pk).order_by("pk").first().pk,
    }


# (method, route, the object's URL argument, POST body)
OBJECT_ROUTES = (
    ("get", "request_detail", "request_id", None),
    ("get", "request_status", "request_id", None),
    ("post", "request_approve", "request_id", {"comment": "fine"}),
    ("post", "request_reject", "request_id", {"comment": "no"}),
    ("post", "request_cancel", "request_id", {}),
    ("get", "reassign_detail", "rid", None),
    ("get", "reassign_progress", "rid", None),
    ("get", "reassign_rollback", "rid", None),
    ("post", "reassign_throttle", "rid", {"throttle_mb": "2"}),
    ("post", "reassign_cancel", "rid", {}),
    ("post", "cluster_access_revoke", "binding_id", {}),
)


def _probe(client, world, method, url, body) -> tuple[int, str, bool]:
    before = world.state()
    response = getattr(client, method)(url, body or {})
    return response.status_code, response.content.decode(errors="replace"), world.state() != before


def _through(client, world, b, cluster_name: str, allowed=frozenset()) -> list:
    """Each object route with B's ids under cluster_name's URL: refused, unchanged, nothing of B shown."""
    bad = []
    for method, route, arg, body in OBJECT_ROUTES:
        url = reverse(route, kwargs={"name": cluster_name, arg: b[arg]})
        status, content, changed = _probe(client, world, method, url, body)
        if route in allowed:
            continue
        if status not in (403, 404) or changed or MARKER in content:
            bad.append((method.upper(), url, status, "changed" if changed else "", MARKER in content))
    return bad


@pytest.mark.parametrize("on_b", [None, Role.VIEWER], ids=["no-role-on-b", "viewer-on-b"])
@pytest.mark.parametrize("persona", BOUND)
def test_b_objects_through_a_urls_are_not_found(client, world, b, persona, on_b):
    if on_b:
        RoleBinding.objects.create(cluster=b["cluster"], user=world.people[persona], role=on_b)
    client.force_login(world.people[persona])
    assert _through(client, world, b, world.cluster.name) == []


@pytest.mark.parametrize("persona", NOT_SUPERUSERS)
def test_b_objects_through_b_urls_need_a_role_on_b(client, world, b, persona):
    client.force_login(world.people[persona])
    assert _through(client, world, b, B) == []
    for route in ("cluster_overview", "request_list", "reassign_list"):
        assert client.get(reverse(route, kwargs={"name": B})).status_code == 404


@pytest.mark.parametrize("persona", ("operator", "auditor", "clusteradmin"))
def test_a_viewer_of_b_changes_nothing_of_b(client, world, b, persona):
    """A's operator/auditor/admin, viewer on B: B's reassignments are theirs to see, nothing to change."""
    RoleBinding.objects.create(cluster=b["cluster"], user=world.people[persona], role=Role.VIEWER)
    client.force_login(world.people[persona])
    assert _through(client, world, b, B, allowed={"reassign_detail", "reassign_progress"}) == []
    rid = {"name": B, "rid": b["rid"]}
    assert client.get(reverse("reassign_detail", kwargs=rid)).status_code == 200


@pytest.mark.parametrize("persona", NOT_SUPERUSERS)
def test_b_operations_are_not_found_without_a_role_on_b(client, world, b, persona):
    client.force_login(world.people[persona])
    for op in (b["health_op"], b["execute_op"]):
        for route in ("operation_detail", "operation_progress"):
            status, content, changed = _probe(
                client, world, "get", reverse(route, kwargs={"op_id": op}), None
            )
            assert (status, changed, MARKER in content) == (404, False, False), (route, op)


def test_b_operations_open_for_superusers(client, world, b):
    client.force_login(world.people["admin"])
    for op in (b["health_op"], b["execute_op"]):
        assert client.get(reverse("operation_detail", kwargs={"op_id": op})).status_code == 200


@pytest.mark.parametrize("persona", ("operator", "requester", "viewer", "outsider"))
def test_a_cluster_less_operation_is_not_found_by_who_cannot_view_the_audit(client, world, persona):
    op = chain.start_verify(actor=world.people["admin"])
    client.force_login(world.people[persona])
    for route in ("operation_detail", "operation_progress"):
        assert client.get(reverse(route, kwargs={"op_id": op.pk})).status_code == 404


@pytest.mark.parametrize("persona", ("auditor", "clusteradmin"))
def test_audit_viewers_see_the_cluster_less_verification(client, world, persona):
    op = chain.start_verify(actor=world.people["admin"])
    client.force_login(world.people[persona])
    for route in ("operation_detail", "operation_progress"):
        assert client.get(reverse(route, kwargs={"op_id": op.pk})).status_code == 200, route


@pytest.mark.parametrize("persona", NOT_SUPERUSERS)
def test_b_audit_events_are_not_shown_to_a_s_people(client, world, b, persona):
    client.force_login(world.people[persona])
    reviewer = persona in ("clusteradmin", "auditor")
    detail = client.get(reverse("audit_detail", kwargs={"event_id": b["event"]}))
    assert detail.status_code == (404 if reviewer else 403)
    chain_op = client.get(reverse("audit_chain"), {"op": b["health_op"]})
    assert chain_op.status_code == (404 if reviewer else 403)
    if reviewer:
        for route in ("audit_list", "audit_export_csv", "audit_export_jsonl"):
            response = client.get(reverse(route))
            body = b"".join(response.streaming_content) if response.streaming else response.content
            shown = MARKER.encode() in body or B.encode() in body
            assert (response.status_code, shown) == (200, False), route


@pytest.mark.parametrize("after", [None, Role.VIEWER], ids=["role-revoked", "now-viewer"])
def test_b_notifications_leave_a_s_pages_with_the_role_on_b(client, world, b, after):
    """An approver on B is told of B's requests; without the approver role on B, A's pages stop showing them."""
    operator = world.people["operator"]
    binding = RoleBinding.objects.create(cluster=b["cluster"], user=operator, role=Role.OPERATOR)
    req = world.request(b["cluster"], who="b-requester", prefix=MARKER)
    client.force_login(operator)
    page = reverse("request_list", kwargs={"name": world.cluster.name})
    assert req.resource in client.get(page).content.decode()  # told while an approver on B
    if after is None:
        binding.delete()
    else:
        RoleBinding.objects.filter(pk=binding.pk).update(role=after)
    assert MARKER not in client.get(page).content.decode()


@pytest.mark.parametrize("persona", ("operator", "auditor", "viewer", "requester"))
def test_b_request_execution_is_not_found_by_a_viewer_of_b(client, world, b, persona):
    """A viewer of B sees B's operations, but not the execution of a request that is not theirs to see."""
    RoleBinding.objects.create(cluster=b["cluster"], user=world.people[persona], role=Role.VIEWER)
    client.force_login(world.people[persona])
    for route in ("operation_detail", "operation_progress"):
        status, content, _ = _probe(
            client, world, "get", reverse(route, kwargs={"op_id": b["execute_op"]}), None
        )
        assert (status, MARKER in content) == (404, False), route


@pytest.mark.parametrize(
    ("persona", "expected"),
    [("requester", 200), ("operator", 200), ("auditor", 200), ("viewer", 404), ("other-requester", 404)],
)
def test_a_request_execution_is_shown_to_who_may_see_the_request(client, world, persona, expected):
    req = world.request()
    requests.approve_request(actor=world.people["operator"], request=req, comment="ok")
    req.refresh_from_db()
    if persona == "other-requester":
        user = get_user_model().objects.create_user(username="team-z", password="pw")
        RoleBinding.objects.create(
            cluster=world.cluster, user=user, role=Role.REQUESTER, namespaces=["team-z."]
        )
    else:
        user = world.people[persona]
    client.force_login(user)
    for route in ("operation_detail", "operation_progress"):
        assert client.get(reverse(route, kwargs={"op_id": req.operation_id})).status_code == expected, route


def _settings_body(world, servers: str) -> dict:
    return {
        "name": world.cluster.name,
        "bootstrap_servers": servers,
        "security_protocol": "PLAINTEXT",
        "request_timeout_s": "5",
        "action": "save",
    }


def test_a_cluster_admin_cannot_repoint_a_at_b_s_brokers(client, world, b):
    topic = world.topic(sandbox=world.other, name="team-b.precious")
    saved = world.cluster.bootstrap_servers
    client.force_login(world.people["clusteradmin"])
    url = reverse("cluster_settings", kwargs={"name": world.cluster.name})
    response = client.post(url, _settings_body(world, world.other.bootstrap_servers))
    assert response.status_code == 403 and b"Only a superuser" in response.content
    assert Cluster.objects.get(pk=world.cluster.pk).bootstrap_servers == saved
    client.post(
        reverse("topic_delete", kwargs={"name": world.cluster.name}),
        {"names": [topic], "confirmation": topic},
    )
    assert topic in world.other.state.topics


def test_a_cluster_admin_may_move_addresses_within_the_same_cluster(client, world):
    first = world.cluster.bootstrap_servers.split(",")[0]
    client.force_login(world.people["clusteradmin"])
    url = reverse("cluster_settings", kwargs={"name": world.cluster.name})
    assert client.post(url, _settings_body(world, first)).status_code == 302
    assert Cluster.objects.get(pk=world.cluster.pk).bootstrap_servers == first
