"""The quorum page and its service, in both modes, against the sandbox (3 brokers, 3 controllers)."""

from __future__ import annotations

import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from console.kafka import QuorumInfo, QuorumReplica
from console.quorum import actions as quorum
from tests.unit.quorum_helpers import register_controllers

pytestmark = pytest.mark.django_db


@pytest.fixture
def controller_cluster(sandbox, personas):
    return register_controllers(sandbox, personas)


def _ids(rows):
    return {r.id for r in rows}


def test_it_describes_the_quorum_through_the_brokers(sandbox, kafka_cluster, personas):
    sandbox.advance(1)  # a fresh sandbox has not appended to the metadata log yet
    view = quorum.describe_quorum(actor=personas["viewer"], cluster=kafka_cluster)
    assert view.quorum_error is None and view.features_error is None
    assert _ids(view.voters) == set(sandbox.state.controllers)
    assert _ids(view.observers) == set(sandbox.state.brokers)
    assert view.quorum.leader_id == sandbox.state.active_controller
    assert view.quorum.leader_epoch == sandbox.state.quorum_epoch
    assert view.quorum.high_watermark > 0
    assert [e.id for e in view.endpoints if e.active] == [view.quorum.leader_id]
    assert all(e.endpoints and e.voter for e in view.endpoints)
    assert "metadata.version" in {f.name for f in view.finalized_features}
    assert not view.leader_missing


def test_it_describes_the_quorum_through_the_controllers(sandbox, controller_cluster, personas):
    view = quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster)
    assert view.controller_mode and view.quorum_error is None and view.controllers_error is None
    assert _ids(view.voters) == set(sandbox.state.controllers)
    addresses = {f"{n.host}:{n.port}" for n in sandbox.state.controllers.values()}
    assert {a for e in view.endpoints for a in e.endpoints} == addresses
    assert [e.id for e in view.endpoints if e.active] == [sandbox.state.active_controller]
    assert "metadata.version" in {f.name for f in view.finalized_features}


def test_it_refuses_a_user_without_a_role(kafka_cluster, personas):
    with pytest.raises(PermissionDenied):
        quorum.describe_quorum(actor=personas["outsider"], cluster=kafka_cluster)


def test_it_reports_an_unreachable_cluster_instead_of_raising(offline_cluster, personas):
    view = quorum.describe_quorum(actor=personas["admin"], cluster=offline_cluster)
    assert view.quorum_error is not None and view.quorum_error.name == "NETWORK_EXCEPTION"
    assert view.quorum is None and view.voters == [] and view.endpoints == []


def test_it_shows_a_stopped_controllers_lag_growing(sandbox, controller_cluster, personas):
    victim = max(c for c in sandbox.state.controllers if c != sandbox.state.active_controller)
    before = {
        r.id: r for r in quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster).voters
    }
    assert not before[victim].lagging
    sandbox.stop_controller(victim)
    try:
        sandbox.advance(30)
        view = quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster)
        row = {r.id: r for r in view.voters}[victim]
        assert row.lag > before[victim].lag
        assert row.lagging and victim in view.lagging_voters
        assert row.log_end_offset < view.quorum.high_watermark
        others = [r for r in view.voters if r.id != victim]
        assert not any(r.lagging for r in others)
    finally:
        sandbox.start_controller(victim)
        sandbox.advance(1)
    after = {
        r.id: r for r in quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster).voters
    }
    assert after[victim].lag == 0 and not after[victim].lagging


# -- pure highlighting rules ---------------------------------------------------------------------


def _info(leader=1, voters=((1, 100, 10_000), (2, 100, 10_000)), observers=()):
    def rep(rid, leo, ts):
        return QuorumReplica(rid, leo, max(0, 100 - leo), ts, ts)

    return QuorumInfo(leader, 5, 100, tuple(rep(*v) for v in voters), tuple(rep(*o) for o in observers))


def test_it_flags_a_voter_far_behind_the_high_watermark():
    voters, _ = quorum.classify(_info(voters=((1, 100, 10_000), (2, 10, 10_000))), 50, 5000)
    assert [(v.id, v.lagging) for v in voters] == [(1, False), (2, True)]
    assert "90 records" in voters[1].lag_reason


def test_it_flags_a_voter_that_has_not_caught_up_recently():
    voters, _ = quorum.classify(_info(voters=((1, 100, 60_000), (2, 99, 10_000))), 50, 5000)
    assert voters[1].lagging and voters[1].lag_reason == "not caught up recently"
    assert voters[1].last_caught_up_behind == "50.0 s behind"


def test_it_flags_a_missing_leader():
    view = quorum.QuorumView(cluster=None, controller_mode=True, quorum=_info(leader=-1))
    assert view.leader_missing


def test_it_does_not_flag_observers_for_time_alone():
    _, observers = quorum.classify(_info(observers=((7, 100, 1_000),)), 50, 5000)
    assert not observers[0].lagging


# -- the page --------------------------------------------------------------------------------------


def test_it_renders_the_quorum_page(client, sandbox, controller_cluster, personas):
    client.force_login(personas["viewer"])
    response = client.get(reverse("quorum_page", kwargs={"name": controller_cluster.name}))
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" in body and 'id="quorum-live"' in body and 'hx-trigger="every' in body
    assert 'id="leader-id">' + str(sandbox.state.active_controller) in body
    for cid in sandbox.state.controllers:
        assert f'data-replica="{cid}"' in body and f'data-controller="{cid}"' in body
    assert 'data-feature="metadata.version"' in body
    assert 'data-section="topics"' in body and "UNSUPPORTED_ENDPOINT_TYPE" in body
    assert reverse("controller_detail", kwargs={"name": controller_cluster.name, "node_id": 101}) in body


class _BlockedInline(HTMLParser):
    """The inline <style> elements and <script> elements without src in a page: what the console's
    Content Security Policy (style-src-elem 'self', script-src 'self') makes the browser drop."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "style" or (tag == "script" and not dict(attrs).get("src")):
            self.found.append(self.get_starttag_text())


def blocked_inline(html: str) -> list[str]:
    parser = _BlockedInline()
    parser.feed(html)
    return parser.found


def test_it_highlights_lagging_voters_with_the_stylesheet_the_csp_allows(
    client, sandbox, controller_cluster, personas
):
    client.force_login(personas["viewer"])
    victim = max(c for c in sandbox.state.controllers if c != sandbox.state.active_controller)
    sandbox.stop_controller(victim)
    try:
        sandbox.advance(30)
        response = client.get(reverse("quorum_page", kwargs={"name": controller_cluster.name}))
    finally:
        sandbox.start_controller(victim)
        sandbox.advance(1)
    body = response.content.decode()
    assert f'<tr data-replica="{victim}"' in body and 'class="lagging"' in body
    directives = {d.strip() for d in response["Content-Security-Policy"].split(";")}  # any order
    assert {"style-src-elem 'self'", "script-src 'self'"} <= directives  # not weakened
    assert blocked_inline(body) == []
    assert blocked_inline(client.get(reverse("quorum_page", kwargs={"name": controller_cluster.name}),
                                  HTTP_HX_REQUEST="true").content.decode()) == []  # fmt: skip
    css = Path(finders.find("console/console.css")).read_text()
    assert "tr.lagging td" in css and ".leader-missing" in css


def test_no_template_carries_an_inline_style_or_script_the_csp_blocks():
    templates = [p for d in settings.TEMPLATES[0]["DIRS"] for p in Path(d).rglob("*.html")]
    assert len(templates) > 50
    offending = {str(p): found for p in templates if (found := blocked_inline(p.read_text()))}
    assert offending == {}


def test_it_answers_htmx_with_the_fragment(client, kafka_cluster, personas):
    client.force_login(personas["viewer"])
    response = client.get(reverse("quorum_page", kwargs={"name": kafka_cluster.name}), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="quorum-live"') and "<html" not in body
    assert "HX-Request" in response["Vary"]
    assert "controller_detail" not in body and "/controllers/" not in body  # broker mode: no links


def test_it_shows_kafka_errors_on_the_page_not_a_500(client, offline_cluster, personas):
    client.force_login(personas["admin"])
    response = client.get(reverse("quorum_page", kwargs={"name": offline_cluster.name}))
    assert response.status_code == 200
    assert b"NETWORK_EXCEPTION" in response.content and b"could not be described" in response.content


def test_it_highlights_a_missing_leader_on_the_page(client, sandbox, kafka_cluster, personas):
    client.force_login(personas["viewer"])
    ids = sorted(sandbox.state.controllers)
    for cid in ids:
        sandbox.stop_controller(cid)
    try:
        response = client.get(reverse("quorum_page", kwargs={"name": kafka_cluster.name}))
    finally:
        for cid in ids:
            sandbox.start_controller(cid)
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="leader-missing"' in body and "no leader" in body


def test_it_follows_a_new_leader_when_the_active_controller_stops(sandbox, controller_cluster, personas):
    old = sandbox.state.active_controller
    quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster)  # the gateway knows `old`
    sandbox.stop_controller(old)
    try:
        sandbox.advance(1)
        view = quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster)
        assert view.quorum_error is None, view.quorum_error
        assert view.quorum.leader_id == sandbox.state.active_controller != old
        assert [e.id for e in view.endpoints if e.active] == [view.quorum.leader_id]
    finally:
        sandbox.start_controller(old)
        sandbox.advance(1)


def test_it_stays_quick_while_the_first_bootstrap_controller_is_down(sandbox, controller_cluster, personas):
    first = int(sandbox.bootstrap_controllers.split(",")[0].rsplit(":", 1)[1])
    node = next(n.node_id for n in sandbox.state.controllers.values() if n.port == first)
    quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster)
    sandbox.stop_controller(node)
    try:
        sandbox.advance(1)
        quorum.describe_quorum(
            actor=personas["viewer"], cluster=controller_cluster
        )  # may re-learn the leader
        start = time.monotonic()
        view = quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster)
        elapsed = time.monotonic() - start
        assert view.quorum_error is None and view.quorum.leader_id != node
        assert elapsed < controller_cluster.request_timeout_s
    finally:
        sandbox.start_controller(node)
        sandbox.advance(1)


def test_it_follows_a_leader_that_moved_while_the_old_one_still_runs(sandbox, controller_cluster, personas):
    old = sandbox.state.active_controller
    quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster)  # the gateway knows `old`
    sandbox.stop_controller(old)
    sandbox.start_controller(old)  # back, but no longer the leader
    sandbox.advance(1)
    view = quorum.describe_quorum(actor=personas["viewer"], cluster=controller_cluster)
    assert view.quorum_error is None, view.quorum_error
    assert view.quorum.leader_id == sandbox.state.active_controller != old
