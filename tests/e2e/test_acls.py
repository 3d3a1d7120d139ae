"""E2E: an operator adds a binding through the form, reviews and applies it, finds it in the list, deletes it by filter."""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.conftest import login
from tests.e2e.pages import apply_acls, review_acl_binding

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_operator_adds_lists_and_deletes_a_binding(page, live_server, sandbox, personas):
    topic = f"e2e-acl-{uuid.uuid4().hex[:8]}"
    login(page, live_server, "operator", "pw-operator")
    page.goto(f"{live_server.url}/c/sandbox/acls/new/")
    review_acl_binding(page, topic, "User:orders-app", "READ")
    assert "created" in apply_acls(page)

    page.goto(f"{live_server.url}/c/sandbox/acls/?resource_name={topic}")
    assert "User:orders-app" in page.inner_text("#acl-bindings")
    assert "1 binding" in page.inner_text("#acl-count")

    page.click("#acl-delete-matching")  # the same filter, previewed before anything is deleted
    page.locator("#acl-deletes").wait_for()
    assert page.locator("#acl-deletes input[name=delete]").count() == 1
    assert "deleted" in apply_acls(page)
    page.goto(f"{live_server.url}/c/sandbox/acls/?resource_name={topic}")
    assert "0 bindings" in page.inner_text("#acl-count")
