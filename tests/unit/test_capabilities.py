"""The controller-mode capability table and the "unavailable" fragment other pages include."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.test import RequestFactory

from console.clusters import capabilities
from console.models import Cluster
from console.views.capabilities import unavailable_page

BROKERS = Cluster(name="b", bootstrap_servers="h:9092")
CONTROLLERS = Cluster(name="c", bootstrap_controllers="h:9093")

# KIP-919's controller API subset, as console sections.
OFFERED_BY_CONTROLLERS = {
    "overview",
    "quorum",
    "configs",
    "acls",
    "reassignments",
    "elections",
    "controllers",
    "health",  # the health check only needs DescribeCluster
}


def test_it_offers_kip919s_subset_in_controller_mode():
    offered = {key for key in capabilities.SECTIONS if capabilities.available(CONTROLLERS, key)}
    assert offered == OFFERED_BY_CONTROLLERS


def test_it_offers_everything_but_controller_pages_with_brokers():
    missing = {key for key in capabilities.SECTIONS if not capabilities.available(BROKERS, key)}
    assert missing == {"controllers"}


@pytest.mark.parametrize("key", ["topics", "log_dirs", "offsets", "groups", "capacity", "requests"])
def test_it_says_why_a_broker_section_is_unavailable(key):
    reason = capabilities.unavailable_reason(CONTROLLERS, key)
    assert reason and "UNSUPPORTED_ENDPOINT_TYPE" in reason and "bootstrap servers" in reason
    assert capabilities.unavailable_reason(BROKERS, key) is None


def test_it_names_an_unknown_section():
    with pytest.raises(KeyError, match="known:"):
        capabilities.unavailable_reason(BROKERS, "nope")


def test_it_lists_every_section_with_its_reason():
    rows = {r.key: r for r in capabilities.capability_table(CONTROLLERS)}
    assert set(rows) == set(capabilities.SECTIONS)
    assert not rows["topics"].available and rows["topics"].reason
    assert rows["acls"].available and rows["acls"].reason == ""
    assert "DescribeLogDirs" in rows["reassignments"].note  # offered in part
    assert all(r.note == "" for r in capabilities.capability_table(BROKERS))


def test_it_renders_the_fragment_other_pages_include():
    reason = capabilities.unavailable_reason(CONTROLLERS, "topics")
    html = render_to_string(
        "console/_controller_mode_unavailable.html",
        {"cluster": CONTROLLERS, "title": "Topics", "reason": reason},
    )
    assert "Topics: unavailable in controller mode" in html
    assert "UNSUPPORTED_ENDPOINT_TYPE" in html and 'data-unavailable="controller-mode"' in html
    assert "register the brokers as bootstrap servers".lower() in html.lower()


@pytest.mark.django_db
def test_it_renders_a_whole_unavailable_page(admin_user):
    CONTROLLERS.save()
    request = RequestFactory().get("/")
    request.user = admin_user
    response = unavailable_page(request, CONTROLLERS, "topics")
    assert response.status_code == 200
    assert b"Topics: unavailable in controller mode" in response.content
