"""The overview's figure cards as the tests read them."""

from __future__ import annotations

import re

_CARD = '<div class="label">{label}</div><div class="value">(.*?)</div>'


def card(body: str, label: str) -> str:
    """A card's raw value: the title of its human value (``count`` writes "10,240" with the raw
    number in the title once a figure passes 10,000, as a whole suite's sandbox does), else its text."""
    found = re.search(_CARD.format(label=re.escape(label)), body, re.S)
    assert found, label
    value = found.group(1)
    raw = re.search(r'title="([^"]*)"', value)
    return raw.group(1) if raw else re.sub(r"<[^>]+>", "", value).strip()
