"""Share groups (KIP-932) through the area on the sandbox: "not supported" while share.version is 0,
the list and a group's page with per-partition start offset, log end and lag, the reset refused while
the group has members (naming them), then sent when it is empty and judged by the start offsets read
back (Kafka 4.1 applies nothing: "not applied"), offsets and group deletion with their audit trail, the
permission, and bad input refused with nothing sent."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from console.models import AuditEvent
from console.share_groups import actions, audit_names, core, reads
from console.share_groups.reads import ShareInvalid
from tests.unit.share_world import disable_share, make_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(kafka_cluster, sandbox):
    yield from make_world(kafka_cluster, sandbox)


def test_it_says_not_supported_and_how_to_enable_while_share_version_is_0(personas, kafka_cluster, sandbox):
    disable_share(sandbox)
    page = reads.list_page(actor=personas["viewer"], cluster=kafka_cluster)
    assert not page.support.supported and page.rows == []
    assert "share.version feature is 0" in page.support.reason
    assert "upgrade --feature share.version=1" in page.support.reason
    with pytest.raises(ShareInvalid, match="does not support share groups"):
        reads.detail(actor=personas["viewer"], cluster=kafka_cluster, group_id="any")


def test_the_list_and_the_group_show_members_and_lag(personas, kafka_cluster, world):
    viewer, group, topic = personas["viewer"], world["group"], world["topic"]
    page = reads.list_page(actor=viewer, cluster=kafka_cluster, query=group[3:])
    (row,) = page.rows
    assert (row.group_id, row.state, row.members, row.topics, row.lag) == (group, "Stable", 1, (topic,), 5)
    assert reads.list_page(actor=viewer, cluster=kafka_cluster, query=group, state="Empty").rows == []
    d = reads.detail(actor=viewer, cluster=kafka_cluster, group_id=group)
    (m,) = d.members
    assert m.member_id == world["member"] and {tp.partition for tp in m.assignment} == {0, 1}
    assert [(p.partition, p.start_offset, p.log_end, p.lag) for p in d.partitions] == [
        (0, 0, 5, 5),
        (1, 0, 0, 0),
    ]
    assert reads.detail(actor=viewer, cluster=kafka_cluster, group_id=group + "-never") is None
    # the consumer-groups list still leaves share groups out
    assert group not in {g.group_id for g in world["gw"].list_consumer_groups()}


def test_a_reset_is_refused_while_members_remain_then_sent_and_judged_by_reading_back(
    personas, kafka_cluster, world
):
    op, group, topic = personas["operator"], world["group"], world["topic"]
    spec = core.make_spec("to-latest", topic)
    with pytest.raises(ShareInvalid, match=f"1 active member: {world['member']}"):
        actions.reset_offsets(actor=op, cluster=kafka_cluster, group_id=group, spec=spec, confirmation=group)
    refused = AuditEvent.objects.filter(action=audit_names.SHARE_OFFSETS_RESET).latest("id")
    assert refused.outcome == "refused"
    world["members"].leave(group, world["member"])
    rows = actions.preview_reset(actor=op, cluster=kafka_cluster, group_id=group, spec=spec)
    assert [(r.partition, r.current, r.new) for r in rows] == [(0, 0, 5), (1, 0, 0)]
    with pytest.raises(ShareInvalid, match="Type the group id"):
        actions.reset_offsets(actor=op, cluster=kafka_cluster, group_id=group, spec=spec, confirmation="x")
    result = actions.reset_offsets(
        actor=op, cluster=kafka_cluster, group_id=group, spec=spec, confirmation=group
    )
    # Kafka 4.1 answers success and moves nothing; partition 1 already sat at its target
    assert [result.status(r) for r in result.rows] == ["not applied", "applied"] and not result.ok
    events = AuditEvent.objects.filter(action=audit_names.SHARE_OFFSETS_RESET).order_by("id")
    requested, outcome = list(events)[-2:]
    assert requested.outcome == "requested" and outcome.outcome != "requested"
    assert outcome.outcomes[f"{topic}-0"]["status"] == "not applied"


def test_offsets_and_the_group_are_deleted_once_empty(personas, kafka_cluster, world):
    op, group, topic = personas["operator"], world["group"], world["topic"]
    with pytest.raises(ShareInvalid, match="active member"):
        actions.delete_group(actor=op, cluster=kafka_cluster, group_id=group, confirmation=group)
    world["members"].leave(group, world["member"])
    done = actions.delete_offsets(
        actor=op, cluster=kafka_cluster, group_id=group, topics=[topic], confirmation=group
    )
    assert done.ok, done.message
    d = reads.detail(actor=op, cluster=kafka_cluster, group_id=group)
    assert d.state == "Empty" and d.partitions == ()
    gone = actions.delete_group(actor=op, cluster=kafka_cluster, group_id=group, confirmation=group)
    assert gone.ok and reads.detail(actor=op, cluster=kafka_cluster, group_id=group) is None
    last = AuditEvent.objects.filter(action=audit_names.SHARE_GROUP_DELETE).latest("id")
    assert last.outcomes[group]["status"] == "applied" and last.after == {"exists": False}


def test_a_viewer_is_refused_and_bad_input_changes_nothing(personas, kafka_cluster, world):
    group = world["group"]
    with pytest.raises(PermissionDenied):
        actions.delete_group(
            actor=personas["viewer"], cluster=kafka_cluster, group_id=group, confirmation=group
        )
    with pytest.raises(ShareInvalid, match="not a topic name"):
        actions.delete_offsets(
            actor=personas["operator"],
            cluster=kafka_cluster,
            group_id=group,
            topics=["bad topic"],
            confirmation=group,
        )
    with pytest.raises(ShareInvalid, match="Name the share group"):
        actions.delete_group(
            actor=personas["operator"], cluster=kafka_cluster, group_id="  ", confirmation=""
        )
    assert reads.detail(actor=personas["viewer"], cluster=kafka_cluster, group_id=group).state == "Stable"


def test_the_reconciler_re_reads_each_share_group_change_whose_outcome_was_lost(
    personas, kafka_cluster, world
):
    """A reset, offsets deletion or group deletion owed its outcome is settled from what Kafka shows:
    the group's start offsets, or whether it exists."""
    from console.audit import outcomes
    from console.models import OwedOutcome

    group = world["group"]
    for action in (
        audit_names.SHARE_OFFSETS_RESET,
        audit_names.SHARE_OFFSETS_DELETE,
        audit_names.SHARE_GROUP_DELETE,
    ):
        outcomes.requested(
            actor=personas["operator"], action=action, cluster=kafka_cluster, targets=[reads.target(group)],
            params={"group_id": group},
        )  # fmt: skip
    assert outcomes.reconcile(grace_s=0) == 3
    found = {e.action: e.after for e in AuditEvent.objects.filter(outcome="reconciled")}
    starts = reads.detail(actor=personas["viewer"], cluster=kafka_cluster, group_id=group).partitions
    shown = {f"{p.topic}-{p.partition}": (p.start_offset if p.start_offset >= 0 else None) for p in starts}
    assert found[audit_names.SHARE_OFFSETS_RESET] == found[audit_names.SHARE_OFFSETS_DELETE] == shown
    assert shown  # the member's assignment gave it share state
    assert found[audit_names.SHARE_GROUP_DELETE] == {"exists": True}
    assert not OwedOutcome.objects.exists()
