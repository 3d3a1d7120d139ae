"""tests/page_tour.py covers every page: each named route is a stop of the tour or left out with a reason,
and a route left out as POST-only really refuses GET (the reason is checked, not trusted)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests import page_tour
from tests.unit.test_route_classes import ARGUMENTS, routes

# URL arguments of the routes test_route_classes does not reach (the route only has to resolve).
MORE_ARGUMENTS = {
    "window_id": 1,
    "alert_id": 1,
    "silence_id": 1,
    "rule": "group_lag",
    "grant_id": 1,
    "rule_id": 1,
}


def test_it_visits_every_page_or_says_why_not():
    known = routes()
    toured = {stop.route for stop in page_tour.STOPS}
    left_out = set(page_tour.LEFT_OUT)
    assert not toured & left_out, sorted(toured & left_out)
    assert not (toured | left_out) - set(known), sorted((toured | left_out) - set(known))
    missing = set(known) - toured - left_out
    assert not missing, (
        f"routes neither in the page tour nor left out: {sorted(missing)}. A page goes in "
        "tests/page_tour.py STOPS (with the data that fills it); anything else in LEFT_OUT with its reason."
    )
    assert all(why.strip() for why in page_tour.LEFT_OUT.values())


def test_it_gives_each_stop_a_label_of_its_own():
    labels = [stop.id for stop in page_tour.STOPS]
    assert len(labels) == len(set(labels))


@pytest.mark.django_db
def test_it_leaves_out_as_post_only_routes_that_refuse_get(client, personas):
    client.force_login(personas["admin"])
    known = routes()
    answers = {}
    for route in sorted(page_tour.POST_ONLY):
        url = reverse(route, kwargs={arg: {**ARGUMENTS, **MORE_ARGUMENTS}[arg] for arg in known[route]})
        answers[route] = client.get(url).status_code
    assert answers == dict.fromkeys(sorted(page_tour.POST_ONLY), 405)
