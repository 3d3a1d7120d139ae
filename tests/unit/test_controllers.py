"""A controller's configs and log levels (KIP-919): service and page, against the sandbox's controllers."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from console.clusters.actions import gateway_for
from console.kafka import ConfigResource, KafkaOperationError
from console.models import AuditEvent
from console.quorum import controllers
from tests.unit.quorum_helpers import register_controllers

pytestmark = pytest.mark.django_db

LOGGER = "org.apache.kafka.controller"


def _level(cluster, node_id: int, logger: str) -> str | None:
    res = ConfigResource("BROKER_LOGGER", str(node_id))
    got = gateway_for(cluster).describe_configs([res])[res]
    assert not isinstance(got, KafkaOperationError), got
    return got[logger].value if logger in got else None


@pytest.fixture
def controller_cluster(sandbox, personas):
    return register_controllers(sandbox, personas)


@pytest.fixture
def node(sandbox):
    """The active controller (see the inactive-controller test for why not any controller)."""
    return sandbox.state.active_controller


@pytest.fixture
def reset_level(controller_cluster, node, personas):
    yield
    set_levels(personas, controller_cluster, node, {LOGGER: "INFO"}, who="admin")


def set_levels(personas, cluster, node_id: int, levels: dict, *, who: str = "operator", **kw):
    """``who`` changes the controller's log levels (``kw``: dry_run, source_ip)."""
    return controllers.change_log_levels(
        actor=personas[who], cluster=cluster, node_id=node_id, levels=levels, **kw
    )


def test_it_lists_the_controllers_and_the_active_one(sandbox, controller_cluster, personas):
    info = controllers.list_controllers(actor=personas["viewer"], cluster=controller_cluster)
    assert {c.id for c in info.brokers} == set(sandbox.state.controllers)
    assert info.controller_id == sandbox.state.active_controller


def test_it_describes_a_controllers_configs_and_log_levels(controller_cluster, node, personas):
    data = controllers.describe_controller(actor=personas["viewer"], cluster=controller_cluster, node_id=node)
    assert data.configs_error is None and data.loggers_error is None
    rows = {r.name: r for r in data.configs.rows}
    assert rows["node.id"].value == str(node)
    assert LOGGER in {lg.name for lg in data.loggers}


def test_it_dry_runs_a_log_level_change_without_changing_it(controller_cluster, node, personas):
    before = _level(controller_cluster, node, LOGGER)
    result = set_levels(personas, controller_cluster, node, {LOGGER: "debug"}, dry_run=True)
    assert result.ok and result.dry_run and result.error is None
    assert [(d.logger, d.old, d.new, d.op) for d in result.diffs] == [(LOGGER, before, "DEBUG", "SET")]
    assert _level(controller_cluster, node, LOGGER) == before
    event = AuditEvent.objects.get(pk=result.audit_id)
    assert event.action == "controller.log_level.validate"
    assert event.actor_name == "operator" and event.cluster_name == controller_cluster.name
    assert event.targets == [f"controller:{node}"]
    assert event.params["changes"] == {LOGGER: {"op": "SET", "level": "DEBUG"}}
    assert event.outcome == "success" and event.after is None


def test_it_changes_one_controllers_log_level_and_audits_it(
    sandbox,
    controller_cluster,
    node,
    personas,
    reset_level,
):
    other = next(c for c in sandbox.state.controllers if c != node)
    other_before = _level(controller_cluster, other, LOGGER)
    result = set_levels(personas, controller_cluster, node, {LOGGER: "TRACE"}, source_ip="10.0.0.9")
    assert result.ok and not result.dry_run
    assert _level(controller_cluster, node, LOGGER) == "TRACE"
    assert _level(controller_cluster, other, LOGGER) == other_before  # per controller, not cluster-wide
    event = AuditEvent.objects.get(pk=result.audit_id)
    assert event.action == "controller.log_level.change"
    assert event.before == {LOGGER: result.diffs[0].old}
    assert event.after == {LOGGER: "TRACE"}
    assert event.outcomes == {f"controller:{node}": {"ok": True, "status": "applied"}}
    assert event.source_ip == "10.0.0.9"


def test_it_refuses_a_level_kafka_does_not_know_before_calling_kafka(controller_cluster, node, personas):
    with pytest.raises(controllers.LogLevelPlanError) as exc:
        set_levels(personas, controller_cluster, node, {LOGGER: "LOUD"})
    assert "LOUD" in str(exc.value)
    assert not AuditEvent.objects.filter(action__startswith="controller.").exclude(outcome="refused").exists()


def test_it_refuses_a_viewer(controller_cluster, node, personas):
    with pytest.raises(PermissionDenied):
        set_levels(personas, controller_cluster, node, {LOGGER: "DEBUG"}, who="viewer")


def test_it_needs_a_controller_connection(kafka_cluster, personas):
    with pytest.raises(controllers.ControllerModeRequired) as exc:
        controllers.describe_controller(actor=personas["viewer"], cluster=kafka_cluster, node_id=1)
    assert "bootstrap controllers" in exc.value.reason


def test_it_names_an_unknown_controller(controller_cluster, personas):
    data = controllers.describe_controller(actor=personas["viewer"], cluster=controller_cluster, node_id=4242)
    assert data.loggers_error is not None and data.loggers_error.name == "UNKNOWN_CONTROLLER_ID"
    with pytest.raises(KafkaOperationError) as exc:
        set_levels(personas, controller_cluster, 4242, {LOGGER: "DEBUG"})
    assert exc.value.name == "UNKNOWN_CONTROLLER_ID"


def test_it_plans_a_reset_and_refuses_resetting_root():
    diffs = controllers.plan_levels({"kafka.raft": "DEBUG"}, {"kafka.raft": "reset"})
    assert [(d.op, d.old) for d in diffs] == [("DELETE", "DEBUG")]
    with pytest.raises(controllers.LogLevelPlanError):
        controllers.plan_levels({}, {"root": "RESET"})


# -- the page --------------------------------------------------------------------------------------


def _url(cluster, node):
    return reverse("controller_detail", kwargs={"name": cluster.name, "node_id": node})


def test_it_shows_the_controller_page(client, controller_cluster, node, personas):
    client.force_login(personas["operator"])
    response = client.get(_url(controller_cluster, node))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'data-config="node.id"' in body and f'data-logger="{LOGGER}"' in body
    assert 'value="dry_run"' in body


def test_it_hides_the_form_from_a_viewer(client, controller_cluster, node, personas):
    client.force_login(personas["viewer"])
    body = client.get(_url(controller_cluster, node)).content.decode()
    assert f'data-logger="{LOGGER}"' in body and 'value="dry_run"' not in body


def test_it_dry_runs_through_htmx(client, controller_cluster, node, personas):
    client.force_login(personas["operator"])
    response = client.post(
        _url(controller_cluster, node),
        {"logger": LOGGER, "level": "DEBUG", "action": "dry_run"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert b"Dry run: valid" in response.content and b"<html" not in response.content


def test_it_applies_and_redirects(client, controller_cluster, node, personas, reset_level):
    client.force_login(personas["operator"])
    response = client.post(
        _url(controller_cluster, node), {"more": f"{LOGGER}=WARN", "action": "apply"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200 and response["HX-Redirect"] == _url(controller_cluster, node)
    assert _level(controller_cluster, node, LOGGER) == "WARN"


def test_it_rerenders_an_invalid_form_with_200(client, controller_cluster, node, personas):
    client.force_login(personas["operator"])
    response = client.post(_url(controller_cluster, node), {"more": "not a line", "action": "apply"})
    assert response.status_code == 200
    assert b"is not logger=LEVEL" in response.content


def test_it_shows_a_kafka_error_not_a_500(client, controller_cluster, personas):
    client.force_login(personas["operator"])
    response = client.post(_url(controller_cluster, 4242), {"logger": LOGGER, "level": "DEBUG"})
    assert response.status_code == 200
    assert b"UNKNOWN_CONTROLLER_ID" in response.content


def test_it_says_why_in_broker_mode(client, kafka_cluster, personas):
    client.force_login(personas["viewer"])
    response = client.get(_url(kafka_cluster, 1))
    assert response.status_code == 200
    assert b"direct connection to the controllers" in response.content
    assert b"bootstrap controllers" in response.content


@pytest.mark.parametrize(("role", "status"), [("viewer", 403), ("auditor", 403), ("outsider", 404)])
def test_it_refuses_a_change_from_who_may_not(client, controller_cluster, node, personas, role, status):
    client.force_login(personas[role])
    response = client.post(
        _url(controller_cluster, node), {"logger": LOGGER, "level": "DEBUG", "action": "apply"}
    )
    assert response.status_code == status
    assert not AuditEvent.objects.filter(action__startswith="controller.").exists()


def test_it_audits_and_shows_a_logger_kafka_refuses(client, controller_cluster, node, personas):
    client.force_login(personas["operator"])
    response = client.post(
        _url(controller_cluster, node),
        {"logger": "org.apache.kafka.nosuch", "level": "DEBUG", "action": "apply"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200 and "HX-Redirect" not in response
    body = response.content.decode()
    assert "Rejected" in body and "INVALID_CONFIG" in body and "does not exist" in body
    event = AuditEvent.objects.get(action="controller.log_level.change")
    assert event.outcome == "failure" and event.after is None
    assert event.outcomes[f"controller:{node}"]["error"] == "INVALID_CONFIG"


def test_it_refuses_to_reset_the_root_logger_before_calling_kafka(controller_cluster, node, personas):
    with pytest.raises(controllers.LogLevelPlanError, match="root logger cannot be reset"):
        set_levels(personas, controller_cluster, node, {"root": "RESET"})


def test_it_changes_the_log_level_of_an_inactive_controller(sandbox, controller_cluster, personas):
    inactive = max(c for c in sandbox.state.controllers if c != sandbox.state.active_controller)
    result = set_levels(personas, controller_cluster, inactive, {LOGGER: "DEBUG"})
    try:
        assert result.ok, result.error
        assert _level(controller_cluster, inactive, LOGGER) == "DEBUG"
    finally:
        set_levels(personas, controller_cluster, inactive, {LOGGER: "INFO"})
