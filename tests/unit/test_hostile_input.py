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
