"""Search across clusters: topics, consumer groups and ACL principals by name, in every cluster the
caller may see, from what the console already holds (never a read of Kafka per cluster).

- Topics and groups: the names in each cluster's latest telemetry snapshot (``telemetry.names``:
  one Parquet column per file, cached until a newer file). A topic list the console's metadata
  snapshot holds in this process (``topics.cache.peek``) is used instead when it is newer.
- Principals: the cluster's summary (``ClusterSummary.principals``), written when it was taken; only
  in clusters where the caller may open the ACL page (``acl.manage``).

Matching is RE2 through Arrow's compute functions (linear time; a substring ignores case, a regex is
searched for anywhere in the name, as on the topic list). A regex is first validated as every user
pattern is (``console.patterns``): ``PatternError`` says why RE2 refuses it. Each cluster and kind
shows at most ``FLEET_SEARCH_CAP`` names and counts the rest; clusters left once
``FLEET_SEARCH_BUDGET_S`` has passed are named as not searched.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc
from django.conf import settings

from console import access, patterns
from console.crypto import SecretUnreadable
from console.models import Cluster, ClusterSummary
from console.telemetry import names as snapshot_names
from console.topics import cache as metadata_cache

TOPIC, GROUP, PRINCIPAL = "topic", "group", "principal"
KINDS = (TOPIC, GROUP, PRINCIPAL)
_DATASETS = {TOPIC: "partitions", GROUP: "groups"}
NO_SNAPSHOT = "no snapshot yet"


@dataclass(frozen=True)
class Hit:
    """One name found (a principal's ``acls``: how many ACLs name it)."""

    name: str
    acls: int | None = None


@dataclass(frozen=True)
class Found:
    """One kind in one cluster: the first names found, how many more, and what they were read from.

    ``missing`` says why nothing could be searched ("no snapshot yet", an unreadable file)."""

    kind: str
    hits: tuple[Hit, ...] = ()
    more: int = 0
    as_of: datetime | None = None
    source: str = ""  # "snapshot" (the lake), "metadata" (the console's live snapshot), "summary"
    missing: str = ""

    @property
    def total(self) -> int:
        return len(self.hits) + self.more


@dataclass(frozen=True)
class ClusterFound:
    """What one cluster holds for the query, by kind (in KINDS order)."""

    cluster: str
    kinds: tuple[Found, ...]

    @property
    def total(self) -> int:
        return sum(f.total for f in self.kinds)

    @property
    def shown(self) -> bool:
        """Whether a result lists it: something found, or something it could not search."""
        return any(f.total or f.missing for f in self.kinds)


@dataclass(frozen=True)
class SearchResult:
    """The clusters with something to show, by name; ``searched``: how many clusters were searched;
    ``not_searched``: clusters left when the time budget ran out."""

    query: str
    regex: bool
    kinds: tuple[str, ...]
    clusters: tuple[ClusterFound, ...]
    searched: int
    not_searched: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(c.total for c in self.clusters)


def _matcher(query: str, regex: bool):
    """Arrow's mask function for the query (RE2 both ways), the pattern validated first."""
    if regex:
        patterns.compile_pattern(query)  # the console's rules and message for a user's pattern

        def match(names: pa.Array) -> pa.Array:
            try:
                return pc.match_substring_regex(names, pattern=query)
            except pa.ArrowInvalid as exc:  # Arrow's RE2 refused what the binding accepted
                raise patterns.PatternError(str(exc)) from None

        return match
    return lambda names: pc.match_substring(names, pattern=query, ignore_case=True)


def _capped(kind: str, matched: list[Hit], total: int, cap: int, **facts) -> Found:
    return Found(kind, tuple(matched[:cap]), max(0, total - min(cap, len(matched))), **facts)


def _names_found(kind: str, names: pa.Array, match, cap: int, **facts) -> Found:
    hits = names.filter(match(names)) if len(names) else names
    shown = [Hit(n) for n in hits.slice(0, cap).to_pylist()]
    return _capped(kind, shown, len(hits), cap, **facts)


def _live_topics(cluster: Cluster, newer_than: datetime | None):
    """The console's in-process metadata snapshot of the cluster when it is newer than the lake's
    (never read for the search: only a snapshot a page already fetched)."""
    try:
        snap = metadata_cache.peek(cluster)
    except SecretUnreadable:  # its connection cannot be built here; the lake still answers
        return None
    if snap is None or (newer_than is not None and snap.fetched_at <= newer_than.timestamp()):
        return None
    return snap


def _topics(cluster: Cluster, match, cap: int) -> Found:
    lake = snapshot_names.latest_names(cluster.name, _DATASETS[TOPIC])
    live = _live_topics(cluster, lake.ts)
    if live is not None:
        as_of = datetime.fromtimestamp(live.fetched_at, UTC)
        names = pa.array(live.names, pa.string())
        return _names_found(TOPIC, names, match, cap, as_of=as_of, source="metadata")
    return _from_lake(TOPIC, lake, match, cap)


def _from_lake(kind: str, lake, match, cap: int) -> Found:
    if lake.error:
        return Found(kind, missing=lake.error)
    if not lake.has_snapshot:
        return Found(kind, missing=NO_SNAPSHOT)
    return _names_found(kind, lake.names, match, cap, as_of=lake.ts, source="snapshot")


def _groups(cluster: Cluster, match, cap: int) -> Found:
    return _from_lake(GROUP, snapshot_names.latest_names(cluster.name, _DATASETS[GROUP]), match, cap)


def _principals(summary: ClusterSummary | None, match, cap: int) -> Found:
    if summary is None:
        return Found(PRINCIPAL, missing=NO_SNAPSHOT)
    rows = [(str(p), int(n)) for p, n in summary.principals or []]
    names = pa.array([p for p, _ in rows], pa.string())
    mask = match(names).to_pylist() if rows else []
    hits = [Hit(p, n) for (p, n), keep in zip(rows, mask, strict=True) if keep]
    hits.sort(key=lambda h: h.name)
    return _capped(PRINCIPAL, hits, len(hits), cap, as_of=summary.taken_at, source="summary")


def _one_cluster(actor, cluster: Cluster, kinds, summaries: dict, match, cap: int) -> ClusterFound:
    found = []
    for kind in kinds:
        if kind == TOPIC:
            found.append(_topics(cluster, match, cap))
        elif kind == GROUP:
            found.append(_groups(cluster, match, cap))
        elif access.can(actor, cluster, access.MANAGE_ACLS):  # who may open the ACL page
            found.append(_principals(summaries.get(cluster.pk), match, cap))
    return ClusterFound(cluster.name, tuple(found))


def search(actor, query: str, *, regex: bool = False, kinds: Iterable[str] = KINDS) -> SearchResult:
    """Names matching ``query`` in every cluster ``actor`` may see, grouped by cluster.

    Raises ``patterns.PatternError`` for a regex RE2 refuses; an empty query finds nothing."""
    started = time.monotonic()
    wanted = tuple(k for k in KINDS if k in set(kinds))
    match = _matcher(query, regex)
    if not query or not wanted:
        return SearchResult(query, regex, wanted, (), 0)
    cap = max(1, int(settings.FLEET_SEARCH_CAP))
    deadline = started + float(settings.FLEET_SEARCH_BUDGET_S)
    clusters = list(access.visible_clusters(actor).order_by("name"))
    summaries = {}
    if PRINCIPAL in wanted:
        summaries = {s.cluster_id: s for s in ClusterSummary.objects.filter(cluster__in=clusters)}
    shown, searched, left = [], 0, []
    for cluster in clusters:
        if searched and time.monotonic() > deadline:  # the first is always searched
            left.append(cluster.name)
            continue
        result = _one_cluster(actor, cluster, wanted, summaries, match, cap)
        searched += 1
        if result.shown:
            shown.append(result)
    elapsed = time.monotonic() - started
    return SearchResult(query, regex, wanted, tuple(shown), searched, tuple(left), elapsed)
