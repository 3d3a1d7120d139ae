"""What a cancel says it did: each partition compared with what Kafka has afterwards, and the rollback
plan the console holds when Kafka restored the original brokers in another order."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from console.clusters.actions import gateway_for
from console.identity import tokens
from console.kafka import TopicPartition
from console.models import AuditEvent, Operation, OperationState
from console.models.reassignment import PartitionState, Reassignment
from console.reassignment import actions as reassignment_actions
from console.reassignment import progress
from tests.conftest import run_now
from tests.unit.reassign_world import LaggingMetadata, make_topic, plan_file, start

pytestmark = pytest.mark.django_db

MB = 1024 * 1024


@pytest.mark.parametrize(
    ("original", "target", "replicas", "kind", "message"),
    [
        ([1, 2], [2, 3], [1, 2], "reverted", "reverted to the original replicas [1, 2]"),
        (
            [1, 2],
            [2, 3],
            [2, 1],
            "reordered",
            "Kafka restored the original brokers in another order: [2, 1], not [1, 2] "
            "(preferred leader changed from 1 to 2)",
        ),
        (
            [1, 2, 3],
            [1, 4, 2],
            [1, 3, 2],
            "reordered",
            "Kafka restored the original brokers in another order: [1, 3, 2], not [1, 2, 3] "
            "(the preferred leader is still 1)",
        ),
        ([1, 2], [2, 3], [2, 3], "target", "completed before the cancel"),
        (
            [1, 2],
            [2, 3],
            [3, 1],
            "other",
            "after the cancel Kafka has [3, 1] (original [1, 2], target [2, 3])",
        ),
        ([1, 2], [2, 3], None, "unknown", "Kafka's replicas could not be read after the cancel"),
    ],
)
def test_it_compares_what_kafka_has_after_a_cancel_with_the_original(
    original, target, replicas, kind, message
):
    assert progress.after_cancel(original, target, replicas) == (kind, message)


def _api(client, user, route, **kwargs):
    secret = tokens.create_token(actor=user, name="t", scope="read", days=1).secret
    return client.get(reverse(f"api:{route}", kwargs=kwargs), HTTP_AUTHORIZATION=f"Bearer {secret}")


def test_it_says_per_partition_what_kafka_restored_and_offers_the_exact_rollback_plan(
    client, personas, kafka_cluster, frozen
):
    # Kafka lists a moving partition's replicas as the target then the removing brokers; a cancel
    # drops the adding ones: [1, 2] -> [2, 3] comes back as [2, 1], [2, 3] -> [1, 3] as [3, 2].
    topic = make_topic(frozen, [[1, 2], [2, 3], [3, 1]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (2, 3), (topic, 1): (1, 3), (topic, 2): (3, 2)})
    run_now(op.pk)  # throttles set, submitted: copying at 1 MB/s
    client.force_login(personas["operator"])
    detail = reverse("reassign_detail", kwargs={"name": kafka_cluster.name, "rid": r.pk})
    cancelled = client.post(
        reverse("reassign_cancel", kwargs={"name": kafka_cluster.name, "rid": r.pk}), follow=True
    )
    assert "reverted" not in cancelled.content.decode()  # nothing is known before Kafka answers
    assert "Cancelling: Kafka takes back the replicas it was adding" in cancelled.content.decode()
    for _ in range(5):
        run_now(op.pk)
        if Operation.objects.get(pk=op.pk).finished:
            break
    op.refresh_from_db()
    assert op.state == OperationState.CANCELLED

    described = gateway_for(kafka_cluster).describe_topics([topic])[topic]
    assert [p.replicas for p in described.partitions] == [(2, 1), (3, 2), (3, 1)]
    messages = {
        0: "Kafka restored the original brokers in another order: [2, 1], not [1, 2] "
        "(preferred leader changed from 1 to 2)",
        1: "Kafka restored the original brokers in another order: [3, 2], not [2, 3] "
        "(preferred leader changed from 2 to 3)",
        2: "reverted to the original replicas [3, 1]",
    }
    rows = {x.partition: (x.state, x.message) for x in r.partitions.all()}
    assert rows == {p: (PartitionState.CANCELLED, m) for p, m in messages.items()}
    reordered = {
        f"{topic}-0": {"original": [1, 2], "replicas": [2, 1]},
        f"{topic}-1": {"original": [2, 3], "replicas": [3, 2]},
    }
    assert op.result == {"outcome": "cancelled", "partitions": {"cancelled": 3}, "reordered": reordered}
    event = AuditEvent.objects.get(action="reassignment.execute.cancelled", operation_id=op.pk)
    assert event.outcomes == {
        f"{topic}-0": {"ok": False, "state": "cancelled", "message": messages[0], "replicas": [2, 1]},
        f"{topic}-1": {"ok": False, "state": "cancelled", "message": messages[1], "replicas": [3, 2]},
        f"{topic}-2": {"ok": False, "state": "cancelled", "message": messages[2]},
    }

    rollback = {
        "version": 1,
        "partitions": [
            {"topic": topic, "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]},
            {"topic": topic, "partition": 1, "replicas": [2, 3], "log_dirs": ["any", "any"]},
        ],
    }
    page = client.get(detail).content.decode()
    assert all(m in page for m in messages.values())
    assert 'id="rollback-offer"' in page and "2 partitions" in page
    download = client.get(reverse("reassign_rollback", kwargs={"name": kafka_cluster.name, "rid": r.pk}))
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
    assert json.loads(download.content) == rollback
    new_move = client.get(reverse("reassign_new", kwargs={"name": kafka_cluster.name}), {"rollback": r.pk})
    assert new_move.status_code == 200
    assert json.loads(new_move.context["form"].initial["plan_json"]) == rollback

    answer = _api(client, personas["operator"], "reassignment", name=kafka_cluster.name, rid=r.pk).json()
    assert answer["rollback_plan"] == rollback
    assert {x["partition"]: x["message"] for x in answer["partitions"]} == messages

    # The plan starts as any other move and puts the preferred leaders back.
    again_op, again = start(personas, kafka_cluster, {(topic, 0): (1, 2), (topic, 1): (2, 3)})
    for _ in range(5):
        run_now(again_op.pk)
        if Operation.objects.get(pk=again_op.pk).finished:
            break
    described = gateway_for(kafka_cluster).describe_topics([topic])[topic]
    assert [p.replicas for p in described.partitions] == [(1, 2), (2, 3), (3, 1)]
    assert Reassignment.objects.get(pk=again.pk).outcome == "succeeded"


def test_a_cancel_that_restored_the_exact_order_offers_no_rollback(client, personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (1, 3)})
    run_now(op.pk)
    client.force_login(personas["operator"])
    client.post(reverse("reassign_cancel", kwargs={"name": kafka_cluster.name, "rid": r.pk}))
    for _ in range(5):
        run_now(op.pk)
        if Operation.objects.get(pk=op.pk).finished:
            break
    op.refresh_from_db()
    assert op.result == {"outcome": "cancelled", "partitions": {"cancelled": 1}, "reordered": {}}
    assert r.partitions.get().message == "reverted to the original replicas [1, 2]"
    page = client.get(reverse("reassign_detail", kwargs={"name": kafka_cluster.name, "rid": r.pk}))
    assert b"rollback-offer" not in page.content
    missing = client.get(reverse("reassign_rollback", kwargs={"name": kafka_cluster.name, "rid": r.pk}))
    assert missing.status_code == 404
    answer = _api(client, personas["viewer"], "reassignment", name=kafka_cluster.name, rid=r.pk).json()
    assert answer["rollback_plan"] is None


def test_a_move_started_outside_is_cancelled_with_what_kafka_has_afterwards(
    client, personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2], [2, 3]])
    gw = gateway_for(kafka_cluster)
    moves = {TopicPartition(topic, 0): [2, 3], TopicPartition(topic, 1): [2, 1]}
    assert all(type(v).__name__ == "Ok" for v in gw.alter_partition_reassignments(moves).values())
    try:
        client.force_login(personas["operator"])
        listing = client.get(reverse("reassign_list", kwargs={"name": kafka_cluster.name})).content.decode()
        # Kafka keeps no original order for a move: the list shows what a cancel keeps.
        assert "Kept on cancel → target" in listing and "Original → target" not in listing
        answer = client.post(
            reverse("reassign_external_cancel", kwargs={"name": kafka_cluster.name}),
            {"partition": [f"{topic}|0", f"{topic}|1"]},
            follow=True,
        )
        said = [str(m) for m in answer.context["messages"]]
        assert said == [f"Cancelled 2 of 2. Kafka has now: {topic}-0 [2, 1]; {topic}-1 [2, 3]."]
        outcomes = {
            f"{topic}-0": {"ok": True, "replicas": [2, 1], "message": "cancelled: Kafka has [2, 1]"},
            f"{topic}-1": {"ok": True, "replicas": [2, 3], "message": "cancelled: Kafka has [2, 3]"},
        }
        event = AuditEvent.objects.exclude(outcome="requested").get(action="reassignment.external.cancel")
        assert (event.outcome, event.outcomes) == ("success", outcomes)
        assert [p.replicas for p in gw.describe_topics([topic])[topic].partitions] == [(2, 1), (2, 3)]
    finally:  # the sandbox is shared: no move is left behind whatever failed
        gw.alter_partition_reassignments(dict.fromkeys(moves))


def test_the_cli_verify_says_what_kafka_has_after_a_cancel_and_gives_the_rollback_plan(
    personas, kafka_cluster, frozen, tmp_path
):
    from tests.unit.kafka_cli import kafka as cli

    topic = make_topic(frozen, [[1, 2]])
    plan = plan_file(tmp_path, {(topic, 0): [2, 3]})
    code, _ = cli(
        "reassign", "--execute", "--reassignment-json-file", plan, "--throttle", str(MB), "--as", "operator"
    )
    assert code == 0
    r = Reassignment.objects.filter(cluster=kafka_cluster).latest("pk")
    run_now(r.operation_id)
    assert cli("reassign", "--cancel", "--reassignment-json-file", plan, "--as", "operator")[0] == 0
    for _ in range(5):
        run_now(r.operation_id)
        if Operation.objects.get(pk=r.operation_id).finished:
            break
    code, out = cli("reassign", "--verify", "--reassignment-json-file", plan, "--as", "operator")
    message = (
        "Kafka restored the original brokers in another order: [2, 1], not [1, 2] "
        "(preferred leader changed from 1 to 2)"
    )
    assert (  # what Kafka's own --verify says, then why (the console's settled row)
        f"There is no active reassignment of partition {topic}-0, but replica set is [2, 1] rather than"
        f" [2, 3]. Console: cancelled: {message}." in out
    )
    rollback = {
        "version": 1,
        "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}],
    }
    assert "Kafka restored 1 partition in another order. Rollback plan (their original assignment):" in out
    assert json.dumps(rollback, indent=1) in out
    code, out = cli(
        "reassign", "--verify", "--reassignment-json-file", plan, "--output", "json", "--as", "operator"
    )
    data, _ = json.JSONDecoder().raw_decode(out)  # then the exit code's sentence (a cancel is not a success)
    assert code == 1 and data["rollback_plan"] == rollback


def test_a_broker_still_showing_the_move_is_read_again_before_the_cancel_is_judged(
    personas, kafka_cluster, frozen, monkeypatch
):
    """Real Kafka: the brokers apply a cancel from the metadata log a moment after the controller
    accepted it; a broker answering Metadata first still lists the replica being added."""

    from console.reassignment import finish

    topic = make_topic(frozen, [[1, 2]])
    op, r = start(personas, kafka_cluster, {(topic, 0): (2, 3)})
    run_now(op.pk)
    lagging = LaggingMetadata(finish.gateway_for, topic, (2, 3, 1))  # the move's replicas, before the cancel
    monkeypatch.setattr(finish, "gateway_for", lagging)
    monkeypatch.setattr(finish, "READBACK_EVERY_S", 0.01)
    reassignment_actions.cancel_reassignment(actor=personas["operator"], reassignment=r)
    for _ in range(5):
        run_now(op.pk)
        if Operation.objects.get(pk=op.pk).finished:
            break
    assert lagging.stale_answers == 2
    row = r.partitions.get()
    assert (row.state, row.message) == (
        PartitionState.CANCELLED,
        "Kafka restored the original brokers in another order: [2, 1], not [1, 2] "
        "(preferred leader changed from 1 to 2)",
    )
