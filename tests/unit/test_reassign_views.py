"""Reassignment pages: plan preview (validation, malformed JSON), start, progress fragment, elections."""

from __future__ import annotations

import html
import itertools
import json

import pytest
from django.urls import reverse

from console.models import AuditEvent, Operation, OperationState
from console.models.reassignment import Reassignment
from tests.conftest import run_now
from tests.unit import reassign_world
from tests.unit.reassign_world import kafka_plan

pytestmark = pytest.mark.django_db
_names = itertools.count()


def make_topic(sandbox, assignment):
    return reassign_world.make_topic(
        sandbox, assignment, mb_per_partition=4, name=f"reassign-v{next(_names)}"
    )


def plan_form(topic, replicas, **more) -> dict:
    """The plan page's JSON form moving partition 0 of ``topic`` to ``replicas`` at 1 MB/s."""
    plan = json.dumps(kafka_plan({(topic, 0): replicas}))
    return {"intent": "json", "plan_json": plan, "throttle_mb": "1", **more}


def post_plan(client, personas, cluster, topic, replicas, action: str):
    """The operator posts the plan page's form moving ``topic``'s partition 0 to ``replicas``."""
    client.force_login(personas["operator"])
    return client.post(url("reassign_new", cluster), plan_form(topic, replicas, action=action))


def url(name, cluster, **kw):
    return reverse(name, kwargs={"name": cluster.name, **kw})


def test_malformed_json_is_shown_with_its_position(client, personas, kafka_cluster):
    client.force_login(personas["operator"])
    response = client.post(
        url("reassign_new", kafka_cluster),
        {
            "intent": "json",
            "plan_json": '{"version": 1,\n "partitions": [,]}',
            "throttle_mb": "1",
            "action": "preview",
        },
    )
    assert response.status_code == 200
    assert b"Malformed JSON" in response.content and b"line 2, column" in response.content
    assert not Operation.objects.exists()


def test_the_dry_run_shows_the_table_and_diff_without_changing_anything(
    client, personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2]])
    response = post_plan(client, personas, kafka_cluster, topic, [1, 3], "preview")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="diff"' in body and "1,2 → 1,3" in body and "4.0 MiB" in body
    assert not Reassignment.objects.exists()


def test_a_big_dry_run_shows_the_largest_moves_and_says_how_many_more(
    client, personas, kafka_cluster, frozen, monkeypatch
):
    """A 10,000-partition plan was ~10 MB of HTML: the table shows PREVIEW_ROWS rows, the largest
    moves first, and says how many partitions the plan has; the plan JSON keeps every one."""
    from console.views import reassignment as views

    monkeypatch.setattr(views, "PREVIEW_ROWS", 2)
    topic = make_topic(frozen, [[1, 2], [1, 2], [1, 2]])
    with frozen.state.lock:  # partition 1 holds the most data, then 2, then 0
        for p, mb in ((0, 1), (1, 9), (2, 5)):
            part = frozen.state.topics[topic].partitions[p]
            part.sizes = dict.fromkeys(part.replicas, float(mb * 1024 * 1024))
    plan = {"intent": "json", "throttle_mb": "1", "action": "preview"}
    plan["plan_json"] = json.dumps(kafka_plan({(topic, p): [1, 3] for p in range(3)}))
    client.force_login(personas["operator"])
    body = client.post(url("reassign_new", kafka_cluster), plan).content.decode()
    table = body[body.index('id="diff"') : body.index("</table>", body.index('id="diff"'))]
    assert [f"{topic}-{p}" in table for p in (1, 2, 0)] == [True, True, False]
    assert table.index(f"{topic}-1") < table.index(f"{topic}-2")
    assert "The 2 largest moves of 3 partitions" in body
    assert all(f'"partition": {p}' in html.unescape(body) for p in range(3))  # the plan JSON: every one


def test_a_plan_with_problems_shows_them_per_partition(client, personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2]])
    response = post_plan(client, personas, kafka_cluster, topic, [1, 9], "start")
    assert response.status_code == 200
    assert b"Unknown broker 9" in response.content
    assert not Reassignment.objects.exists()


def test_it_starts_and_the_progress_fragment_polls_until_done(
    client, personas, kafka_cluster, frozen, monkeypatch
):
    topic = make_topic(frozen, [[1, 2]])
    response = post_plan(client, personas, kafka_cluster, topic, [1, 3], "start")
    r = Reassignment.objects.get()
    assert response.status_code == 302 and response["Location"] == url(
        "reassign_detail", kafka_cluster, rid=r.pk
    )
    run_now(r.operation_id)
    progress = url("reassign_progress", kafka_cluster, rid=r.pk)
    running = client.get(progress, headers={"HX-Request": "true"})
    assert running.status_code == 200 and b'hx-trigger="every 1s"' in running.content
    assert b"In sync" in running.content
    page = client.get(url("reassign_detail", kafka_cluster, rid=r.pk))
    assert b"Change throttle" in page.content and b"Cancel reassignment" in page.content
    frozen.advance(30)
    run_now(r.operation_id)
    done = client.get(progress, headers={"HX-Request": "true"})
    assert done.status_code == 286 and b"hx-trigger" not in done.content
    assert b"100%" in done.content


def test_the_progress_fragment_warns_when_the_worker_goes_quiet(client, personas, kafka_cluster, frozen):
    from datetime import timedelta

    from django.utils import timezone

    topic = make_topic(frozen, [[1, 2]])
    post_plan(client, personas, kafka_cluster, topic, [1, 3], "start")
    r = Reassignment.objects.get()
    progress = url("reassign_progress", kafka_cluster, rid=r.pk)
    # nothing ran yet, just submitted: no warning
    assert b"progress-stale" not in client.get(progress).content
    run_now(r.operation_id)
    fresh = client.get(progress).content
    assert b"progress-stale" not in fresh and b"Progress read from Kafka" in fresh
    # 10 s without a poll or a heartbeat: three polls missed
    old = timezone.now() - timedelta(seconds=10)
    Reassignment.objects.filter(pk=r.pk).update(last_poll_at=old)
    Operation.objects.filter(pk=r.operation_id).update(heartbeat_at=old, created_at=old)
    quiet = client.get(progress).content.decode()
    assert 'id="progress-stale"' in quiet and "Nothing from the console's worker for 10 s" in quiet
    # never polled and submitted long ago (the worker never came): warned too
    Reassignment.objects.filter(pk=r.pk).update(last_poll_at=None)
    assert "No progress has been read yet." in client.get(progress).content.decode()
    # leave the shared sandbox as found: the move's throttles are taken back by its cancel
    from console.reassignment import actions as reassignment

    reassignment.cancel_reassignment(actor=personas["operator"], reassignment=r)
    for _ in range(10):
        run_now(r.operation_id)
        if Operation.objects.get(pk=r.operation_id).finished:
            break
    assert Operation.objects.get(pk=r.operation_id).state == OperationState.CANCELLED


def test_the_export_is_a_plan_file_of_the_current_assignment(client, personas, kafka_cluster, frozen):
    topic = make_topic(frozen, [[1, 2], [2, 3]])
    client.force_login(personas["viewer"])
    response = client.get(url("reassign_export", kafka_cluster) + f"?topics={topic}")
    doc = json.loads(response.content)
    assert [(p["partition"], p["replicas"]) for p in doc["partitions"]] == [(0, [1, 2]), (1, [2, 3])]


def test_an_unclean_election_needs_an_admin_and_the_typed_confirmation(
    client, personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2]])
    client.force_login(personas["operator"])
    form = {"election_type": "UNCLEAN", "scope": "selected", "partitions": f"{topic}-0", "confirmation": ""}
    assert client.post(url("election_page", kafka_cluster), form).status_code == 403
    client.force_login(personas["admin"])
    response = client.post(url("election_page", kafka_cluster), form)
    assert response.status_code == 200 and b"unclean sandbox" in response.content
    assert not Operation.objects.filter(kind="election.run").exists()


def test_a_preferred_election_runs_per_partition(client, personas, kafka_cluster, frozen, monkeypatch):
    topic = make_topic(frozen, [[1, 2]])
    client.force_login(personas["operator"])
    response = client.post(
        url("election_page", kafka_cluster),
        {"election_type": "PREFERRED", "scope": "selected", "partitions": f"{topic}-0"},
    )
    op = Operation.objects.get(kind="election.run")
    assert response.status_code == 302
    run_now(op.pk)
    op.refresh_from_db()
    assert op.state == OperationState.SUCCEEDED
    assert op.result["not_needed"] == 1
    assert AuditEvent.objects.filter(action="election.run.succeeded", operation_id=op.pk).exists()


def test_pages_render_for_a_viewer_without_actions(client, personas, kafka_cluster, frozen):
    client.force_login(personas["viewer"])
    for name in ("reassign_list", "throttle_list", "election_page"):
        response = client.get(url(name, kafka_cluster))
        assert response.status_code == 200, name
        assert b"Remove selected" not in response.content and b"Run election" not in response.content
    assert client.get(url("reassign_new", kafka_cluster)).status_code == 403


def test_the_balance_planner_shows_bytes_per_broker_and_its_lower_bound(
    client, personas, kafka_cluster, frozen
):
    topic = make_topic(frozen, [[1, 2]] * 6)
    client.force_login(personas["operator"])
    response = client.post(
        url("reassign_new", kafka_cluster),
        {"intent": "balance", "topics": topic, "throttle_mb": "1", "action": "preview"},
    )
    body = response.content.decode()
    assert response.status_code == 200, body[:2000]
    assert 'id="balance"' in body and "lower bound" in body
    assert 'id="diff"' in body and "→" in body


def test_start_runs_the_previewed_plan_and_refuses_one_that_is_not(client, personas, kafka_cluster, frozen):
    """An intent's Start runs the plan of the dry run (sent back with its digest), never a new one."""
    import re
    from html import unescape

    topic = make_topic(frozen, [[1, 2]])
    client.force_login(personas["operator"])
    form = {"intent": "move_off", "topics": topic, "brokers": "2", "throttle_mb": "1"}
    refused = client.post(url("reassign_new", kafka_cluster), {**form, "action": "start"})
    assert refused.status_code == 200 and b"Dry run first" in refused.content
    preview = client.post(url("reassign_new", kafka_cluster), {**form, "action": "preview"}).content.decode()
    digest = re.search(r'name="plan_sha256" value="([0-9a-f]{64})"', preview).group(1)
    previewed = unescape(re.search(r'name="previewed_plan" value="([^"]*)"', preview).group(1))
    target = json.loads(previewed)["partitions"][0]["replicas"]
    assert 2 not in target
    wrong = client.post(
        url("reassign_new", kafka_cluster),
        {**form, "action": "start", "plan_sha256": "0" * 64, "previewed_plan": previewed},
    )
    assert b"not the plan you reviewed" in wrong.content and not Reassignment.objects.exists()
    started = client.post(
        url("reassign_new", kafka_cluster),
        {**form, "action": "start", "plan_sha256": digest, "previewed_plan": previewed},
    )
    assert started.status_code == 302
    event = AuditEvent.objects.get(action="reassignment.execute.requested")
    assert event.params["plan_sha256"] == digest and event.params["moves"][0][3] == target


def test_the_form_reads_only_the_plans_partitions_and_start_reads_no_log_dirs(
    client, personas, kafka_cluster, frozen, monkeypatch
):
    """Issue 19: the dry run of a plan file reads log dirs of its own partitions only; Start reads none."""
    from console.kafka import KafkaGateway

    topic = make_topic(frozen, [[1, 2]])
    make_topic(frozen, [[2, 3]])  # another topic the plan does not name
    asked = []
    real = KafkaGateway.describe_log_dirs

    def spy(self, *args, **kwargs):
        asked.append(kwargs.get("partitions"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(KafkaGateway, "describe_log_dirs", spy)
    client.force_login(personas["operator"])
    form = plan_form(topic, [1, 3])
    preview = client.post(url("reassign_new", kafka_cluster), {**form, "action": "preview"})
    assert preview.status_code == 200 and b"plan_sha256" in preview.content
    assert asked and all(p is not None and {(x.topic, x.partition) for x in p} == {(topic, 0)} for p in asked)
    asked.clear()
    started = client.post(url("reassign_new", kafka_cluster), {**form, "action": "start"})
    assert started.status_code == 302 and asked == []


def test_start_checks_kafka_as_it_is_now_not_the_cached_snapshot(client, personas, kafka_cluster, frozen):
    """A partition moved between the dry run and Start (within the metadata cache's 30 s) fails the
    reviewed digest: the original replicas that throttles, cancel and the audit rely on are read fresh."""
    from console.clusters.actions import gateway_for
    from console.kafka import TopicPartition

    topic = make_topic(frozen, [[1, 2]])
    client.force_login(personas["operator"])
    form = plan_form(topic, [1, 3])
    preview = client.post(url("reassign_new", kafka_cluster), {**form, "action": "preview"}).content.decode()
    import re

    digest = re.search(r'name="plan_sha256" value="([0-9a-f]{64})"', preview).group(1)
    gw = gateway_for(kafka_cluster)  # someone moves the partition outside the console meanwhile
    gw.alter_partition_reassignments({TopicPartition(topic, 0): [2, 3]})
    for _ in range(60):
        frozen.advance(5)
        if not gw.list_partition_reassignments([TopicPartition(topic, 0)]):
            break
    started = client.post(
        url("reassign_new", kafka_cluster), {**form, "action": "start", "plan_sha256": digest}
    )
    assert started.status_code == 200 and b"not the plan you reviewed" in started.content
    assert not Reassignment.objects.exists()
