"""Change control over deleting a consumer group and its committed offsets, against the sandbox or a
real Kafka with real consumers (classic and KIP-848): while a consumer runs, neither can even be held
(its dry run names the member); once it left, with offset resets held, both are held with the
offsets they delete, nothing is deleted until another operator approves, and then Kafka deletes
exactly that."""

from __future__ import annotations

import pytest

from console.changes import actions as changes
from console.changes import gate
from console.changes.kinds import ChangeInvalid
from console.groups import delete
from console.groups import held as groups_held
from console.kafka import KafkaOperationError
from console.models import AuditEvent, Role, RoleBinding
from console.models.requests import RequestState
from tests.unit.test_changes import run_queued

from .test_groups import COMMITS, PROTOCOLS, _committed, _described
from .test_groups import member as member  # noqa: F401  (fixtures)
from .test_groups import operator as operator  # noqa: F401
from .test_groups import produced as produced  # noqa: F401

pytestmark = pytest.mark.contract


@pytest.fixture
def approver(operator, django_user_model):  # noqa: F811
    _, cluster = operator
    user = django_user_model.objects.create_user(username="operator2", password="pw-operator2")
    RoleBinding.objects.create(cluster=cluster, user=user, role=Role.OPERATOR)
    return user


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_held_deletes_of_offsets_and_of_the_group_run_only_once_approved(
    gw,
    member,  # noqa: F811
    operator,  # noqa: F811
    approver,
    protocol,
):
    actor, cluster = operator
    changes.set_policy(
        actor=approver._meta.model.objects.get(username="admin"), cluster=cluster, enabled=True,
        kinds=["group.reset"], roles=[], approvers=1,
    )  # fmt: skip
    m, group, topic = member(protocol)
    _described(gw, group, lambda d: len(d.members) == 1 and d.members[0].assignment)
    with pytest.raises(ChangeInvalid, match=m.client_id):
        groups_held.prepare_group_delete(actor, cluster, group, confirmation=group)
    with pytest.raises(ChangeInvalid, match=m.client_id):
        groups_held.prepare_group_offsets_delete(actor, cluster, group, topic, confirmation=group)
    m.leave()
    _described(gw, group, lambda d: not d.members)

    prepared = groups_held.prepare_group_offsets_delete(actor, cluster, group, topic, confirmation=group)
    assert prepared.review["rows"] == [[topic, p, o, "deleted"] for p, o in sorted(COMMITS.items())]
    req = changes.submit_change(actor=actor, cluster=cluster, prepared=prepared)
    with pytest.raises(gate.ApprovalRequired, match="need approval"):
        delete.delete_offsets(actor=actor, cluster=cluster, group_id=group, topic=topic, confirmation=group)
    assert _committed(gw, group, topic) == COMMITS  # held: Kafka still has every offset
    changes.approve_change(actor=approver, request=req)
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    assert _committed(gw, group, topic) == {}

    req = changes.submit_change(
        actor=actor,
        cluster=cluster,
        prepared=groups_held.prepare_group_delete(actor, cluster, group, confirmation=group),
    )
    assert group in {g.group_id for g in gw.list_consumer_groups()}  # held: still there
    changes.approve_change(actor=approver, request=req)
    req = run_queued(req)
    assert req.state == RequestState.SUCCEEDED, req.result
    gone = gw.describe_consumer_groups([group])[group]
    assert isinstance(gone, KafkaOperationError) and gone.name == "GROUP_ID_NOT_FOUND"
    events = AuditEvent.objects.filter(request_id__startswith="change-", outcome="success")
    assert sorted(e.action for e in events) == ["group.delete", "group.offsets.delete"]
