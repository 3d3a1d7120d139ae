"""Browser fixtures: Debian's headless Chromium driven by Playwright against pytest-django's live server."""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium package (see README).")
    from playwright.sync_api import sync_playwright

    # Playwright gives every launch a fresh, empty profile of its own.
    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


@contextmanager
def browser_tab(browser):
    """A tab in a context of its own (its own cookies), closed afterwards."""
    context = browser.new_context()
    context.set_default_timeout(15000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def page(browser):
    with browser_tab(browser) as tab:
        yield tab


def login(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


@contextmanager
def signed_in_tab(browser, live_server, username: str, password: str):
    """A second user's tab beside the test's own ``page``, logged in."""
    with browser_tab(browser) as tab:
        login(tab, live_server, username, password)
        yield tab


@contextmanager
def background_worker(step, interval_s: float = 0.3):
    """Stand in for Celery in a browser test: call ``step()`` every interval on a thread until the test ends."""
    from django.db import OperationalError, close_old_connections

    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                step()
            except OperationalError as exc:
                # The live server's in-memory test database is one shared-cache SQLite: a write
                # that meets the web thread's open transaction fails at once with "table is
                # locked" (busy_timeout does not apply to shared-cache locks). Celery would run
                # the task again; so does this stand-in, on its next tick. Anything else fails.
                if "locked" not in str(exc):
                    raise
            finally:
                close_old_connections()
            time.sleep(interval_s)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)


def operations_worker(**only):
    """``background_worker`` running the pending operations (those matching ``only``, e.g. kind=...)."""
    from console import operations
    from console.models import Operation

    def step():
        for op_id in Operation.objects.filter(state="pending", **only).values_list("pk", flat=True):
            operations.run(op_id, worker="e2e")

    return background_worker(step)
