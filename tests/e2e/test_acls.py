"""E2E: an operator adds a binding through the form, reviews and applies it, finds it in the list, deletes it by filter."""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_operator_adds_lists_and_deletes_a_binding(page, live_server, sandbox, personas):
    topic = f"e2e-acl-{uuid.uuid4().hex[:8]}"
    login(page, live_server, "operator", "pw-operator")
    page.goto(f"{live_server.url}/c/sandbox/acls/new/")
    page.select_option("#acl-single #id_resource_type", "TOPIC")
    page.fill("#acl-single #id_resource_name", topic)
    page.fill("#acl-single #id_principal", "User:orders-app")
    page.select_option("#acl-single #id_operation", "READ")
    page.click("#acl-single button[type=submit]")
    page.locator("#acl-creates").wait_for()
    page.click("#acl-apply")
    page.locator("#acl-results").wait_for()
    assert "created" in page.inner_text("#acl-results")

    page.goto(f"{live_server.url}/c/sandbox/acls/?resource_name={topic}")
    assert "User:orders-app" in page.inner_text("#acl-bindings")
    assert "1 binding" in page.inner_text("#acl-count")

    page.click("#acl-delete-matching")  # the same filter, previewed before anything is deleted
    page.locator("#acl-deletes").wait_for()
    assert page.locator("#acl-deletes input[name=delete]").count() == 1
    page.click("#acl-apply")
    page.locator("#acl-results").wait_for()
    assert "deleted" in page.inner_text("#acl-results")
    page.goto(f"{live_server.url}/c/sandbox/acls/?resource_name={topic}")
    assert "0 bindings" in page.inner_text("#acl-count")
