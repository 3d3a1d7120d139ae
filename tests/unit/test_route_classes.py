"""Every URL the resolver knows is classified: read-only, session, or mutating with a row in the role matrix.

A new route fails here until it is classified, so no mutating route exists without matrix rows
(tests/unit/matrix_rows.py). A read-only route must refuse POST (405): the class is checked, not trusted.
"""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.unit.matrix_rows import MUTATING, MUTATING_ROWS, READ_ONLY, SESSION
from tests.unit.matrix_world import ROLES

# A value for each URL argument (the route only has to resolve; a POST to a read-only route is
# refused before any object is looked up).
ARGUMENTS = {
    "name": "sandbox",
    "topic": "some-topic",
    "broker": "1",
    "binding_id": 1,
    "request_id": 1,
    "rid": 1,
    "node_id": 101,
    "op_id": 1,
    "event_id": 1,
    "group": "some-group",
    "token_id": 1,
    "channel_id": 1,
    "transactional_id": "some-transactional-id",
    "group_id": "some-share-group",
}


def routes() -> dict[str, set[str]]:
    """Route name -> its URL arguments, for every named route outside Django's admin site."""
    found: dict[str, set[str]] = {}

    def walk(patterns, prefix_kwargs: set[str]):
        for p in patterns:
            if isinstance(p, URLResolver):
                if p.namespace == "admin":
                    continue  # Django's admin: staff only, see test_the_admin_site_is_for_superusers_only
                if p.namespace == "api":
                    continue  # the REST API: tests/unit/test_api_matrix.py classifies every one of its routes
                assert not p.namespace, f"unknown URL namespace {p.namespace!r}: classify its routes"
                walk(p.url_patterns, prefix_kwargs | set(p.pattern.converters))
            else:
                assert isinstance(p, URLPattern)
                assert p.name, f"unnamed route {p.pattern}: name it and classify it"
                found[p.name] = prefix_kwargs | set(p.pattern.converters)

    walk(get_resolver().url_patterns, set())
    return found


def test_every_route_is_classified():
    names = set(routes())
    unclassified = names - READ_ONLY - SESSION - MUTATING
    assert not unclassified, (
        f"routes without a class: {sorted(unclassified)}. A GET-only page goes in READ_ONLY; "
        "anything that accepts POST needs a row per role in MUTATING_ROWS (tests/unit/matrix_rows.py)."
    )
    assert not (READ_ONLY & MUTATING) and not (SESSION & (READ_ONLY | MUTATING))
    assert not (READ_ONLY | SESSION | MUTATING) - names, "classified routes that no longer exist"


def test_every_mutating_route_has_a_row_per_role():
    assert len(MUTATING_ROWS) >= len(MUTATING) > 30
    for row in MUTATING_ROWS:
        assert {row.expected(role) for role in ROLES} - {"login"}, row.id


@pytest.mark.django_db
@pytest.mark.parametrize("route", sorted(READ_ONLY))
def test_read_only_routes_refuse_post(client, route):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root"))
    kwargs = {k: ARGUMENTS[k] for k in routes()[route]}
    response = client.post(reverse(route, kwargs=kwargs), {"anything": "1"})
    assert response.status_code == 405, f"{route} accepts POST: move it to MUTATING_ROWS with a row per role"


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_the_admin_site_is_for_superusers_only(client, personas, kafka_cluster, role):
    from django.contrib.auth.models import Group

    from tests.unit.matrix_world import cluster_admin

    people = {**personas, "clusteradmin": cluster_admin(kafka_cluster)}
    if role != "anonymous":
        client.force_login(people[role])
    response = client.post(reverse("admin:auth_group_add"), {"name": "matrix-group"})
    assert response.status_code == 302
    if role == "admin":
        assert Group.objects.filter(name="matrix-group").exists()
    else:
        assert response["Location"].startswith(reverse("admin:login"))
        assert not Group.objects.exists()
