"""Share groups through the three doors on the sandbox: the API (support, list, a group, the reset's dry
run and execution, deletes; 400/403/422 changing nothing; 202 held by a policy), the pages (list, "not
supported", a group, the reset's dry run, the typed confirmation, the delete) and the CLI
(kafka-share-groups' sub-commands and exit codes)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from console.share_groups import audit_names, held, reads
from tests.conftest import hold
from tests.unit.kafka_cli import kafka
from tests.unit.share_world import disable_share, make_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(kafka_cluster, sandbox):
    yield from make_world(kafka_cluster, sandbox)


def client_for(person) -> Client:
    c = Client()
    c.force_login(person)
    return c


def exists(cluster, group) -> bool:
    return reads.raw_detail(cluster, group) is not None


def test_the_api_lists_describes_and_refuses_bad_input_and_viewers(personas, kafka_cluster, world):
    group, topic = world["group"], world["topic"]
    base = f"/api/v1/clusters/{kafka_cluster.name}/share-groups/"
    viewer = client_for(personas["viewer"])
    listed = viewer.get(base, {"q": group}).json()
    assert listed["support"]["supported"] is True
    assert [(r["group_id"], r["state"], r["members"], r["lag"]) for r in listed["results"]] == [
        (group, "Stable", 1, 5)
    ]
    one = viewer.get(base + group + "/").json()
    assert [(p["partition"], p["start_offset"], p["log_end_offset"], p["lag"]) for p in one["partitions"]] == [
        (0, 0, 5, 5), (1, 0, 0, 0)
    ]  # fmt: skip
    assert one["members"][0]["member_id"] == world["member"]
    assert viewer.get(base + group + "-never/").status_code == 404
    assert viewer.get(base, {"state": "Bogus"}).status_code == 400
    body = {"group_id": group, "confirm": group}
    assert viewer.post(base + "delete/", body, content_type="application/json").status_code == 403
    op = client_for(personas["operator"])
    busy = op.post(base + "delete/", body, content_type="application/json")
    assert busy.status_code == 422 and world["member"] in json.dumps(busy.json())
    assert op.post(base + "reset/", {"group_id": group, "mode": "sideways"}, content_type="application/json").status_code == 400  # fmt: skip
    bad = op.post(base + "reset/", {"group_id": group, "mode": "to-latest", "topic": "t:x"}, content_type="application/json")  # fmt: skip
    assert bad.status_code == 422 and "not a partition number" in json.dumps(bad.json())
    assert (
        exists(kafka_cluster, group)
        and not AuditEvent.objects.filter(action__startswith="share_group.", outcome="requested").exists()
    )
    world["members"].leave(group, world["member"])
    dry = op.post(base + "reset/", {"group_id": group, "mode": "to-latest", "topic": topic}, content_type="application/json")  # fmt: skip
    assert dry.status_code == 200 and [p["new_start_offset"] for p in dry.json()["partitions"]] == [5, 0]
    run = op.post(base + "reset/", {"group_id": group, "mode": "to-latest", "topic": topic, "execute": True,
                                    "confirm": group}, content_type="application/json")  # fmt: skip
    assert run.status_code == 207 and [p["status"] for p in run.json()["partitions"]] == [
        "not applied",
        "applied",
    ]
    gone = op.post(base + "delete/", body, content_type="application/json")
    assert gone.status_code == 200 and not exists(kafka_cluster, group)


def test_a_policy_holds_the_delete_on_the_api(personas, kafka_cluster, world, operator2):
    group = world["group"]
    world["members"].leave(group, world["member"])
    hold(kafka_cluster, personas["admin"], [held.GATE_DELETE])
    answer = client_for(personas["operator"]).post(
        f"/api/v1/clusters/{kafka_cluster.name}/share-groups/delete/",
        {"group_id": group, "confirm": group, "reason": "retired"}, content_type="application/json",
    )  # fmt: skip
    assert answer.status_code == 202, answer.content
    req = ChangeRequest.objects.get(pk=answer.json()["id"])
    assert (req.kind, req.state) == (held.KIND_DELETE, RequestState.PENDING)
    assert exists(kafka_cluster, group)


def test_the_pages_show_the_list_a_group_not_supported_and_the_forms(personas, kafka_cluster, sandbox, world):
    group, topic, name = world["group"], world["topic"], kafka_cluster.name
    viewer = client_for(personas["viewer"])
    page = viewer.get(f"/c/{name}/share-groups/", {"q": group}).content.decode()
    assert f'data-group="{group}"' in page and "Stable" in page
    detail = viewer.get(f"/c/{name}/share-groups/g/{group}/").content.decode()
    assert (
        world["member"] in detail
        and 'id="share-group-lag">5<' in detail
        and "share-group-delete-link" not in detail
    )
    assert viewer.get(f"/c/{name}/share-groups/g/{group}-never/").status_code == 404
    assert viewer.get(f"/c/{name}/share-groups/g/{group}/reset/").status_code == 403
    op = client_for(personas["operator"])
    url = f"/c/{name}/share-groups/g/{group}/"
    refused = op.post(
        url + "delete/", {"topics": "", "confirmation": group, "action": "apply"}
    ).content.decode()
    assert "1 active member" in refused and exists(kafka_cluster, group)
    world["members"].leave(group, world["member"])
    plan = op.post(
        url + "reset/", {"mode": "to-latest", "topic": topic, "action": "dry_run"}
    ).content.decode()
    assert 'id="share-reset-plan"' in plan
    bad = op.post(url + "reset/", {"mode": "to-offset", "topic": topic, "action": "dry_run"}).content.decode()
    assert "Give the offset to reset to" in bad
    wrong = op.post(
        url + "delete/", {"topics": "", "confirmation": "nope", "action": "apply"}
    ).content.decode()
    assert "Type the group id" in wrong and exists(kafka_cluster, group)
    done = op.post(url + "delete/", {"topics": "", "confirmation": group, "action": "apply"}).content.decode()
    assert 'id="share-delete-result"' in done and not exists(kafka_cluster, group)
    disable_share(sandbox)
    off = viewer.get(f"/c/{name}/share-groups/").content.decode()
    assert 'id="share-groups-unsupported"' in off and "--feature share.version=1" in off


def test_the_cli_mirrors_kafka_share_groups(personas, kafka_cluster, world):
    group, topic = world["group"], world["topic"]
    code, out = kafka("share-groups", "list", "--query", group, "--output", "json", "--as", "viewer")
    assert code == 0 and [r["group_id"] for r in json.loads(out)["items"]] == [group]
    code, out = kafka("share-groups", "describe", "--group", group, "--members", "--as", "viewer")
    assert code == 0 and world["member"] in out
    code, out = kafka("share-groups", "describe", "--group", group, "--output", "json", "--as", "viewer")
    assert code == 0 and [r["lag"] for r in json.loads(out)["items"]] == [5, 0]
    assert kafka("share-groups", "describe", "--group", group + "-never", "--as", "viewer")[0] == 6
    code, out = kafka("share-groups", "delete", "--group", group, "--as", "operator")
    assert code == 4 and "active member" in out
    code, out = kafka("share-groups", "reset-offsets", "--group", group, "--topic", "bad topic", "--to-latest", "--as", "operator")  # fmt: skip
    assert code == 4 and "not a topic name" in out
    world["members"].leave(group, world["member"])
    code, out = kafka("share-groups", "reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
                      "--output", "json", "--as", "operator")  # fmt: skip
    assert code == 0 and json.loads(out)["dry_run"] is True
    code, out = kafka(
        "share-groups", "delete-offsets", "--group", group, "--topic", topic, "--as", "operator"
    )
    assert code == 0 and "Successful" in out
    code, out = kafka("share-groups", "delete", "--group", group, "--as", "viewer")
    assert code != 0 and exists(kafka_cluster, group)
    code, out = kafka("share-groups", "delete", "--group", group, "--as", "operator")
    assert code == 0 and not exists(kafka_cluster, group)
    assert AuditEvent.objects.filter(action=audit_names.SHARE_GROUP_DELETE, outcome="requested").count() == 1
