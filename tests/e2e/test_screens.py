"""E2E: every page of the tour (tests/page_tour.py, plus the login page) at 1024, 1440 and 1920 px, in light
and dark: the header's rows do not wrap, nothing runs past the window, headings are larger than body text, and
a chart's text is drawn at about its own size (not blown up to the page's width). Each page is loaded once; the
six screens are the same page re-laid out (viewport and colour scheme change in place), measured with one
evaluate and kept as a screenshot under var/screenshots/ (a CI artifact) to look at."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.e2e.conftest import login
from tests.page_tour import toured

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WIDTHS = (1024, 1440, 1920)
SCHEMES = ("light", "dark")
SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
NARROW = 980  # console.css: below this the nav is one "Menu" on the header's only row
HEIGHT = 1200  # the screenshot is the window: a whole page can be 17,000 px high (a broker's configs)
# a chart may be drawn a little larger than its 640 px drawing, not at the page's width
CHART_SCALE_MAX = 1.25

# Everything one screen's checks need, in one round trip. Header items are the visible texts and controls of
# the top bar; a row is the vertical centre they share.
MEASURE = """() => {
  const shown = (el) => el.checkVisibility({visibilityProperty: true}) && el.getBoundingClientRect().width > 0;
  const item = (el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
    return {text: (el.textContent || el.getAttribute('aria-label') || el.tagName).trim().slice(0, 30),
            left: r.left, right: r.right, mid: (r.top + r.bottom) / 2, height: r.height,
            line: parseFloat(s.lineHeight) || parseFloat(s.fontSize) * 1.45, field: el.tagName === 'INPUT'}; };
  const header = document.querySelector('header.topbar');
  const items = header ? [...header.querySelectorAll('a, summary, .sep, .badge, input[type=search], button, .who')]
    .filter(shown).map(item) : [];
  const inner = window.innerWidth, scroll = document.documentElement.scrollWidth;
  const past = scroll <= inner ? [] : [...document.querySelectorAll('body *')]
    .filter((el) => el.getBoundingClientRect().right > inner + 1 && !el.closest('svg'))
    .slice(-3).map((el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && el.className.baseVal === undefined ? '.' + el.className : ''));
  return {
    inner, scroll, past, header: !!header, items,
    body: parseFloat(getComputedStyle(document.body).fontSize),
    headings: [...document.querySelectorAll('h1, h2')].filter(shown).map((h) => ({text: h.textContent.trim().slice(0, 40),
      size: Math.min(...[h, ...h.querySelectorAll(':scope :not(small) :is(.mono, code), :scope > :is(.mono, code)')]
        .map((el) => parseFloat(getComputedStyle(el).fontSize)))})),
    charts: [...document.querySelectorAll('svg.chart')]
      .map((svg) => ({drawn: svg.viewBox.baseVal.width, shown: svg.getBoundingClientRect().width})),
  };
}"""

# Wait until htmx has no request in flight (the overview's boxes, a page's live fragments) and fonts are in.
SETTLED = "() => !document.querySelector('.htmx-request') && document.fonts.status === 'loaded'"


def problems_of(got: dict, width: int) -> list[str]:
    """What is wrong with one screen, in words (empty: nothing)."""
    found = []
    if got["scroll"] > got["inner"]:
        found.append(f"runs {got['scroll'] - got['inner']} px past the window ({', '.join(got['past'])})")
    if got["header"]:
        rows = sorted({round(i["mid"] / 6) for i in got["items"]})  # centres within ~6 px share a row
        allowed = 1 if width < NARROW else 2
        if len(rows) > allowed:
            found.append(f"header on {len(rows)} rows: {[i['text'] for i in got['items']]}")
        for i in got["items"]:
            if not i["field"] and i["height"] > 1.5 * i["line"]:
                found.append(f"header item {i['text']!r} wraps ({i['height']:.0f} px high)")
            if i["left"] < 0 or i["right"] > got["inner"]:
                found.append(
                    f"header item {i['text']!r} outside the window ({i['left']:.0f}..{i['right']:.0f})"
                )
    for h in got["headings"]:
        if h["size"] <= got["body"]:
            found.append(f"heading {h['text']!r} at {h['size']} px, body text {got['body']} px")
    for c in got["charts"]:
        if c["shown"] > CHART_SCALE_MAX * c["drawn"]:
            found.append(f"chart drawn {c['drawn']:.0f} px wide shown {c['shown']:.0f} px wide")
    return found


def screens(page, cdp, label: str) -> list[str]:
    """The page (already loaded) at every width and scheme: measured and photographed. The schemes alternate
    in a snake (light, dark | dark, light | ...) so that a page switches its scheme once per width."""
    found = []
    schemes = list(SCHEMES)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        for scheme in schemes:
            page.emulate_media(color_scheme=scheme)
            got = page.evaluate(MEASURE)
            found += [f"{label} @{width} {scheme}: {p}" for p in problems_of(got, width)]
            # Chromium's own capture, tuned for speed: a third of the time of page.screenshot's PNG.
            shot = cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
            (SHOTS / f"{label}-{width}-{scheme}.png").write_bytes(base64.b64decode(shot["data"]))
        schemes.reverse()
    return found


def visit(page, cdp, url: str, label: str) -> list[str]:
    response = page.goto(url)
    if response is None or response.status >= 400:
        return [f"{label}: {url} answered {response and response.status}"]
    page.wait_for_function(SETTLED)
    return screens(page, cdp, label)


def test_every_page_holds_its_layout_at_every_width_in_light_and_dark(
    page, live_server, sandbox, kafka_cluster, personas, telemetry_lake
):
    SHOTS.mkdir(parents=True, exist_ok=True)
    cdp = page.context.new_cdp_session(page)
    found = visit(page, cdp, f"{live_server.url}/login/", "login")
    with toured(sandbox, kafka_cluster, personas, telemetry_lake) as tour:
        login(page, live_server, "admin", "pw-admin")
        pages = tour.pages()
        for label, path in pages:
            found += visit(page, cdp, live_server.url + path, label)
    assert len(pages) >= 50  # the tour, not an empty list
    assert found == [], "\n".join(found)
