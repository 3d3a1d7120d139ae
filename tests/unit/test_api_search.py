"""GET /api/v1/search/: the page's search (console/fleet/search.py) as JSON, with the page's form."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.identity import tokens
from tests.unit.fleet_search_world import NOW, B

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client, personas):
    def get(role: str, query: dict):
        secret = tokens.create_token(actor=personas[role], name="t", scope="read", days=1).secret
        return client.get(reverse("api:search"), query, HTTP_AUTHORIZATION=f"Bearer {secret}")

    return get


def test_it_answers_the_names_found_by_cluster(api, search_world):
    m = search_world.marker
    response = api("admin", {"q": f"^{m}-orders", "regex": "true", "kind": ["topic", "group"]})
    assert response.status_code == 200
    as_of = NOW.isoformat()
    topic = {"kind": "topic", "more": 0, "as_of": as_of, "source": "snapshot", "missing": ""}
    group = {"kind": "group", "hits": [], "more": 0, "as_of": as_of, "source": "snapshot", "missing": ""}
    body = response.json()
    assert body.pop("seconds") >= 0
    assert body == {
        "query": f"^{m}-orders",
        "regex": True,
        "kinds": ["topic", "group"],
        "clusters": [
            {"cluster": B, "kinds": [{**topic, "hits": [{"name": f"{m}-orders-eu", "acls": None}]}, group]},
            {
                "cluster": "sandbox",
                "kinds": [{**topic, "hits": [{"name": f"{m}-orders", "acls": None}]}, group],
            },
        ],
        "searched": 2,
        "not_searched": [],
        "total": 2,
    }


def test_a_caller_bound_to_one_cluster_gets_only_its_names(api, search_world):
    body = api("viewer", {"q": search_world.marker}).json()
    assert [c["cluster"] for c in body["clusters"]] == ["sandbox"]
    assert (
        B not in str(body)
        and "orders-eu" not in str(body)
        and body["kinds"] == ["topic", "group", "principal"]
    )
    assert [k["kind"] for k in body["clusters"][0]["kinds"]] == ["topic", "group"]  # no acl.manage


def test_a_bad_regex_or_no_query_is_a_400(api, search_world):
    bad = api("viewer", {"q": "orders(", "regex": "1"})
    assert bad.status_code == 400
    assert bad.json()["error"]["errors"] == ["q: Not a regular expression RE2 accepts: missing ): orders("]
    empty = api("viewer", {"q": ""})
    assert empty.status_code == 400 and empty.json()["error"]["errors"] == ["q: This field is required."]
    kind = api("viewer", {"q": "x", "kind": "broker"})
    assert kind.status_code == 400 and "kind:" in kind.json()["error"]["errors"][0]
