"""The broker page's query string (topic search, filter, sort, page) and broker ids from URLs (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

DEFAULT_PER_PAGE = 100
MAX_PER_PAGE = 1000
FILTERS = {
    "": "all",
    "leader": "leader here",
    "follower": "follower here",
    "out-of-isr": "not in the ISR",
    "under-replicated": "under-replicated",
    "throttled": "throttled",
}
SORTS = {"topic": "topic, partition", "size": "size (largest first)"}
_BROKER_ID = re.compile(r"\d{1,10}")


def parse_broker_id(text: str) -> int | None:
    """A broker id from a URL (digits only), or None."""
    text = str(text)
    return int(text) if _BROKER_ID.fullmatch(text) else None


def _int(value, default: int, low: int, high: int) -> int:
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        return default
    return max(low, min(high, n))


@dataclass(frozen=True)
class PartitionQuery:
    """The broker page's query string: topic search, filter, sort, page (bad values fall back)."""

    topic: str = ""
    only: str = ""
    sort: str = "topic"
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE

    @classmethod
    def from_params(cls, params: Mapping) -> PartitionQuery:
        only = str(params.get("only") or "")
        sort = str(params.get("sort") or "topic")
        return cls(
            topic=str(params.get("q") or "").strip()[:500],
            only=only if only in FILTERS else "",
            sort=sort if sort in SORTS else "topic",
            page=_int(params.get("page"), 1, 1, 10**9),
            per_page=_int(params.get("per_page"), DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
        )

    def querystring(self, **changes) -> str:
        """This query as a query string (defaults left out), with ``changes`` applied."""
        values = {
            "q": self.topic,
            "only": self.only,
            "sort": "" if self.sort == "topic" else self.sort,
            "per_page": "" if self.per_page == DEFAULT_PER_PAGE else self.per_page,
            "page": "" if self.page == 1 else self.page,
        }
        values.update(changes)
        return urlencode({k: v for k, v in values.items() if v not in ("", None)})

    @property
    def without_page(self) -> str:
        """The query string of this query on any page (the pager adds ``page``)."""
        return self.querystring(page="")

    @property
    def custom_per_page(self) -> bool:
        return self.per_page != DEFAULT_PER_PAGE
