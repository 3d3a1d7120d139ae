"""Shared fixtures: the sandbox cluster (once per run), fixed personas, and a registered cluster."""

from __future__ import annotations

import os
import time

import pytest

from console.changes import actions as changes
from sandbox.pki import CA, make_ca
from tests import pg
from tests.pg import postgres_server  # noqa: F401  (the PostgreSQL pass's server, tests/pg.py)

# The API's answers per route, held against the OpenAPI schema (tests/unit/test_api_schema_codes.py).
pytest_plugins = ["tests.api_codes"]

PERSONAS = ("admin", "operator", "requester", "auditor", "viewer", "outsider")


@pytest.fixture(scope="session")
def sandbox():
    """One sandbox Kafka cluster for the whole run (3 brokers, 3 controllers, ephemeral ports)."""
    from console.kafka import close_all
    from sandbox.testing import running_sandbox

    with running_sandbox(brokers=3, controllers=3, port=0) as cluster:
        yield cluster
        # Clients cached by the gateway would otherwise keep reconnecting to the stopped nodes.
        close_all()


@pytest.fixture(scope="session")
def spark():
    """One local Spark session (one core, two shuffle partitions) for the run's pipeline tests."""
    from pipeline.config import load
    from pipeline.spark import build_session

    session = build_session(load(), master="local[1]")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def ca() -> CA:
    """A test CA, made when a module first asks for it (no key material is committed)."""
    return make_ca("Sandbox Test CA")


@pytest.fixture(scope="module")
def server_pair(ca: CA) -> tuple[str, str]:
    """The brokers' certificate and key, issued by ``ca`` for localhost and 127.0.0.1."""
    return ca.issue("localhost", sans=("localhost", "127.0.0.1"))


@pytest.fixture
def frozen(sandbox):
    """Stop the sandbox's own clock: the test moves it with advance()."""
    speed = sandbox.speed
    sandbox.speed = 0
    yield sandbox
    sandbox.speed = speed


def hold(cluster, admin, kinds, *, roles=(), approvers: int = 1):
    """Change control on for ``cluster``, set by ``admin``: ``kinds`` wait for ``approvers`` approvals when
    members of ``roles`` ask (everyone's when no role is named)."""
    return changes.set_policy(
        actor=admin, cluster=cluster, enabled=True, kinds=list(kinds), roles=list(roles), approvers=approvers
    )


def throttle_configs_on(gw, topic: str, brokers=(1, 2, 3)) -> set[tuple[str, str, str]]:
    """The replication-throttle configs set on Kafka for the topic and the brokers: (type, name, config)."""
    from console.kafka import ConfigResource
    from console.reassignment import throttles

    resources = [ConfigResource("TOPIC", topic)] + [ConfigResource("BROKER", str(b)) for b in brokers]
    # A broker just thawed or restarted may answer its first request late (a test cluster's 1 s
    # request timeout on a loaded machine: CI ci56d): an error for a resource is asked again, for
    # up to 15 s, and is a failure after that. What is set is never retried away.
    deadline = time.monotonic() + 15
    while True:
        described = gw.describe_configs(resources)
        failed = {res: v for res, v in described.items() if not hasattr(v, "get")}
        if not failed:
            break
        assert time.monotonic() < deadline, f"describe_configs kept failing: {failed}"
        time.sleep(0.2)
    found = set()
    for res, entries in described.items():
        for name in throttles.REPLICA_CONFIGS + throttles.RATE_CONFIGS:
            entry = entries.get(name)
            if entry is not None and entry.source in ("DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG"):
                found.add((res.type, res.name, name))
    return found


@pytest.fixture
def kafka_cluster(db, sandbox):
    """The sandbox registered in the console, as the console's tests see it."""
    from console.models import Cluster

    return Cluster.objects.create(
        name="sandbox", bootstrap_servers=sandbox.bootstrap_servers, request_timeout_s=5
    )


@pytest.fixture
def operator2(kafka_cluster, django_user_model):
    """A second operator of the sandbox cluster (password "pw-operator2"): the other pair of eyes."""
    from console.models import Role, RoleBinding

    second = django_user_model.objects.create_user(username="operator2", password="pw-operator2")
    RoleBinding.objects.create(cluster=kafka_cluster, user=second, role=Role.OPERATOR)
    return second


@pytest.fixture
def fresh_metadata_cache():
    """The process's topic-metadata cache starts and ends the test empty (another test's snapshot of
    the shared sandbox never answers for this one)."""
    from console.topics import cache as metadata_cache

    metadata_cache.clear()
    yield
    metadata_cache.clear()


@pytest.fixture
def telemetry_lake(tmp_path, monkeypatch):
    """A Parquet lake of the test's own (TELEMETRY_LAKE_DIR, a 300 s snapshot interval), with the
    process's caches of what was read from snapshot files (topic sizes, search names, lag trends) and
    of topic metadata empty at the start and the end."""
    from console.groups import trend
    from console.telemetry import names, sizes
    from console.topics import cache as metadata_cache

    def clear() -> None:
        metadata_cache.clear()
        for cache in (sizes, names, trend):
            cache.clear_cache()

    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    monkeypatch.setenv("TELEMETRY_INTERVAL_S", "300")
    clear()
    yield tmp_path / "lake"
    clear()


@pytest.fixture(scope="module")
def search_other_sandbox():
    """Cluster B's own sandbox for the cross-cluster search tests (unit, API, browser)."""
    from tests.unit.fleet_search_world import second_sandbox

    yield from second_sandbox()


@pytest.fixture
def search_world(kafka_cluster, personas, sandbox, search_other_sandbox, tmp_path, monkeypatch):
    """Two clusters snapshotted into a tmp lake, with summaries (tests/unit/fleet_search_world.py)."""
    from tests.unit.fleet_search_world import make_world

    yield from make_world(kafka_cluster, sandbox, search_other_sandbox, tmp_path, monkeypatch)


@pytest.fixture
def offline_cluster(db):
    """A registered cluster nobody listens on (port 1 on loopback refuses at once)."""
    from console.models import Cluster

    return Cluster.objects.create(name="offline", bootstrap_servers="127.0.0.1:1", request_timeout_s=2)


def make_personas(cluster):
    """The fixed personas of CONVENTIONS.md, bound on the given cluster."""
    from django.contrib.auth import get_user_model

    from console.models import Role, RoleBinding

    users = get_user_model()
    people = {}
    for name in PERSONAS:
        if name == "admin":
            user = users.objects.create_superuser(username=name, password="pw-" + name)
        else:
            user = users.objects.create_user(username=name, password="pw-" + name)
        people[name] = user
    for name, role in (("operator", Role.OPERATOR), ("auditor", Role.AUDITOR), ("viewer", Role.VIEWER)):
        RoleBinding.objects.create(cluster=cluster, user=people[name], role=role)
    RoleBinding.objects.create(
        cluster=cluster,
        user=people["requester"],
        role=Role.REQUESTER,
        namespaces=["team-a."],
        principals=["User:team-a"],
    )
    return people


@pytest.fixture
def personas(kafka_cluster):
    return make_personas(kafka_cluster)


@pytest.fixture
def offline_personas(offline_cluster):
    """The personas bound on the offline cluster (for areas that never speak to Kafka: alerts)."""
    return make_personas(offline_cluster)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _own_audit_anchors(settings, tmp_path):
    """Each test's chain checks read anchors from its own (empty) directory, never a dev run's var/."""
    settings.CONSOLE_AUDIT_ANCHOR_DIR = str(tmp_path / "audit-anchors")


os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop


DISPATCHED: list[int] = []


def record_dispatch(op_id: int, countdown: float | None = None) -> str:
    """The tests' queue: remember what would have been sent to a worker (tests run it themselves)."""
    DISPATCHED.append(op_id)
    return f"test-task-{op_id}"


NOTIFIED: list[int] = []


def record_notify(delivery_id: int, countdown: float | None = None) -> str:
    """The tests' notification queue (console/notify): remembered, never sent to Celery."""
    NOTIFIED.append(delivery_id)
    return f"test-notify-{delivery_id}"


@pytest.fixture(autouse=True)
def _no_queue(settings):
    settings.OPERATION_DISPATCHER = "tests.conftest.record_dispatch"
    settings.NOTIFY_DISPATCHER = "tests.conftest.record_notify"
    DISPATCHED.clear()
    NOTIFIED.clear()
    yield DISPATCHED


@pytest.fixture
def run_operation():
    """Run an operation as a worker would (one runner call); returns the Operation or None."""
    from console import operations

    return lambda op_id, worker="test-worker": operations.run(op_id, worker=worker)


def run_now(op_id: int, worker: str = "test-worker"):
    """Run an operation at once, as the tick would once its wait is over (a poll, a retry's backoff)."""
    from django.utils import timezone

    from console import operations
    from console.models import Operation

    Operation.objects.filter(pk=op_id, next_run_at__isnull=False).update(next_run_at=timezone.now())
    return operations.run(op_id, worker=worker)


def run_until_finished(op, runs: int, pause_s: float = 0.0):
    """``run_now`` the operation until it has finished or ``runs`` runs are spent, pausing ``pause_s``
    after each unfinished run (a real cluster's move takes its time); ``op`` is refreshed."""
    import time

    for _ in range(runs):
        run_now(op.pk)
        op.refresh_from_db()
        if op.finished:
            break
        time.sleep(pause_s)
    return op


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory, request):
    """The test database is a SQLite file, not Django's shared-cache in-memory one: the live-server
    tests write from the web thread and a worker thread at once, and shared-cache SQLite answers
    such a collision with an immediate "database table is locked" (busy_timeout does not apply to
    it), which made the e2e reassignment test fail now and then. A file in WAL mode waits instead,
    as the console's own database does."""
    from django.conf import settings

    if pg.requested():  # CONSOLE_TEST_DB=postgres: the session's own PostgreSQL server (tests/pg.py)
        pg.point_django_at(request.getfixturevalue("postgres_server"))
    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.sqlite3":
        db.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / "console-test.sqlite3")
