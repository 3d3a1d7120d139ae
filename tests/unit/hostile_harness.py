"""The harness of the hostile-input tests: post a drawn form, then check nothing was half-applied.

Every case: snapshot the sandbox's Kafka state (topics with partitions and configs, ACLs, broker
configs, controller log levels) and the console's rows (operations, requests, role bindings,
clusters, policies, rules, reassignments), post as the admin, and require a status below 500.
A rejected post (4xx, a form with errors, an error message or an ``error`` on the page) must
leave both snapshots as they were; an accepted one runs the route's completeness check. Then
Kafka is put back as it was, so every case starts from the same cluster.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, quote_plus

from django.contrib.messages import ERROR, get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.forms import BaseForm
from django.test.utils import ContextList
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.models import Cluster, Operation, RoleBinding
from console.models.reassignment import Reassignment, ThrottleEntry
from console.models.requests import AutoApproveRule, ChangeRequest
from console.models.topics import TopicPolicy
from tests.unit.hostile_values import Upload

CASES: dict[str, int] = {}  # route -> cases run in this session


@dataclass
class Env:
    client: Any
    sandbox: Any
    cluster: Cluster
    other: Cluster  # a second registered cluster for the registry forms (settings, remove)
    admin: Any
    personas: dict
    topics: dict[str, str] = field(default_factory=dict)  # role -> topic name
    ids: dict[str, int] = field(default_factory=dict)  # request, reassignment, binding, node, event ...
    ctl: Cluster | None = None  # the sandbox's controllers registered as a cluster (KIP-919)
    strategies: tuple = field(default=(), repr=False)
    # Kafka's state as the last case left it (its "after", nothing restored, no upkeep run since): the
    # next case's "before" without walking every topic of the shared sandbox a second time.
    kafka_now: dict | None = field(default=None, repr=False)


@dataclass
class Route:
    """A form-posting route: its URL kwargs, the hostile form, how many cases, an accepted-case check."""

    name: str
    examples: int
    payload: Callable[[Env], st.SearchStrategy]
    kwargs: Callable[[Env], st.SearchStrategy] = lambda env: st.just({"name": env.cluster.name})
    method: str = "post"
    check: Callable[..., None] | None = None
    after: Callable[[Env], None] | None = None  # put back what an accepted case changed in the DB


# -- discovery -------------------------------------------------------------------------------------


def _methods(view) -> set[str] | None:
    """The HTTP methods a view function allows (from require_http_methods), None when any."""
    if hasattr(view, "view_class"):
        cls = view.view_class
        return {m.upper() for m in cls.http_method_names if hasattr(cls, m)} - {"OPTIONS"}
    f = view
    while f is not None:
        if "request_method_list" in getattr(getattr(f, "__code__", None), "co_freevars", ()):
            cell = f.__closure__[f.__code__.co_freevars.index("request_method_list")]
            return set(cell.cell_contents)
        f = getattr(f, "__wrapped__", None)
    return None


def posting_routes() -> set[str]:
    """Every named route (Django's admin aside) whose view accepts POST."""
    found: set[str] = set()

    def walk(patterns):
        for p in patterns:
            if isinstance(p, URLResolver):
                if not p.namespace:
                    walk(p.url_patterns)
            elif isinstance(p, URLPattern) and p.name:
                methods = _methods(p.callback)
                if methods is None or "POST" in methods:
                    found.add(p.name)

    walk(get_resolver().url_patterns)
    return found


# -- snapshots -------------------------------------------------------------------------------------


def kafka_state(sandbox) -> dict:
    """Every topic (partitions' replicas, adding, removing, log starts; configs), ACLs, broker configs,
    log levels, client quotas, SCRAM credentials, feature levels and the KRaft voter/broker sets.

    The shared sandbox holds every topic the session's earlier tests left (thousands in a whole run),
    so this walk is most of a case's cost: list comprehensions, not generators, keep it cheap."""
    s = sandbox.state
    with s.lock:
        return {
            "topics": {
                name: (
                    tuple([(tuple(p.replicas), tuple(p.adding), tuple(p.removing)) for p in t.partitions]),
                    t.configs.copy(),
                )
                for name, t in s.topics.items()
            },
            "acls": list(s.acls),
            "broker_configs": {k: dict(v) for k, v in s.broker_configs.items()},
            "logger_levels": {k: dict(v) for k, v in s.logger_levels.items()},
            "quotas": {e: dict(q) for e, q in s.client_quotas.items()},
            "scram": sorted(s.scram_credentials.items()),  # salts and keys: a rotation shows too
            "starts": {name: [p.log_start_offset for p in t.partitions] for name, t in s.topics.items()},
            "kraft": (dict(s.features), sorted(s.removed_voters), sorted(s.unregistered_brokers)),
        }


DB_MODELS = (
    Operation,
    ChangeRequest,
    RoleBinding,
    Cluster,
    TopicPolicy,
    AutoApproveRule,
    Reassignment,
    ThrottleEntry,
)


def track_db() -> None:
    """On SQLite, triggers count the writes to the tracked tables (one cheap read per snapshot)."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE IF NOT EXISTS hostile_writes (tbl TEXT PRIMARY KEY, n INTEGER)")
        for model in DB_MODELS:
            table = model._meta.db_table
            cursor.execute("INSERT OR IGNORE INTO hostile_writes VALUES (%s, 0)", [table])
            for event in ("INSERT", "UPDATE", "DELETE"):
                cursor.execute(
                    f"CREATE TEMP TRIGGER IF NOT EXISTS hostile_{table}_{event} AFTER {event} ON {table} "
                    f"BEGIN UPDATE hostile_writes SET n = n + 1 WHERE tbl = '{table}'; END"
                )


def db_state() -> dict:
    """Writes per tracked table (SQLite), else every tracked row."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT tbl, n FROM hostile_writes")
            return dict(cursor.fetchall())
    return {m.__name__: list(m.objects.order_by("pk").values_list()) for m in DB_MODELS}


def _diff(before: dict, after: dict) -> str:
    out = []
    for key in before:
        if before[key] != after[key]:
            b, a = before[key], after[key]
            if isinstance(b, dict):
                changed = {k for k in set(b) | set(a) if b.get(k) != a.get(k)}
                out.append(f"{key}: {sorted(map(str, changed))[:10]}")
            else:
                out.append(f"{key}: {str(b)[:300]} -> {str(a)[:300]}")
    return "; ".join(out)


def restore_kafka(env: Env, before: dict, now: dict | None = None) -> bool:
    """Put the sandbox back as the snapshot was (only what differs is touched); ``now``: the state as
    the caller has just read it. True when something had to be put back."""
    from console.topics import cache

    s = env.sandbox.state
    if now is None:
        now = kafka_state(env.sandbox)
    if now == before:
        return False
    with s.lock:
        for name in set(now["topics"]) - set(before["topics"]):
            s.remove_topic(name)
        for name, (parts, configs) in before["topics"].items():
            if now["topics"].get(name) == (parts, configs):
                continue
            if name in now["topics"] and now["topics"][name][0] == parts:
                s.topics[name].configs = dict(configs)
                s.record()
                continue
            if name in s.topics:
                s.remove_topic(name)
            env.sandbox.create_topic(name, configs=configs, assignment=[list(r) for r, _, _ in parts])
        s.acls = list(before["acls"])
        s.broker_configs = copy.deepcopy(before["broker_configs"])
        s.logger_levels = copy.deepcopy(before["logger_levels"])
        s.client_quotas = {e: dict(q) for e, q in before["quotas"].items()}
        s.scram_credentials.replace(before["scram"])  # whatever names the cases made (numbers too)
        for name, starts in before["starts"].items():  # a purge moved them: the records come back
            topic = s.topics.get(name)
            if topic is not None and len(topic.partitions) == len(starts):
                for p, start in zip(topic.partitions, starts, strict=True):
                    p.log_start_offset = start
        features, removed, unregistered = before["kraft"]
        s.features, s.removed_voters, s.unregistered_brokers = dict(features), set(removed), set(unregistered)
        s.record()
    cache.invalidate(env.cluster)
    return True


# -- posting ---------------------------------------------------------------------------------------


def _bytes(value: object) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogatepass")


def send(client, method: str, url: str, pairs: list[tuple[str, object]], htmx: bool = False):
    """Post (or get) the pairs; ``htmx``: as the page's own htmx requests do (fragment answers)."""
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    if any(isinstance(v, Upload) for _, v in pairs):
        data: dict[str, list] = {}
        for k, v in pairs:
            if isinstance(v, Upload):
                v = SimpleUploadedFile(v.name, v.content, v.content_type)
            else:
                v = _bytes(v)
            data.setdefault(_bytes(k).decode("utf-8", "replace"), []).append(v)
        return client.post(url, data, **headers)
    body = "&".join(f"{quote_plus(_bytes(k))}={quote_plus(_bytes(v))}" for k, v in pairs)
    if method == "get":
        response = client.get(f"{url}?{body}" if body else url, **headers)
        if response.streaming:
            b"".join(response.streaming_content)  # an export's rows are written while streaming
        return response
    return client.generic("POST", url, body, content_type="application/x-www-form-urlencoded", **headers)


_SLUG = re.compile(r"[A-Za-z0-9_-]+")


def url_for(name: str, kwargs: dict) -> str:
    """The route's URL; str kwargs that the converter would refuse are quoted into the path anyway."""
    safe = {
        k: (v if not isinstance(v, str) or _SLUG.fullmatch(v) else "PLACEHOLDER" + k)
        for k, v in kwargs.items()
    }
    url = reverse(name, kwargs=safe)
    for k, v in kwargs.items():
        if safe[k] != v:
            url = url.replace("PLACEHOLDER" + k, quote(_bytes(v), safe=""))
    return url


def rejected(response) -> bool:
    if response.status_code >= 400:
        return True
    if any(m.level >= ERROR for m in get_messages(response.wsgi_request)):
        return True
    contexts = response.context if isinstance(response.context, ContextList) else [response.context]
    for context in contexts:
        for key, value in (context.flatten() if context is not None else {}).items():
            if key == "error" and value:
                return True
            if isinstance(value, BaseForm) and value.is_bound and value.errors:
                return True
    return False


def run_case(env: Env, route: Route, kwargs: dict, pairs: list, htmx: bool = False) -> None:
    url = url_for(route.name, kwargs)
    # The last case's "after" is this one's "before" when nothing ran on Kafka since: it changed
    # nothing (so nothing was put back) and the route has no upkeep (``after``). Between two cases only
    # hypothesis draws; the sandbox's clock is stopped (``frozen``).
    before_kafka, env.kafka_now = env.kafka_now, None
    if before_kafka is None:
        before_kafka = kafka_state(env.sandbox)
    before_db = db_state()
    where = f"{route.method.upper()} {url[:200]} {'(htmx) ' if htmx else ''}{str(pairs)[:1500]}"
    try:
        response = send(env.client, route.method, url, pairs, htmx)
    except Exception as exc:  # noqa: BLE001 - any escaping exception is the finding
        raise AssertionError(f"exception escaped: {where}: {exc!r}") from exc
    env.client.cookies.pop("messages", None)
    assert response.status_code < 500, (response.status_code, where)
    after_kafka, after_db = kafka_state(env.sandbox), db_state()
    try:
        if rejected(response):
            assert after_kafka == before_kafka, (
                f"rejected but Kafka changed ({_diff(before_kafka, after_kafka)}): {where}"
            )
            assert after_db == before_db, (
                f"rejected but the DB changed ({_diff(before_db, after_db)}): {where}"
            )
        elif route.check is not None:
            route.check(env, (before_kafka, before_db), (after_kafka, after_db), response, where)
    finally:
        # the checks only read: Kafka is still as ``after_kafka`` saw it
        restored = restore_kafka(env, before_kafka, after_kafka)
        if route.after is not None:
            route.after(env)
    if not restored and route.after is None:
        env.kafka_now = after_kafka
    CASES[route.name] = CASES.get(route.name, 0) + 1


def make_test(route: Route):
    """A hypothesis test of one route (``route.examples`` cases, derandomized).

    HOSTILE_SCALE (default 1) scales the counts for a quick local run; CI runs them all.
    """
    examples = max(1, int(route.examples * float(os.environ.get("HOSTILE_SCALE", "1"))))

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )
    @given(data=st.data())
    def cases(env: Env, data) -> None:
        kwargs = data.draw(env.strategies[0], label="url")
        pairs = data.draw(env.strategies[1], label="form")
        run_case(env, route, kwargs, pairs, data.draw(st.booleans(), label="htmx"))

    def test(hostile_env) -> None:
        track_db()
        hostile_env.strategies = (route.kwargs(hostile_env), route.payload(hostile_env))  # built once
        start = CASES.get(route.name, 0)
        cases(hostile_env)
        ran = CASES.get(route.name, 0) - start
        assert ran >= examples, f"{route.name}: only {ran} of {examples} cases ran"

    test.__name__ = f"test_hostile_{route.name}"
    return test
