"""Issue 14 finding #3: nothing changes Kafka unaudited, even when the database is locked.

A real console process (``manage.py kafka``) runs against its own SQLite file while this test
holds that database's write lock with a second connection, as a long transaction elsewhere
would: before the change (the "requested" event cannot be written, so Kafka is never called)
and between the Kafka call and the outcome (the change is owed, and the reconciler records it
as "unknown", then with the state re-read from Kafka, once the database is back).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from console.audit import outcomes
from console.models import AuditEvent
from console.models.outcomes import OwedOutcome
from console.topics import actions as topics
from console.topics.batch import TopicSpec

ROOT = Path(__file__).resolve().parents[2]


def _manage(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def console_db(tmp_path_factory, sandbox):
    """A console with its own database file, the sandbox registered as 'sb'."""
    tmp_path = tmp_path_factory.mktemp("console")
    env = {
        **os.environ,
        "CONSOLE_VAR_DIR": str(tmp_path),
        "SQLITE_BUSY_TIMEOUT_MS": "300",
        "CONSOLE_ADMIN_PASSWORD": "pw-admin-123",
        "DJANGO_SETTINGS_MODULE": "console.settings",
    }
    env.pop("DATABASE_URL", None)
    _manage(env, "migrate", "-v", "0")
    _manage(env, "ensure_admin")
    _manage(
        env,
        "register_cluster",
        "--name",
        "sb",
        "--bootstrap-servers",
        sandbox.bootstrap_servers,
        "--as",
        "admin",
    )
    return env, tmp_path / "console.sqlite3"


@contextmanager
def write_lock(db_file: Path):
    """Hold the database's write lock, as another process's long write transaction would."""
    conn = sqlite3.connect(db_file, timeout=10, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def _events(db_file: Path, name: str) -> list[tuple[str, str, dict]]:
    conn = sqlite3.connect(db_file)
    try:
        rows = conn.execute(
            "SELECT action, outcome, targets, params, after FROM console_auditevent ORDER BY id"
        )
        return [
            (action, outcome, json.loads(params), json.loads(after) if after else None)
            for action, outcome, targets, params, after in rows
            if f"topic:{name}" in json.loads(targets)
        ]
    finally:
        conn.close()


def test_locked_before_the_change_nothing_reaches_kafka(console_db, sandbox):
    env, db_file = console_db
    name = f"locked.{uuid.uuid4().hex[:8]}"
    with write_lock(db_file):
        done = _manage(
            env, "kafka", "topics", "create", name, "--cluster", "sb", "--as", "admin", check=False
        )
    assert done.returncode == 7, done.stdout + done.stderr
    assert "nothing was sent to Kafka" in done.stderr
    assert "Traceback" not in done.stderr
    assert name not in sandbox.state.topics
    assert _events(db_file, name) == []


def test_locked_after_the_kafka_call_the_reconciler_records_the_change(console_db, sandbox):
    env, db_file = console_db
    name = f"owed.{uuid.uuid4().hex[:8]}"
    sandbox.inject_fault("CreateTopics", delay_s=3.0, count=1)
    try:
        cli = subprocess.Popen(
            [sys.executable, "manage.py", "kafka", "topics", "create", name, "--cluster", "sb", "--as", "admin"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not _events(db_file, name):  # the "requested" event is in; Kafka is answering slowly
            assert time.monotonic() < deadline and cli.poll() is None, "no requested event"
            time.sleep(0.05)
        with write_lock(db_file):
            out, err = cli.communicate(timeout=60)
    finally:
        sandbox.clear_faults()
    assert cli.returncode == 0, out + err  # the change itself succeeded
    assert name in sandbox.state.topics
    assert [(a, o) for a, o, *_ in _events(db_file, name)] == [("topic.create", "requested")]
    # The database is back: the reconciler settles the owed outcome.
    done = _manage(env, "audit_reconcile", "--grace", "0")
    assert "settled 1 owed outcome" in done.stdout
    events = _events(db_file, name)
    assert [(a, o) for a, o, *_ in events] == [
        ("topic.create", "requested"),
        ("topic.create", "unknown"),
        ("topic.create", "reconciled"),
    ]
    assert events[2][3] == {f"topic:{name}": {"exists": True, "partitions": 1, "replication_factor": 1}}
    _manage(env, "audit_verify")  # the chain is whole


# ------------------------------------------------------------------ in-process


@pytest.mark.django_db
def test_outcome_links_to_its_request_and_nothing_stays_owed(personas, kafka_cluster):
    name = f"linked.{uuid.uuid4().hex[:8]}"
    result = topics.create_topics(
        actor=personas["operator"], cluster=kafka_cluster, specs=[TopicSpec(name, 1, 1)]
    )
    outcome = AuditEvent.objects.get(pk=result.event_id)
    requested = AuditEvent.objects.get(pk=outcome.params["requested_event"])
    assert (requested.action, requested.outcome, outcome.outcome) == ("topic.create", "requested", "success")
    assert requested.pk < outcome.pk and not OwedOutcome.objects.exists()
    assert outcomes.reconcile(grace_s=0) == 0


@pytest.mark.django_db
def test_a_cluster_that_cannot_be_read_stays_owed_until_it_can(personas, kafka_cluster, offline_cluster):
    name = f"later.{uuid.uuid4().hex[:8]}"
    req = outcomes.requested(
        actor=personas["admin"], action="topic.create", cluster=offline_cluster,
        targets=[f"topic:{name}"], params={"count": 1},
    )  # fmt: skip
    assert outcomes.reconcile(grace_s=0) == 0  # "unknown" recorded; the re-read failed
    owed = OwedOutcome.objects.get(pk=req.owed_id)
    assert owed.unknown_event_id and owed.last_error
    assert AuditEvent.objects.filter(outcome="unknown").count() == 1
    OwedOutcome.objects.filter(pk=owed.pk).update(cluster=kafka_cluster)
    assert outcomes.reconcile(grace_s=0) == 1
    assert AuditEvent.objects.filter(outcome="unknown").count() == 1  # not written twice
    final = AuditEvent.objects.filter(outcome="reconciled").get()
    assert final.after == {f"topic:{name}": {"exists": False}} and final.on_behalf_of == "admin"


@pytest.mark.django_db
def test_the_page_says_nothing_was_sent_when_the_trail_refuses(
    client, personas, kafka_cluster, sandbox, monkeypatch
):
    from django.db import OperationalError
    from django.urls import reverse

    def locked(*args, **kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(outcomes, "_requested", locked)
    client.force_login(personas["operator"])
    name = f"page.{uuid.uuid4().hex[:8]}"
    url = reverse("topic_create", kwargs={"name": kafka_cluster.name})
    data = {"name": name, "partitions": "1", "replication_factor": "1", "action": "create"}
    response = client.post(url, data)
    assert response.status_code == 503
    assert b"nothing was sent to Kafka" in response.content
    assert name not in sandbox.state.topics


@pytest.mark.django_db
def test_every_owed_kind_is_re_read_from_kafka(personas, kafka_cluster, sandbox):
    """The reconciler's readers for the other direct changes: throttle cleanup, cancelling an
    external reassignment and controller log levels (each owed as if the outcome write had failed)."""
    from console.clusters.actions import gateway_for
    from console.quorum.controllers import _loggers
    from tests.unit.quorum_helpers import register_controllers

    node = sandbox.state.active_controller
    controllers = register_controllers(sandbox, personas)
    logger, now = sorted(_loggers(gateway_for(controllers), node).items())[0]
    owed = [
        (kafka_cluster, "throttle.cleanup", ["broker:1/follower.replication.throttled.rate"],
         {"configs": [["BROKER", "1", "follower.replication.throttled.rate"]]}),
        (kafka_cluster, "reassignment.external.cancel", ["nosuch-0"], {"partitions": [["nosuch", 0]]}),
        (controllers, "controller.log_level.change", [f"controller:{node}"],
         {"node_id": node, "changes": {logger: {"op": "SET", "level": "DEBUG"}}}),
    ]  # fmt: skip
    for cluster, action, targets, params in owed:
        outcomes.requested(
            actor=personas["admin"], action=action, cluster=cluster, targets=targets, params=params
        )
    assert outcomes.reconcile(grace_s=0) == 3
    found = {e.action: e.after for e in AuditEvent.objects.filter(outcome="reconciled")}
    assert found["throttle.cleanup"] == {
        "broker:1/follower.replication.throttled.rate": {"set": False, "value": None}
    }
    assert found["reassignment.external.cancel"] == {"nosuch-0": {"moving": False}}
    assert found["controller.log_level.change"] == {f"controller:{node}": {logger: now}}
    assert not OwedOutcome.objects.exists()
