"""Purging records on the sandbox through every door: the dry run's numbers (records, the bytes
estimate, a group left below the new start), the typed confirmation, the permission, the audit trail
with each partition's start before and after, bad input refused with nothing changed, and change
control holding a purge, running it once approved, sending it back on drift and converging."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from console import operations
from console.changes import gate, kinds
from console.clusters.actions import gateway_for
from console.kafka import NewTopic, TopicPartition
from console.models import AuditEvent
from console.models.requests import ChangeRequest, RequestState
from console.purge import actions, core, held, reads
from console.purge.reads import PurgeInvalid
from console.requests import actions as requests
from tests.conftest import hold
from tests.unit.kafka_cli import kafka

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic(kafka_cluster):
    """A 2-partition topic: 10 records on partition 0, 4 on partition 1."""
    gw = gateway_for(kafka_cluster)
    name = f"purge-{uuid.uuid4().hex[:10]}"
    assert gw.create_topics([NewTopic(name, 2, 2, None, {})])[name].__class__.__name__ == "Ok"
    for i in range(10):
        gw.produce_record(name, partition=0, key=None, value=f"record {i:04d}".encode())
    for i in range(4):
        gw.produce_record(name, partition=1, key=None, value=f"record {i:04d}".encode())
    yield name
    gw.delete_topics([name])


def bounds(cluster, name) -> dict[int, tuple[int, int]]:
    return gateway_for(cluster).partition_bounds(name)


def client_for(person) -> Client:
    c = Client()
    c.force_login(person)
    return c


def test_the_dry_run_counts_what_goes_and_names_a_group_left_below(personas, kafka_cluster, topic):
    group = f"g-{uuid.uuid4().hex[:8]}"
    gateway_for(kafka_cluster).alter_consumer_group_offsets(
        group, {TopicPartition(topic, 0): 2, TopicPartition(topic, 1): 4}
    )
    target = core.offsets_target(topic, {0: 6, 1: 1})
    plan = reads.dry_run(actor=personas["operator"], cluster=kafka_cluster, target=target)
    p0, p1 = plan.partitions
    assert (p0.start, p0.end, p0.new_start, p0.messages, p0.groups_below) == (0, 10, 6, 6, ((group, 2),))
    assert (p1.start, p1.end, p1.new_start, p1.messages, p1.groups_below) == (0, 4, 1, 1, ())
    size = gateway_for(kafka_cluster).partition_sizes(topic)[0]
    assert size and p0.bytes_estimate == int(size * 6 / 10)
    assert plan.groups_below == [group]
    assert bounds(kafka_cluster, topic) == {0: (0, 10), 1: (0, 4)}  # a dry run changes nothing
    assert not AuditEvent.objects.filter(action="records.purge").exists()


def test_an_operator_purges_with_the_audit_trail(personas, kafka_cluster, topic):
    target = core.offsets_target(topic, {0: 6, 1: -1})
    result = actions.purge_records(
        actor=personas["operator"], cluster=kafka_cluster, target=target, confirmation=topic
    )
    assert (result.ok, result.confirmed, result.after) == (True, True, {0: 6, 1: 4})
    assert result.message == f"Purged 10 record(s) of {topic}."
    assert bounds(kafka_cluster, topic) == {0: (6, 10), 1: (4, 4)}
    events = list(AuditEvent.objects.filter(action="records.purge").order_by("pk"))
    assert [(e.outcome, e.actor_name, e.targets) for e in events] == [
        ("requested", "operator", [f"topic:{topic}"]),
        ("success", "operator", [f"topic:{topic}"]),
    ]
    assert events[0].params["offsets"] == {"0": 6, "1": 4}
    done = events[1]
    assert done.before == {f"{topic}-0": 0, f"{topic}-1": 0}
    assert done.after == {f"{topic}-0": 6, f"{topic}-1": 4}
    assert done.outcomes[f"{topic}-0"] == {
        "ok": True, "status": "applied", "start_before": 0, "start_after": 6, "new_start": 6,
    }  # fmt: skip


def test_a_viewer_is_refused_and_nothing_changes(personas, kafka_cluster, topic):
    target = core.all_target(topic)
    with pytest.raises(PermissionDenied):
        actions.purge_records(
            actor=personas["viewer"], cluster=kafka_cluster, target=target, confirmation=topic
        )
    with pytest.raises(PermissionDenied):
        reads.dry_run(actor=personas["viewer"], cluster=kafka_cluster, target=target)
    assert AuditEvent.objects.filter(action="records.purge", outcome="refused", actor_name="viewer").exists()
    assert bounds(kafka_cluster, topic) == {0: (0, 10), 1: (0, 4)}
    assert (
        client_for(personas["viewer"]).get(f"/c/{kafka_cluster.name}/topics/{topic}/purge/").status_code
        == 403
    )


@pytest.mark.parametrize(
    "target, confirmation, words",
    [
        (lambda t: core.offsets_target(t, {0: 11}), "{t}", "offset 11 is past its end (10)"),
        (lambda t: core.offsets_target(t, {5: 1}), "{t}", "has no such partition"),
        (lambda t: core.all_target(t), "wrong", "Type the topic name"),
        (lambda t: core.all_target("__consumer_offsets"), "__consumer_offsets", "internal topics"),
    ],
)
def test_the_action_refuses_before_kafka_is_called(
    personas, kafka_cluster, topic, target, confirmation, words
):
    with pytest.raises(PurgeInvalid) as caught:
        actions.purge_records(
            actor=personas["operator"], cluster=kafka_cluster, target=target(topic),
            confirmation=confirmation.format(t=topic),
        )  # fmt: skip
    assert words in str(caught.value)
    assert bounds(kafka_cluster, topic) == {0: (0, 10), 1: (0, 4)}
    assert not AuditEvent.objects.filter(action="records.purge", outcome="requested").exists()
    assert AuditEvent.objects.filter(action="records.purge", outcome="refused").exists()


API_BAD = [
    ({"partitions": [{"partition": 0, "offset": 11}], "confirm": "{t}"}, 422, "past its end"),
    ({"partitions": [{"partition": 0, "offset": "x"}], "confirm": "{t}"}, 422, "whole number"),
    ({"partitions": [{"partition": 0}], "confirm": "{t}"}, 422, 'needs "partition" and "offset"'),
    ({"all": True, "before": "2024-01-01", "confirm": "{t}"}, 422, "exactly one of"),
    ({"before": "someday", "confirm": "{t}"}, 422, "is not a time"),
    ({"all": True, "confirm": "nope"}, 422, "Type the topic name"),
    ({"all": True, "dry_run": "maybe"}, 400, "dry_run"),
    (
        {
            "offset_json": {"partitions": [{"topic": "other", "partition": 0, "offset": 1}], "version": 1},
            "confirm": "{t}",
        },
        422,
        "not '{t}'",
    ),
]


@pytest.mark.parametrize("body, status, words", API_BAD)
def test_the_api_refuses_bad_input_and_changes_nothing(personas, kafka_cluster, topic, body, status, words):
    body = json.loads(json.dumps(body).replace("{t}", topic))
    answer = client_for(personas["operator"]).post(
        f"/api/v1/clusters/{kafka_cluster.name}/topics/{topic}/purge/", body, content_type="application/json"
    )
    assert answer.status_code == status, answer.content
    assert words.replace("{t}", topic) in json.dumps(answer.json()["error"], ensure_ascii=False).replace(
        '\\"', '"'
    )
    assert bounds(kafka_cluster, topic) == {0: (0, 10), 1: (0, 4)}


def test_the_api_dry_runs_purges_and_answers_404_and_403(personas, kafka_cluster, topic):
    url = f"/api/v1/clusters/{kafka_cluster.name}/topics/{topic}/purge/"
    c = client_for(personas["operator"])
    dry = c.post(
        url,
        {"before": "9999-01-01T00:00:00Z", "partitions": [1], "dry_run": True},
        content_type="application/json",
    )
    assert dry.status_code == 200, dry.content
    assert [(p["partition"], p["new_start"], p["messages"]) for p in dry.json()["partitions"]] == [(1, 4, 4)]
    assert dry.json()["dry_run"] is True and "estimate" in dry.json()["bytes_estimate_note"]
    done = c.post(
        url,
        {"partitions": [{"partition": 0, "offset": 3}], "confirm": topic},
        content_type="application/json",
    )
    assert done.status_code == 200, done.content
    assert (done.json()["ok"], done.json()["after"]) == (True, {"0": 3})
    assert bounds(kafka_cluster, topic) == {0: (3, 10), 1: (0, 4)}
    missing = c.post(
        url.replace(topic, "no-such-topic"), {"all": True, "dry_run": True}, content_type="application/json"
    )
    assert missing.status_code == 404
    viewer = client_for(personas["viewer"]).post(
        url, {"all": True, "confirm": topic}, content_type="application/json"
    )
    assert viewer.status_code == 403
    assert bounds(kafka_cluster, topic) == {0: (3, 10), 1: (0, 4)}


def test_the_page_dry_runs_then_purges_after_the_typed_name(personas, kafka_cluster, topic):
    c = client_for(personas["operator"])
    url = f"/c/{kafka_cluster.name}/topics/{topic}/purge/"
    assert 'id="topic-purge-link"' in c.get(f"/c/{kafka_cluster.name}/topics/{topic}/").content.decode()
    form = {"mode": "offsets", "offsets": "0:4, 1:2"}
    dry = c.post(url, {**form, "action": "dry_run"}).content.decode()
    assert 'id="purge-plan"' in dry and 'id="purge-confirmation"' in dry
    wrong = c.post(url, {**form, "action": "apply", "confirmation": "not it"})
    assert wrong.status_code == 200 and "Type the topic name" in wrong.content.decode()
    bad = c.post(url, {"mode": "offsets", "offsets": "0:99", "action": "apply", "confirmation": topic})
    assert "offset 99 is past its end (10)" in bad.content.decode()
    garbled = c.post(url, {"mode": "offsets", "offsets": "zero", "action": "dry_run"})
    assert garbled.status_code == 200 and "write partition:offset" in garbled.content.decode()
    assert bounds(kafka_cluster, topic) == {0: (0, 10), 1: (0, 4)}
    done = c.post(url, {**form, "action": "apply", "confirmation": topic}).content.decode()
    assert 'id="purge-result"' in done and "Purged 6 record(s)" in done
    assert bounds(kafka_cluster, topic) == {0: (4, 10), 1: (2, 4)}


def test_the_command_line_dry_runs_purges_and_refuses_bad_input(personas, kafka_cluster, topic, tmp_path):
    code, out = kafka(
        "records", "purge", topic, "--partition", "0", "--offset", "5", "--dry-run", "--as", "operator"
    )
    assert code == 0 and "Dry run: 5 record(s) would go" in out, out
    code, out = kafka("records", "purge", topic, "--partition", "0", "--offset", "5", "--as", "operator")
    assert code == 4 and "Type the topic name" in out, out
    code, out = kafka("records", "purge", topic, "--partition", "0", "--as", "operator", "--confirm", topic)
    assert code == 2 and "Give exactly one of" in out, out
    code, out = kafka(
        "records", "purge", topic, "--all", "--before", "1", "--as", "operator", "--confirm", topic
    )
    assert code == 2, out
    code, out = kafka(
        "records",
        "purge",
        topic,
        "--partition",
        "0",
        "--offset",
        "50",
        "--as",
        "operator",
        "--confirm",
        topic,
    )
    assert code == 4 and "past its end" in out, out
    (tmp_path / "bad.json").write_text("{not json")
    code, out = kafka(
        "records", "purge", topic, "--offset-json-file", str(tmp_path / "bad.json"), "--as", "operator"
    )
    assert code == 2 and "not JSON" in out, out
    assert bounds(kafka_cluster, topic) == {0: (0, 10), 1: (0, 4)}
    doc = {
        "partitions": [
            {"topic": topic, "partition": 0, "offset": 7},
            {"topic": topic, "partition": 1, "offset": -1},
        ],
        "version": 1,
    }
    (tmp_path / "offsets.json").write_text(json.dumps(doc))
    code, out = kafka("records", "purge", topic, "--offset-json-file", str(tmp_path / "offsets.json"),
                      "--as", "operator", "--confirm", topic, "--output", "json")  # fmt: skip
    assert code == 0, out
    assert json.loads(out)["after"] == {"0": 7, "1": 4}
    assert bounds(kafka_cluster, topic) == {0: (7, 10), 1: (4, 4)}


def test_change_control_holds_a_purge_runs_it_once_approved_and_sends_drift_back(
    personas, kafka_cluster, topic
):
    hold(kafka_cluster, personas["admin"], [held.GATE])
    code, out = kafka("records", "purge", topic, "--all", "--as", "operator", "--confirm", topic)
    assert code == 3, out
    url = f"/api/v1/clusters/{kafka_cluster.name}/topics/{topic}/purge/"
    c = client_for(personas["operator"])
    unconfirmed = c.post(
        url, {"partitions": [{"partition": 0, "offset": 5}], "confirm": "x"}, content_type="application/json"
    )
    assert unconfirmed.status_code == 422 and "nothing was submitted" in unconfirmed.content.decode()
    answer = c.post(
        url, {"partitions": [{"partition": 0, "offset": 5}], "confirm": topic, "reason": "bad batch"},
        content_type="application/json",
    )  # fmt: skip
    assert answer.status_code == 202, answer.content
    req = ChangeRequest.objects.get(pk=answer.json()["id"])
    assert (req.kind, req.state) == ("change.purge", RequestState.PENDING)
    assert req.review["rows"][0][:5] == ["0", "0", "10", "5", "5"]
    shown = client_for(personas["admin"]).get(f"/c/{kafka_cluster.name}/requests/{req.pk}/").content.decode()
    assert "records that go" in shown and f"records of {topic} below 0: 5" in shown
    assert bounds(kafka_cluster, topic) == {0: (0, 10), 1: (0, 4)}
    requests.decide(actor=personas["admin"], request=req, approve=True, comment="ok")
    req.refresh_from_db()
    operations.run(req.operation_id, worker="test")
    req.refresh_from_db()
    assert (req.state, req.result["ok"]) == (RequestState.SUCCEEDED, True), req.result
    assert bounds(kafka_cluster, topic) == {0: (5, 10), 1: (0, 4)}
    # run again, it converges: nothing moves, and that is success
    with gate.passed(held.GATE):
        again = kinds.run("change.purge", personas["admin"], kafka_cluster, req.payload, "again", retry=True)
    assert again == (True, f"Nothing to purge on {topic}: no partition's start moves.")
    # the whole topic held on the page; records arrive meanwhile: drift sends it back
    page = c.post(
        f"/c/{kafka_cluster.name}/topics/{topic}/purge/",
        {"mode": "all", "action": "apply", "confirmation": topic, "justification": "reset"},
    )
    assert page.status_code == 302, page.content.decode()
    second = ChangeRequest.objects.filter(kind="change.purge", state=RequestState.PENDING).get()
    gateway_for(kafka_cluster).produce_record(topic, partition=1, key=None, value=b"late")
    requests.decide(actor=personas["admin"], request=second, approve=True, comment="ok")
    second.refresh_from_db()
    assert second.state == RequestState.PENDING  # drift: back for a fresh review
    assert bounds(kafka_cluster, topic) == {0: (5, 10), 1: (0, 5)}
