"""E2E: the header holds at every width with every cluster link an admin sees. Brand, search and the user
share one row; the nav is one row below them that never wraps: where it has no room for all of the cluster's
pages (under 1600 px) the last ones are in a "More" menu, and under 980 px the whole nav is one "Menu" on the
first row. Every link is in the window, either in the row or in its opened menu."""

from __future__ import annotations

from itertools import pairwise

import pytest

from tests.e2e.conftest import login

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MEASURE = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; };
  const shown = (el) => el.checkVisibility() && el.getBoundingClientRect().width > 0;
  const links = [...document.querySelectorAll('nav.main-nav a')];
  return {
    scroll: document.querySelector('header.topbar').scrollWidth,  // the header's own (a page's table may be wider at 760 px)
    inner: window.innerWidth,
    shown: links.filter(shown).map((a) => [a.textContent.trim(), ...box(a)]),
    hidden: links.filter((a) => !shown(a)).map((a) => a.textContent.trim()),
    menus: [...document.querySelectorAll('.topbar details.menu > summary')].filter(shown).map((s) => s.textContent.trim()),
    brand: box(document.querySelector('.topbar .brand')),
    search: box(document.querySelector('.topbar-search')),
    logout: box(document.querySelector('.topbar .logout')),
  };
}"""

TAIL = [
    "Estate",
    "Access",
    "ACLs",
    "SCRAM users",
    "Client quotas",
    "Transactions",
    "Share groups",
    "Requests",
    "Notifications",
    "Settings",
]


def one_row(*boxes) -> bool:
    """The boxes overlap vertically: they sit on one row."""
    return max(b[2] for b in boxes) < min(b[3] for b in boxes)


@pytest.mark.parametrize(
    ("width", "menus", "in_menu"),
    [
        (760, ["Menu"], None),  # everything is in the one menu
        (1024, ["More"], TAIL),
        (1440, ["More"], TAIL),
        (1920, [], []),
    ],
)
def test_the_header_never_wraps_and_keeps_what_has_no_room_in_a_menu(
    page, live_server, kafka_cluster, personas, width, menus, in_menu
):
    page.set_viewport_size({"width": width, "height": 800})
    login(page, live_server, "admin", "pw-admin")
    page.goto(f"{live_server.url}/c/{kafka_cluster.name}/alerts/")
    got = page.evaluate(MEASURE)
    assert got["scroll"] == got["inner"] == width
    assert got["menus"] == menus
    assert one_row(got["brand"], got["search"], got["logout"])
    links = [name for name, *_ in got["shown"]]
    if in_menu is None:
        assert links == []
        assert len(got["hidden"]) >= 17  # the cluster's pages as an admin sees them, and Clusters, Audit
    else:
        assert got["hidden"] == in_menu
        assert len(links) + len(in_menu) >= 17
        assert one_row(*[b for _, *b in got["shown"]])  # the nav does not wrap
        lefts = sorted((left, right) for _, left, right, _, _ in got["shown"])
        assert all(b[0] - a[1] >= 8 for a, b in pairwise(lefts))  # links apart, the "More" ones too
        assert min(b[2] for _, *b in got["shown"]) >= got["logout"][3]  # below the first row
    assert all(0 <= left and right <= width for _, left, right, _, _ in got["shown"])
    if menus:
        page.click(f".topbar summary:text-is('{menus[0]}')")
        opened = page.evaluate(MEASURE)
        assert opened["hidden"] == []  # every link is in the opened menu
        assert all(0 <= left and right <= width for _, left, right, _, _ in opened["shown"])
        assert opened["scroll"] == width
        page.click("nav.main-nav >> text=Settings")
        page.wait_for_url(f"{live_server.url}/c/{kafka_cluster.name}/settings/")


def test_an_open_menu_closes_on_a_click_elsewhere_or_escape(page, live_server, kafka_cluster, personas):
    page.set_viewport_size({"width": 1024, "height": 800})
    login(page, live_server, "admin", "pw-admin")
    page.goto(f"{live_server.url}/c/{kafka_cluster.name}/alerts/")
    more = page.locator("details.nav-more")
    page.click(".topbar summary:text-is('More')")
    assert more.get_attribute("open") == ""
    page.click("main h1")
    assert more.get_attribute("open") is None
    page.click(".topbar summary:text-is('More')")
    page.keyboard.press("Escape")
    assert more.get_attribute("open") is None
    page.click(".topbar summary:text-is('More')")
    page.click("nav.main-nav >> text=ACLs")  # a click inside the menu is the menu's own
    page.wait_for_url(f"{live_server.url}/c/{kafka_cluster.name}/acls/")
