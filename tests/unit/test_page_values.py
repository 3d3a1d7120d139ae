"""Human values on every page (issue 38): each page of tests/page_tour.py, read as text (tags, scripts and
form inputs left out; a title attribute holds the raw value and is not text), shows no raw number over
10,000, no millisecond count of a second or more and no byte count of a KiB or more unformatted, and no
binary size under a decimal unit's name (MB for 2^20)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests import page_tour

pytestmark = pytest.mark.django_db

# 5+ digits in a row that are not part of a word, an address (host:port, a path), a version or a hash;
# (?!\d) keeps the match whole: without it "79986279-orders" (a test's topic) matched as "7998627".
# A number glued to letters ("8004786f-orders", a hex-prefixed name) is part of a name, not a value.
RAW_NUMBER = re.compile(r"(?<![\w.:/#@=-])\d{5,}(?!\d)(?![A-Za-z_]|[.:/@-]\w)")
MILLIS = re.compile(r"(?<![\w.])(\d[\d,]*)\s?ms\b")
BYTES = re.compile(r"(?<![\w.])(\d[\d,]*)\s?(?:bytes|B)\b")
DECIMAL_NAMED = re.compile(r"\d\s?(?:KB|MB|GB|TB|PB)\b")
HIDDEN = {"script", "style", "textarea", "template"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Text(HTMLParser):
    """A page's text without scripts, styles, form inputs and elements of class ``raw`` (a value shown
    raw on purpose: a config's raw value in the column beside its meaning, a port, an input example)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, bool]] = []  # (tag, hidden) of each open element
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag in VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        self.open.append((tag, tag in HIDDEN or "raw" in classes))

    def handle_endtag(self, tag) -> None:
        for at in range(len(self.open) - 1, -1, -1):  # close up to the matching start (HTML omits some ends)
            if self.open[at][0] == tag:
                del self.open[at:]
                return

    def handle_data(self, data) -> None:
        if not any(hidden for _, hidden in self.open):
            self.parts.append(data)


def page_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(p.split()) for p in parser.parts if p.strip())


def _found(text: str) -> list[re.Match]:
    found = list(RAW_NUMBER.finditer(text))
    found += [m for m in MILLIS.finditer(text) if int(m.group(1).replace(",", "")) >= 1000]
    found += [m for m in BYTES.finditer(text) if int(m.group(1).replace(",", "")) >= 1024]
    return found + list(DECIMAL_NAMED.finditer(text))


def raw_values(text: str) -> list[str]:
    """Every unformatted value in ``text``, as it reads there."""
    return [m.group(0) for m in _found(text)]


def in_context(text: str) -> list[str]:
    """The unformatted values with a little of the text around each."""
    return [text[max(0, m.start() - 40) : m.end() + 20] for m in _found(text)]


def test_it_finds_raw_values_in_text():
    """The scan itself: what it must catch and what it must let through."""
    assert raw_values(
        "retention 604800000 · 9223372036854775807 · lag 510696 · 1500 ms · 2048 bytes · 4.0 MB · 3 GB"
    ) == ["604800000", "9223372036854775807", "510696", "1500 ms", "2048 bytes", "0 MB", "3 GB"]
    assert (
        raw_values(
            "lag 510,696 · 7 d · 1.0 GiB · 500 ms · 512 B · 127.0.0.1:39092 · /c/x/12345/ · v3.9.0 · "
            "id 2fd0a1b2c3d4e5f60718 · #12 · 2026-11-27 09:39:22 · 79986279-orders · topic 12345678_x · "
            "8004786f-orders 80d1f23 · 1234567abc"
        )
        == []
    )


def test_it_reads_a_page_as_its_text():
    html = (
        '<p>lag <span class="hv" title="510696">510,696</span><script>var x = 123456;</script></p>'
        '<table><tr><td class="mono raw">604800000</td><td>7 d<td>x</td></tr></table>'
        "<textarea>99999</textarea><br><style>p { width: 10000px }</style><p>end &amp; 12,345</p>"
    )
    assert page_text(html) == "lag 510,696 7 d x end & 12,345"


@pytest.fixture
def tour(kafka_cluster, personas, sandbox, telemetry_lake):  # telemetry_lake: its own caches too
    with page_tour.toured(sandbox, kafka_cluster, personas, telemetry_lake) as tour:
        yield tour


def test_it_shows_no_raw_value_on_any_page(client, tour):
    client.force_login(tour.people["admin"])
    statuses, raw = {}, {}
    for label, path in tour.pages():
        response = client.get(path)
        statuses[label] = response.status_code
        found = in_context(page_text(response.content.decode()))
        if found:
            raw[label] = found
    assert statuses == dict.fromkeys(statuses, 200)
    assert raw == {}, "\n".join(f"{label}: {values}" for label, values in raw.items())
