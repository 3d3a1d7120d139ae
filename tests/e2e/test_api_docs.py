"""E2E: the API docs page (Swagger UI from drf-spectacular-sidecar, served by the console) renders under
the console's content security policy, and its "Try it out" calls the API with the session and CSRF."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_docs_render_under_the_csp_and_try_it_out_works(page, live_server, personas, kafka_cluster):
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live_server.url) else None)
    login(page, live_server, "viewer", "pw-viewer")
    page.wait_for_url(f"{live_server.url}/c/sandbox/")
    page.wait_for_load_state("networkidle")  # the overview's htmx boxes: leaving earlier aborts them
    page.goto(f"{live_server.url}/api/docs/")
    page.locator(".opblock").first.wait_for()
    assert page.locator(".opblock").count() > 40
    assert problems == [] and outside == []
    # Try it out: the cluster list, answered with the viewer's session.
    block = page.locator(".opblock", has_text="/api/v1/clusters/").first
    block.locator(".opblock-summary").click()
    block.locator("button.try-out__btn").click()
    block.locator("button.execute").click()
    status = page.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for()
    assert status.inner_text().strip() == "200"
    assert '"name": "sandbox"' in page.locator(".live-responses-table .microlight").first.inner_text()


def test_the_docs_send_anonymous_visitors_to_the_login_page(page, live_server):
    page.goto(f"{live_server.url}/api/docs/")
    assert page.url.startswith(f"{live_server.url}/login/")
