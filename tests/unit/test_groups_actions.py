"""Consumer group actions against the sandbox: reads, the reset (dry run, refusals, execute), deletes,
their audit events (requested before Kafka, the outcome with before/after) and the reconciler's reader."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.exceptions import PermissionDenied

from console.audit import outcomes as outcomes_log
from console.groups import actions, delete, reads
from console.groups.core import ResetPlanError, ResetSpec
from console.models import AuditEvent
from console.models.outcomes import OwedOutcome
from sandbox.apis import APIS
from tests.unit.group_world import committed, log_topic, uniq

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_metadata_cache")]


def topic(sandbox, partitions: int = 3, start: int = 10, end: int = 100) -> str:
    """A topic whose partitions hold offsets start..end."""
    return log_topic(sandbox, uniq("gt"), partitions, start, end)


def group(sandbox, offsets: dict, members: dict | None = None) -> str:
    gid = uniq("grp")
    sandbox.add_group(gid, members=members, offsets=offsets)
    return gid


def reset(personas, cluster, gid: str, spec: ResetSpec, *, who="operator", typed: str | None = None, **kw):
    """``who`` resets the group's offsets, typing the group id (or ``typed``) to confirm."""
    confirmation = gid if typed is None else typed
    return actions.reset_offsets(
        actor=personas[who], cluster=cluster, group_id=gid, spec=spec, confirmation=confirmation, **kw
    )


def events(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("id"))


# -- reads ----------------------------------------------------------------------------------------


def test_the_list_shows_type_state_members_and_total_lag(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    busy = group(sandbox, {(t, 0): 40, (t, 1): 100}, members={"app-1": [(t, 0), (t, 1)]})
    idle = group(sandbox, {(t, 2): 95})
    page = reads.list_groups(actor=personas["viewer"], cluster=kafka_cluster, query="grp-", per_page=500)
    by_id = {r.group_id: r for r in page.items}
    assert (by_id[busy].state, by_id[busy].members, by_id[busy].lag, by_id[busy].topics) == (
        "Stable",
        1,
        60,
        (t,),
    )
    assert (by_id[idle].state, by_id[idle].members, by_id[idle].lag, by_id[idle].partitions) == (
        "Empty",
        0,
        5,
        1,
    )
    assert by_id[busy].group_type in ("classic", "")
    lagging = reads.list_groups(
        actor=personas["viewer"], cluster=kafka_cluster, topic=t, lagging=True, sort="lag"
    )
    assert [r.group_id for r in lagging.items] == [busy, idle]
    empty = reads.list_groups(actor=personas["viewer"], cluster=kafka_cluster, query=busy, state="empty")
    assert empty.items == [] and empty.total == 0
    bad = reads.list_groups(actor=personas["viewer"], cluster=kafka_cluster, query="(", regex=True)
    assert bad.query_error.startswith("The regular expression is not valid") and bad.items == []


def test_the_list_is_for_people_who_see_the_cluster(personas, kafka_cluster):
    with pytest.raises(PermissionDenied):
        reads.list_groups(actor=personas["outsider"], cluster=kafka_cluster)


def test_a_groups_page_has_members_and_per_partition_lag(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 100}, members={"app-1": [(t, 0), (t, 2)]})
    detail = reads.group_detail(actor=personas["viewer"], cluster=kafka_cluster, group_id=gid)
    assert [(m.client_id, m.count, m.partitions) for m in detail.members] == [("app-1", 2, f"{t}: 0, 2")]
    rows = [(p.partition, p.committed, p.log_end, p.lag, bool(p.owner)) for p in detail.partitions]
    assert rows == [(0, 40, 100, 60, True), (1, 100, 100, 0, False), (2, None, 100, None, True)]
    assert detail.total_lag == 60


def test_the_topic_lists_the_groups_with_offsets_on_it(sandbox, personas, kafka_cluster):
    t, other = topic(sandbox), topic(sandbox)
    on_it = group(sandbox, {(t, 0): 90, (t, 1): 99})
    group(sandbox, {(other, 0): 1})
    got = reads.topic_consumers(actor=personas["viewer"], cluster=kafka_cluster, topic=t)
    assert [(c.group_id, c.partitions, c.lag) for c in got] == [(on_it, 2, 11)]


# -- reset ----------------------------------------------------------------------------------------


def test_a_dry_run_shows_current_to_new_and_changes_nothing(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 60})
    preview = actions.preview_reset(
        actor=personas["operator"], cluster=kafka_cluster, group_id=gid, spec=ResetSpec("shift-by", value=-35)
    )
    assert [(r.partition, r.current, r.new, r.lag_before, r.lag_after) for r in preview.plan.rows] == [
        (0, 40, 10, 60, 90),
        (1, 60, 25, 40, 75),
    ]
    assert preview.blocked == ""
    assert committed(sandbox, gid) == {(t, 0): 40, (t, 1): 60}
    assert not AuditEvent.objects.filter(action__startswith="group.").exists()


def test_it_resets_an_empty_group_and_audits_before_and_after(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 60})
    result = reset(personas, kafka_cluster, gid, ResetSpec("to-earliest", "topic", t), source_ip="10.1.2.3")
    assert [(o.partition, o.before, o.after, o.ok) for o in result.outcomes] == [
        (0, 40, 10, True),
        (1, 60, 10, True),
        (2, None, 10, True),
    ]
    assert committed(sandbox, gid) == {(t, 0): 10, (t, 1): 10, (t, 2): 10}
    requested, outcome = events("group.offsets.reset")
    assert (requested.outcome, outcome.outcome, outcome.pk) == ("requested", "success", result.event_id)
    assert requested.params["offsets"] == [[t, 0, 10], [t, 1, 10], [t, 2, 10]]
    assert requested.params["reset"] == f"--to-earliest --topic {t}"
    assert outcome.targets == [f"group:{gid}", f"topic:{t}"]
    assert outcome.before == {f"{t}-0": 40, f"{t}-1": 60, f"{t}-2": None}
    assert outcome.after == {f"{t}-0": 10, f"{t}-1": 10, f"{t}-2": 10}
    assert outcome.params["requested_event"] == requested.pk and outcome.source_ip == "10.1.2.3"
    assert outcome.outcomes == {"reset": {"ok": True, "partitions": 3}}  # counted, not 3 copies of "ok"
    assert not OwedOutcome.objects.exists()


def test_a_partition_kafka_refuses_is_named_in_the_outcome_and_the_event_is_partial(
    sandbox, personas, kafka_cluster, monkeypatch
):
    from console.kafka import KafkaGateway, KafkaOperationError, TopicPartition

    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 60})
    real = KafkaGateway.alter_consumer_group_offsets

    def refuse_partition_1(self, group_id, offsets):
        got = real(self, group_id, {tp: o for tp, o in offsets.items() if tp.partition != 1})
        got[TopicPartition(t, 1)] = KafkaOperationError(87, "INVALID_COMMIT_OFFSET_SIZE", "too big")
        return got

    monkeypatch.setattr(KafkaGateway, "alter_consumer_group_offsets", refuse_partition_1)
    result = reset(personas, kafka_cluster, gid, ResetSpec("to-earliest", "topic", t))
    assert [(o.partition, o.ok, o.status) for o in result.outcomes] == [
        (0, True, "reset"),
        (1, False, "failed"),
        (2, True, "reset"),  # --topic names every partition of the topic, committed or not
    ]
    outcome = AuditEvent.objects.get(pk=result.event_id)
    assert outcome.outcome == "partial"
    assert outcome.outcomes["reset"] == {"ok": True, "partitions": 2} and len(outcome.outcomes) == 2
    assert outcome.outcomes[f"{t}-1"]["ok"] is False and outcome.outcomes[f"{t}-1"]["status"] == "failed"
    assert "INVALID_COMMIT_OFFSET_SIZE" in outcome.outcomes[f"{t}-1"]["message"]
    assert outcome.before == {f"{t}-0": 40, f"{t}-1": 60, f"{t}-2": None}
    assert outcome.after == {f"{t}-0": 10, f"{t}-1": 60, f"{t}-2": 10}


def test_a_reset_is_refused_while_the_group_has_members_named(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40}, members={"billing-app": [(t, 0)]})
    preview = actions.preview_reset(
        actor=personas["operator"], cluster=kafka_cluster, group_id=gid, spec=ResetSpec("to-latest")
    )
    assert "billing-app (/127.0.0.1)" in preview.blocked
    with pytest.raises(actions.GroupNotEmpty, match=r"1 active member: billing-app \(/127.0.0.1\)"):
        reset(personas, kafka_cluster, gid, ResetSpec("to-latest"))
    assert committed(sandbox, gid) == {(t, 0): 40}
    [event] = events("group.offsets.reset")
    assert event.outcome == "refused" and "billing-app" in event.params["reason"]
    assert event.targets == [f"group:{gid}"]


@pytest.mark.parametrize("typed", ["", "wrong", " "])
def test_a_reset_needs_the_group_id_typed(sandbox, personas, kafka_cluster, typed):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    with pytest.raises(actions.ConfirmationError, match=f"Type the group id \\('{gid}'\\)"):
        reset(personas, kafka_cluster, gid, ResetSpec("to-latest"), typed=typed)
    assert committed(sandbox, gid) == {(t, 0): 40}
    assert [e.outcome for e in events("group.offsets.reset")] == ["refused"]


def test_a_plan_that_cannot_be_made_is_refused_before_kafka(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    with pytest.raises(ResetPlanError, match="no committed offset"):
        reset(personas, kafka_cluster, gid, ResetSpec("shift-by", "topic", t, value=1))
    assert [e.outcome for e in events("group.offsets.reset")] == ["refused"]


@pytest.mark.parametrize("who", ["viewer", "requester", "auditor", "outsider"])
def test_only_operators_reset_offsets(sandbox, personas, kafka_cluster, who):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    with pytest.raises(PermissionDenied, match="group.manage"):
        reset(personas, kafka_cluster, gid, ResetSpec("to-latest"), who=who)
    with pytest.raises(PermissionDenied):
        actions.preview_reset(
            actor=personas[who], cluster=kafka_cluster, group_id=gid, spec=ResetSpec("to-latest")
        )
    assert committed(sandbox, gid) == {(t, 0): 40}


def test_the_time_is_iso_8601_or_epoch_ms():
    assert actions.timestamp_ms("1700000000000") == 1_700_000_000_000
    assert actions.timestamp_ms("2024-05-01T12:00:00") == int(
        datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp() * 1000
    )
    assert actions.timestamp_ms("2024-05-01T14:00:00+02:00") == actions.timestamp_ms("2024-05-01T12:00:00Z")
    for bad in ("yesterday", "2024-13-01T00:00:00", "9" * 40):
        with pytest.raises(ResetPlanError):
            actions.timestamp_ms(bad)


def test_an_owed_reset_outcome_is_reconciled_from_the_committed_offsets(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 55})
    req = outcomes_log.requested(
        actor=personas["operator"],
        action="group.offsets.reset",
        cluster=kafka_cluster,
        targets=[f"group:{gid}"],
        params={"group": gid, "offsets": [[t, 0, 10], [t, 1, 10]]},
    )
    assert outcomes_log.reconcile(grace_s=0) == 1
    last = AuditEvent.objects.filter(action="group.offsets.reset").order_by("-id").first()
    assert last.outcome == "reconciled" and last.params["requested_event"] == req.event_id
    assert last.after == {f"{t}-0": 55, f"{t}-1": None}


# -- delete ---------------------------------------------------------------------------------------


def test_a_group_with_members_is_not_deleted(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40}, members={"app-9": [(t, 0)]})
    with pytest.raises(actions.GroupNotEmpty, match="app-9"):
        delete.delete_group(actor=personas["operator"], cluster=kafka_cluster, group_id=gid, confirmation=gid)
    assert gid in sandbox.state.groups
    assert [e.outcome for e in events("group.delete")] == ["refused"]


def test_an_empty_group_is_deleted_and_audited_with_its_offsets(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    done = delete.delete_group(
        actor=personas["operator"], cluster=kafka_cluster, group_id=gid, confirmation=gid
    )
    assert (done.ok, done.status) == (True, "deleted")
    assert gid not in sandbox.state.groups
    requested, outcome = events("group.delete")
    assert (requested.outcome, outcome.outcome) == ("requested", "success")
    assert outcome.before == {"state": "Empty", "offsets": {f"{t}-0": 40}}
    assert outcome.after == {"exists": False}
    assert outcome.outcomes == {f"group:{gid}": {"ok": True, "status": "deleted"}}


def test_deleting_needs_the_group_id_and_the_permission(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    with pytest.raises(actions.ConfirmationError):
        delete.delete_group(actor=personas["operator"], cluster=kafka_cluster, group_id=gid, confirmation="x")
    with pytest.raises(PermissionDenied):
        delete.delete_group(actor=personas["viewer"], cluster=kafka_cluster, group_id=gid, confirmation=gid)
    assert gid in sandbox.state.groups
    assert [e.outcome for e in events("group.delete")] == ["refused", "refused"]


def _sandbox_serves_offset_delete() -> bool:
    return 47 in APIS  # importing sandbox (its server) registered every handler


def test_a_topics_offsets_are_deleted_from_a_group_per_partition(sandbox, personas, kafka_cluster):
    if not _sandbox_serves_offset_delete():
        pytest.skip("the sandbox does not serve OffsetDelete (API 47) yet")
    t, other = topic(sandbox), topic(sandbox)
    gid = group(sandbox, {(t, 0): 40, (t, 1): 50, (other, 0): 7})
    result = delete.delete_offsets(
        actor=personas["operator"], cluster=kafka_cluster, group_id=gid, topic=t, confirmation=gid
    )
    assert [(o.partition, o.before, o.ok, o.status) for o in result.outcomes] == [
        (0, 40, True, "deleted"),
        (1, 50, True, "deleted"),
    ]
    assert committed(sandbox, gid) == {(other, 0): 7}
    requested, outcome = events("group.offsets.delete")
    assert outcome.before == {f"{t}-0": 40, f"{t}-1": 50} and outcome.after == {
        f"{t}-0": None,
        f"{t}-1": None,
    }


def test_deleting_offsets_of_a_topic_the_group_has_none_for_is_refused(sandbox, personas, kafka_cluster):
    t = topic(sandbox)
    gid = group(sandbox, {(t, 0): 40})
    with pytest.raises(delete.NoOffsets, match="no committed offsets for topic 'elsewhere'"):
        delete.delete_offsets(
            actor=personas["operator"],
            cluster=kafka_cluster,
            group_id=gid,
            topic="elsewhere",
            confirmation=gid,
        )
    assert [e.outcome for e in events("group.offsets.delete")] == ["refused"]
