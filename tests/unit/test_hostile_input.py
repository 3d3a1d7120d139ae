"""Hostile input to every form (issue 14): no 500, no escaping exception, nothing half-applied.

Each route in ``hostile_routes.ROUTES`` gets a derandomized hypothesis test (``make_test``)
of its own size; together they post more than 10,000 cases. This module checks that every
route accepting POST has a strategy (a new form must get one) and runs the topic, config and
registry forms; test_hostile_input_workflows.py runs the workflow forms.
"""

from __future__ import annotations

import pytest

from tests.unit.hostile_harness import make_test, posting_routes
from tests.unit.hostile_routes import ROUTES, hostile_env  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db
HERE = (
    "topic_batch_create",
    "topic_create",
    "topic_delete",
    "topic_policy",
    "topic_add_partitions",
    "topic_configs",
    "broker_configs_default",
    "broker_configs",
    "cluster_new",
    "cluster_settings",
    "cluster_remove",
    "cluster_test",
    "cluster_access",
    "cluster_access_revoke",
    "health_check_start",
    "topic_list",
)


def test_every_posting_route_has_a_hostile_strategy_and_the_cases_add_up():
    from tests.unit import test_hostile_input_workflows as workflows

    missing = posting_routes() - set(ROUTES)
    assert not missing, (
        f"POST routes without a hostile-input strategy in hostile_routes.py: {sorted(missing)}"
    )
    assert len(posting_routes()) > 25
    tested = set(HERE) | set(workflows.HERE)
    assert tested == set(ROUTES), f"routes with a strategy but no test: {sorted(set(ROUTES) - tested)}"
    assert sum(r.examples for r in ROUTES.values()) >= 10_000


for _name in HERE:
    globals()[f"test_hostile_{_name}"] = make_test(ROUTES[_name])


def test_a_case_still_sees_kafka_change_when_its_before_is_the_last_cases_after(request, monkeypatch):
    """A case's "before" snapshot is the previous case's "after" (one walk of the sandbox per case, not
    three): a search that changes Kafka is still caught, and the change is still put back."""
    from tests.unit import hostile_harness as harness

    env = request.getfixturevalue("hostile_env")
    harness.track_db()
    route, kwargs = ROUTES["topic_list"], {"name": env.cluster.name}
    harness.run_case(env, route, kwargs, [])
    carried = env.kafka_now
    assert carried is not None and carried == harness.kafka_state(env.sandbox)
    send = harness.send

    def send_and_meddle(*args, **kwargs):
        env.sandbox.create_topic("hostile-meddled", assignment=[[1]])
        return send(*args, **kwargs)

    monkeypatch.setattr(harness, "send", send_and_meddle)
    with pytest.raises(AssertionError, match="changed state"):
        harness.run_case(env, route, kwargs, [("q", "x")])
    assert "hostile-meddled" not in env.sandbox.state.topics
    assert env.kafka_now is None  # a failed case: the next one reads Kafka afresh
    monkeypatch.setattr(harness, "send", send)
    harness.run_case(env, ROUTES["logout"], {}, [])  # a route with upkeep (it logs in again)
    assert env.kafka_now is None
