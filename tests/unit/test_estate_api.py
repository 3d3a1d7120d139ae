"""The estate through the API: GET export as YAML or JSON, POST plan (the rows, ``drift``), POST apply
(202 with the held change, approved by someone else, then it runs); a bad file is a 400 naming its
lines; a viewer may export and plan but not apply."""

from __future__ import annotations

import pytest
import yaml

from console.changes import actions as changes
from console.models.requests import ChangeRequest, RequestState
from tests.unit.estate_world import drop_namespaces, make_namespace  # noqa: F401 - the fixture
from tests.unit.test_api_endpoints import _caller
from tests.unit.test_changes import run_queued

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


@pytest.fixture
def api(client, personas, operator2):
    return _caller(client, {**personas, "operator2": operator2})


def test_it_exports_plans_and_applies_through_the_api(api, personas, kafka_cluster, operator2):
    ns = make_namespace(personas, kafka_cluster, 2)
    got = api("viewer", "get", "estate", {"namespace": ns, "output": "yaml"}, name="sandbox")
    assert got.status_code == 200 and got["Content-Type"] == "application/yaml; charset=utf-8"
    text = got.content.decode()
    doc = api("viewer", "get", "estate", {"namespace": ns}, name="sandbox").json()
    assert doc == yaml.safe_load(text)
    assert doc["topics"] == [
        {
            "name": f"{ns}t000",
            "partitions": 1,
            "replication_factor": 1,
            "configs": {"retention.ms": "86400000"},
        },
        {"name": f"{ns}t001", "partitions": 1, "replication_factor": 1},
    ]

    same = api("viewer", "post", "estate-plan", {"text": text}, name="sandbox")
    assert same.status_code == 200
    assert same.json() == {
        "drift": False, "ok": True, "changes": 0, "refused": [],
        "columns": ["resource", "change", "before", "after", "Kafka's validate-only answer"], "rows": [],
    }  # fmt: skip
    grown = text.replace("partitions: 1", "partitions: 2", 1)
    plan = api("viewer", "post", "estate-plan", {"text": grown}, name="sandbox").json()
    assert (plan["drift"], plan["rows"]) == (
        True,
        [[f"topic:{ns}t000", "alter", "1 partitions", "2 partitions", "valid"]],
    )

    refused = api("viewer", "post", "estate-apply", {"text": grown, "reason": "more"}, name="sandbox")
    assert refused.status_code == 403 and not ChangeRequest.objects.exists()
    held = api("operator", "post", "estate-apply", {"text": grown, "reason": "more"}, name="sandbox")
    assert held.status_code == 202, held.content
    body = held.json()
    req = ChangeRequest.objects.get()
    assert (body["held"], body["id"], body["kind"], body["state"]) == (
        True,
        req.pk,
        "estate.apply",
        "pending",
    )
    assert body["review"]["rows"] == plan["rows"] and body["resource"] == f"estate:{ns}"
    changes.approve_change(actor=operator2, request=req)
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert api("viewer", "post", "estate-plan", {"text": grown}, name="sandbox").json()["drift"] is False


def test_it_answers_a_bad_file_with_a_400_naming_the_lines(api, kafka_cluster):
    bad = api(
        "viewer", "post", "estate-plan", {"text": "kind: KafkaEstate\nversion: 2\nextra: 1\n"}, name="sandbox"
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid"
    assert bad.json()["error"]["message"] == (
        "line 3: unknown key 'extra' in the document (allowed: kind, version, cluster, namespace, topics, acls); "
        "line 2: version must be 1 (the only version this console reads)"
    )
    assert api("viewer", "post", "estate-plan", {}, name="sandbox").status_code == 400
    assert api("viewer", "get", "estate", {"output": "xml"}, name="sandbox").status_code == 400
    assert api("outsider", "get", "estate", name="sandbox").status_code == 404
