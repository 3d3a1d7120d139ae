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

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from django.conf import settings

from console import access, patterns
from console.crypto import SecretUnreadable
from console.models import Cluster, ClusterSummary
from console.telemetry import names as snapshot_names
from console.topics import cache as metadata_cache
from pipeline import config as pipeline_config

TOPIC, GROUP, PRINCIPAL = "topic", "group", "principal"
KINDS = (TOPIC, GROUP, PRINCIPAL)
_DATASETS = {TOPIC: "partitions", GROUP: "groups"}  # the lake dataset holding each kind's names
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

        def match(names: pa.Array, folded: pa.Array) -> pa.Array:
            try:
                return pc.match_substring_regex(names, pattern=query)
            except pa.ArrowInvalid as exc:  # Arrow's RE2 refused what the binding accepted
                raise patterns.PatternError(str(exc)) from None

        return match
    needle = query.lower()  # as the names were folded (telemetry.names.fold)
    return lambda names, folded: pc.match_substring(folded, pattern=needle)


@dataclass(frozen=True)
class _Scope:
    """One search's fixed inputs: the mask function, the cap, the lake."""

    match: Callable[[pa.Array, pa.Array], pa.Array]  # (names, their folded twin) -> mask
    cap: int
    lake: Path


def _found(
    kind: str, names: pa.Array, folded: pa.Array, scope: _Scope, counts: list[int] | None = None, **facts
) -> Found:
    """The first ``cap`` names the mask keeps (with their ACL counts), and how many more."""
    if not len(names):
        return Found(kind, **facts)
    kept = pc.indices_nonzero(scope.match(names, folded))
    first = kept.slice(0, scope.cap)
    shown = names.take(first).to_pylist()
    first = first.to_pylist()
    hits = tuple(
        Hit(n, counts[i]) if counts is not None else Hit(n) for n, i in zip(shown, first, strict=True)
    )
    return Found(kind, hits, len(kept) - len(hits), **facts)


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


def _from_lake(kind: str, cluster: Cluster, scope: _Scope) -> Found:
    lake = snapshot_names.latest_names(cluster.name, _DATASETS[kind], scope.lake)
    if kind == TOPIC and (live := _live_topics(cluster, lake.ts)) is not None:
        as_of = datetime.fromtimestamp(live.fetched_at, UTC)
        names = pa.array(live.names, pa.string())
        return _found(kind, names, snapshot_names.fold(names), scope, as_of=as_of, source="metadata")
    if lake.error:
        return Found(kind, missing=lake.error)
    if not lake.has_snapshot:
        return Found(kind, missing=NO_SNAPSHOT)
    return _found(kind, lake.names, lake.folded, scope, as_of=lake.ts, source="snapshot")


@dataclass(frozen=True)
class _Principals:
    """A summary's principals, sorted, as Arrow arrays, with their ACL counts."""

    taken_at: datetime
    names: pa.Array
    folded: pa.Array
    counts: list[int]


_principal_cache: OrderedDict[int, _Principals] = OrderedDict()  # by cluster id
_principal_lock = threading.Lock()


def _principal_lists(clusters: list[Cluster]) -> dict[int, _Principals]:
    """Each cluster's summary principals, decoded again only when its summary was taken anew."""
    taken = dict(ClusterSummary.objects.filter(cluster__in=clusters).values_list("cluster_id", "taken_at"))
    with _principal_lock:
        known = {c: v for c, v in _principal_cache.items() if c in taken and v.taken_at == taken[c]}
    stale = [c for c in taken if c not in known]
    rows = ClusterSummary.objects.filter(cluster_id__in=stale).values_list(
        "cluster_id", "taken_at", "principals"
    )
    for cluster_id, taken_at, principals in rows:
        pairs = sorted((str(p), int(n)) for p, n in principals or [])
        names = pa.array([p for p, _ in pairs], pa.string())
        known[cluster_id] = _Principals(taken_at, names, snapshot_names.fold(names), [n for _, n in pairs])
    with _principal_lock:
        for cluster_id in stale:
            if cluster_id in known:
                _principal_cache[cluster_id] = known[cluster_id]
                _principal_cache.move_to_end(cluster_id)
        while len(_principal_cache) > max(1, int(settings.FLEET_SEARCH_CACHED_FILES)):
            _principal_cache.popitem(last=False)
    return known


def _principals(entry: _Principals | None, scope: _Scope) -> Found:
    if entry is None:
        return Found(PRINCIPAL, missing=NO_SNAPSHOT)
    return _found(
        PRINCIPAL, entry.names, entry.folded, scope, entry.counts, as_of=entry.taken_at, source="summary"
    )


def _one_cluster(actor, cluster: Cluster, kinds, principals: dict, scope: _Scope) -> ClusterFound:
    found = []
    for kind in kinds:
        if kind != PRINCIPAL:
            found.append(_from_lake(kind, cluster, scope))
        elif access.can(actor, cluster, access.MANAGE_ACLS):  # who may open the ACL page
            found.append(_principals(principals.get(cluster.pk), scope))
    return ClusterFound(cluster.name, tuple(found))


def search(actor, query: str, *, regex: bool = False, kinds: Iterable[str] = KINDS) -> SearchResult:
    """Names matching ``query`` in every cluster ``actor`` may see, grouped by cluster.

    Raises ``patterns.PatternError`` for a regex RE2 refuses; an empty query finds nothing."""
    started = time.monotonic()
    wanted = tuple(k for k in KINDS if k in set(kinds))
    match = _matcher(query, regex)
    if not query or not wanted:
        return SearchResult(query, regex, wanted, (), 0)
    scope = _Scope(match, max(1, int(settings.FLEET_SEARCH_CAP)), Path(pipeline_config.load().lake_dir))
    deadline = started + float(settings.FLEET_SEARCH_BUDGET_S)
    clusters = list(access.visible_clusters(actor).order_by("name"))
    principals = _principal_lists(clusters) if PRINCIPAL in wanted else {}
    shown, searched, left = [], 0, []
    for cluster in clusters:
        if searched and time.monotonic() > deadline:  # the first is always searched
            left.append(cluster.name)
            continue
        result = _one_cluster(actor, cluster, wanted, principals, scope)
        searched += 1
        if result.shown:
            shown.append(result)
    elapsed = time.monotonic() - started
    return SearchResult(query, regex, wanted, tuple(shown), searched, tuple(left), elapsed)


def clear_cache() -> None:
    """Forget the decoded principals (tests; the names' cache is ``telemetry.names``)."""
    with _principal_lock:
        _principal_cache.clear()
