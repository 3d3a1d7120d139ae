"""Per gated action kind: the dry run an approver reviews, the drift check, and the run.

Each kind turns the operator's input into a JSON payload (what will run, exactly) and a review
(what it will do, as the approver sees it: rows of before -> after, and for a reassignment the
bytes per broker and the ETA). ``review`` is computed again right before running; when its
``pinned`` part differs from the reviewed one the cluster drifted and the change goes back for a
fresh review.
"""

from __future__ import annotations

from console.changes.kinds import acls, configs, groups, moves, topics
from console.changes.kinds.acls import prepare_acl_change
from console.changes.kinds.base import ChangeInvalid, Handler, Prepared
from console.changes.kinds.configs import gate_kind as config_gate_kind
from console.changes.kinds.configs import prepare_config
from console.changes.kinds.groups import (
    prepare_group_delete,
    prepare_group_offsets_delete,
    prepare_group_reset,
)
from console.changes.kinds.moves import prepare_election, prepare_reassignment, prepare_throttle
from console.changes.kinds.topics import prepare_partitions, prepare_topic_create, prepare_topic_delete

HANDLERS: dict[str, Handler] = {
    **topics.HANDLERS,
    **configs.HANDLERS,
    **acls.HANDLERS,
    **moves.HANDLERS,
    **groups.HANDLERS,
}

__all__ = [
    "HANDLERS",
    "ChangeInvalid",
    "Handler",
    "Prepared",
    "config_gate_kind",
    "prepare_acl_change",
    "prepare_config",
    "prepare_election",
    "prepare_group_delete",
    "prepare_group_offsets_delete",
    "prepare_group_reset",
    "prepare_partitions",
    "prepare_reassignment",
    "prepare_throttle",
    "prepare_topic_create",
    "prepare_topic_delete",
]
