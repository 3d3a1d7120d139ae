"""A client generated from the OpenAPI schema (openapi-python-client, into a temporary directory) drives the
live test server: it creates a topic, then submits a reassignment (dry run, then start with an
Idempotency-Key, retried) and follows it to the end, all through the generated code."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from console.identity import tokens
from console.models import AuditEvent, Reassignment
from tests.conftest import run_now
from tests.unit.matrix_world import kafka_restored

pytestmark = pytest.mark.django_db(transaction=True)
VENV_BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The schema as the server serves it, and the client generated from it (imported as ``generated``)."""
    from drf_spectacular.generators import SchemaGenerator

    root = tmp_path_factory.mktemp("client")
    schema = root / "schema.json"
    schema.write_text(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(VENV_BIN / "openapi-python-client"), "generate", "--path", str(schema), "--meta", "none",
         "--output-path", str(root / "generated")],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert (root / "generated" / "client.py").exists(), done.stdout + done.stderr
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("generated")
    finally:
        sys.path.remove(str(root))


@pytest.fixture(autouse=True)
def _sandbox_restored(frozen):
    with kafka_restored(frozen):  # the shared sandbox as it was afterwards: the new topic goes
        yield


def test_a_generated_client_creates_a_topic_and_runs_a_reassignment(
    live_server, generated, personas, kafka_cluster, frozen
):
    from generated import AuthenticatedClient
    from generated.api.clusters import (
        reassignments_create,
        reassignments_retrieve,
        topics_create,
        topics_retrieve,
    )
    from generated.models import ReassignInRequest, TopicCreateInRequest

    secret = tokens.create_token(actor=personas["operator"], name="generated", scope="write", days=1).secret
    api = AuthenticatedClient(base_url=live_server.url, token=secret, raise_on_unexpected_status=True)
    name = kafka_cluster.name

    created = topics_create.sync_detailed(
        name, client=api, body=TopicCreateInRequest(name="gen-orders", partitions=2, replication_factor=2)
    )
    assert created.status_code == 201, created.content
    assert created.parsed.ok and [o.name for o in created.parsed.outcomes] == ["gen-orders"]
    assert len(frozen.state.topics["gen-orders"].partitions) == 2
    detail = topics_retrieve.sync_detailed(name, "gen-orders", client=api)
    assert detail.status_code == 200 and len(detail.parsed.to_dict()["partitions"]) == 2

    current = frozen.state.topics["gen-orders"].partitions[0].replicas
    target = [b for b in (1, 2, 3) if b not in current][:1] + current[:1]
    plan = {"version": 1, "partitions": [{"topic": "gen-orders", "partition": 0, "replicas": target}]}
    dry = reassignments_create.sync_detailed(
        name, client=api, body=ReassignInRequest(plan=plan, dry_run=True)
    )
    assert dry.status_code == 200 and dry.parsed.to_dict()["ok"] is True
    assert not Reassignment.objects.exists()

    body = ReassignInRequest(plan=plan, dry_run=False, throttle_bytes_per_s=1024 * 1024)
    started = reassignments_create.sync_detailed(name, client=api, body=body, idempotency_key="move-1")
    again = reassignments_create.sync_detailed(name, client=api, body=body, idempotency_key="move-1")
    assert started.status_code == again.status_code == 201, started.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert Reassignment.objects.count() == 1  # the retry did not start a second one
    rid = started.parsed.to_dict()["id"]

    r = Reassignment.objects.get(pk=rid)
    for _ in range(20):
        run_now(r.operation_id)
        frozen.advance(30)
        r.operation.refresh_from_db()
        if r.operation.finished:
            break
    progress = reassignments_retrieve.sync_detailed(name, rid, client=api).parsed.to_dict()
    assert progress["state"] == "succeeded", progress
    assert [p["state"] for p in progress["partitions"]] == ["done"]
    assert frozen.state.topics["gen-orders"].partitions[0].replicas == target
    actors = set(
        AuditEvent.objects.filter(action="reassignment.execute.requested").values_list(
            "actor_name", flat=True
        )
    )
    assert len(actors) == 1 and actors.pop().startswith("operator [token ")
    assert reverse("api:schema")
