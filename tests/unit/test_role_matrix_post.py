"""Every mutating route × every role, with a POST body that works for the roles allowed to send it.

Refused requests (login redirect, 403, 404 for a cluster the user cannot see) must change nothing:
no console row (no Operation, no audit event but the one "refused" event a 403 records), no Kafka
change, no lake file, nothing queued. Allowed ones must change something, so the body is known to
be a real one.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.unit.matrix_rows import MUTATING_ROWS, Row
from tests.unit.matrix_world import LOGIN, ROLES, World, cluster_admin, kafka_restored, refusals

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(personas, kafka_cluster, frozen, tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(lake))
    people = {**personas, "clusteradmin": cluster_admin(kafka_cluster)}
    with kafka_restored(frozen):
        yield World(sandbox=frozen, cluster=kafka_cluster, people=people, lake=lake)


def _changes(before: dict, after: dict) -> list[str]:
    out = []
    for part in before:
        if part == "db":
            out += [f"db.{model}" for model in before["db"] if before["db"][model] != after["db"][model]]
        elif before[part] != after[part]:
            out.append(part)
    return out


CASES = [pytest.param(row, role, id=f"{row.id}-{role}") for row in MUTATING_ROWS for role in ROLES]


@pytest.mark.parametrize(("row", "role"), CASES)
def test_post_matrix(client, world, row: Row, role: str):
    cluster, kwargs, data = row.build(world)
    if cluster is not None:
        kwargs = {"name": cluster.name, **kwargs}
    url = reverse(row.route, kwargs=kwargs)
    if role != "anonymous":
        client.force_login(world.people[role])
    before, refused_before = world.state(), len(refusals())
    response = client.post(url, data)
    expected = row.expected(role)
    changed = _changes(before, world.state())
    if expected == LOGIN:
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    else:
        assert response.status_code == expected, (response.status_code, response.content[:600])
    if row.refused(role):
        assert changed == [], f"a refused POST ({response.status_code}) changed {changed}"
        new = refusals()[refused_before:]
        if response.status_code in (200, 403):  # an attempted change by a signed-in user: audited once
            assert [who for _, who in new] == [role], new
        else:
            assert new == []
    elif row.changes:
        assert changed, "the allowed POST changed nothing: the body is not a real one"
    else:
        assert changed == []


def test_every_role_is_in_the_matrix():
    assert len(CASES) == len(MUTATING_ROWS) * len(ROLES)
    assert {role for row in MUTATING_ROWS for role in row.allowed} <= set(ROLES)
