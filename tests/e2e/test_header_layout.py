"""E2E: the header holds at common widths with every cluster link an admin sees: nothing runs past the
window (no horizontal scroll, every nav link and the log-out inside it) and brand, search and the user
stay on one row (the nav has a row of its own below them)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MEASURE = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; };
  return {
    scroll: document.documentElement.scrollWidth,
    inner: window.innerWidth,
    links: [...document.querySelectorAll('nav.main-nav a')].map(box),
    brand: box(document.querySelector('.topbar .brand')),
    search: box(document.querySelector('.topbar-search')),
    logout: box(document.querySelector('.topbar .logout')),
    nav: box(document.querySelector('nav.main-nav')),
  };
}"""


@pytest.mark.parametrize("width", [1024, 1440, 1920])
def test_the_header_never_runs_past_the_window(page, live_server, kafka_cluster, personas, width):
    page.set_viewport_size({"width": width, "height": 800})
    login(page, live_server, "admin", "pw-admin")
    page.goto(f"{live_server.url}/c/{kafka_cluster.name}/alerts/")
    got = page.evaluate(MEASURE)
    assert got["scroll"] == got["inner"] == width
    assert len(got["links"]) >= 15  # the cluster's pages as an admin sees them
    assert all(0 <= left and right <= width for left, right, _, _ in got["links"])
    assert got["logout"][1] <= width
    tops = [got["brand"][2], got["search"][2], got["logout"][2]]
    first_row_bottom = max(got["brand"][3], got["search"][3], got["logout"][3])
    assert max(tops) < min(b for b in (got["brand"][3], got["search"][3], got["logout"][3]))  # one row
    assert got["nav"][2] >= first_row_bottom - 1  # the nav below it
