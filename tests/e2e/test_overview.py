"""E2E: log in, open the cluster overview, see the sandbox's brokers."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_it_shows_the_brokers_after_login(page, live_server, sandbox, personas):
    login(page, live_server, "viewer", "pw-viewer")
    # One visible cluster: home goes straight to its overview.
    page.wait_for_url(f"{live_server.url}/c/sandbox/")
    rows = page.locator("#brokers tbody tr")
    rows.first.wait_for()
    assert rows.count() == 3
    text = page.inner_text("#brokers")
    for broker_id, address in enumerate(sandbox.bootstrap_servers.split(","), start=1):
        host, port = address.rsplit(":", 1)
        assert f"{broker_id}\t{host}\t{port}" in text
    # The active controller is the quorum's leader (a dedicated controller), never one of the brokers.
    assert page.locator("#brokers .badge").count() == 0
    assert page.inner_text("#active-controller .value") == str(sandbox.state.active_controller)


def test_a_wrong_password_is_refused(page, live_server, personas):
    login(page, live_server, "viewer", "wrong")
    assert "didn't match" in page.inner_text("main")
