"""The API's role matrix table: every route of the ``api`` namespace, by method, with a request that works
for the roles allowed to send it (tests/unit/test_api_matrix.py runs it with a token per role on two clusters).

``build(w)`` gets the World of the cluster under test and returns (URL kwargs besides the cluster
name, JSON body or query). A route missing here fails test_every_api_route_has_rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from console.kafka import AclBinding
from tests.unit.matrix_rows import ADMINS, AUDITORS, OPERATORS, REQUESTERS, SUPER, VIEWERS
from tests.unit.matrix_world import World, uniq

EVERYONE = VIEWERS | {"outsider"}
ANON = "anonymous"


@dataclass(frozen=True)
class ApiRow:
    route: str
    method: str
    allowed: frozenset[str]
    ok: int
    build: Callable[[World], tuple[dict, dict]] = lambda w: ({}, {})
    label: str = ""
    changes: bool = True  # for a mutating method: an allowed request changes something
    cluster_less: bool = False  # no cluster in the URL: a role-less caller is refused 403, not 404
    special: tuple[tuple[str, int], ...] = ()
    audits_refusals: bool = False  # a refused read is audited too (the trail's export)

    @property
    def id(self) -> str:
        return self.label or f"{self.route}-{self.method}"

    @property
    def mutating(self) -> bool:
        return self.method != "get"

    def expected(self, role: str) -> int:
        if role == ANON:
            return 401
        if role in dict(self.special):
            return dict(self.special)[role]
        if role in self.allowed:
            return self.ok
        return 403 if (self.cluster_less or role != "outsider") else 404

    def refused(self, role: str) -> bool:
        return self.expected(role) >= 400


def _topic(w: World) -> tuple[dict, dict]:
    return {"topic": w.topic()}, {}


def _group(body=lambda g, t: {}) -> Callable:
    def build(w: World):
        topic = w.topic()
        with w.sandbox.state.lock:
            w.sandbox.state.topics[topic].partitions[0].end_offset = 10
        group = uniq("apigroup")
        w.sandbox.add_group(group, offsets={(topic, 0): 5})
        return {"group": group}, body(group, topic)

    return build


def _transactional_id(w: World) -> tuple[dict, dict]:
    """A transactional id its coordinator knows (an empty one, written into the sandbox's state)."""
    from sandbox import transactions as tx

    tid = uniq("txn-id")
    with w.sandbox.state.lock:
        tx.coordinator_of(w.sandbox.state).txns[tid] = tx.TxnMetadata(
            tid, producer_id=900_000, producer_epoch=0
        )
    return {"transactional_id": tid}, {}


def _hanging(w: World) -> tuple[dict, dict]:
    """A hanging transaction on a new topic and the abort of it by its start offset."""
    from sandbox.testing import hanging_transaction

    topic = w.topic()
    hung = hanging_transaction(w.sandbox, topic, 0, records=2, age_ms=20 * 60_000)
    return {}, {"topic": topic, "partition": 0, "start_offset": hung["start_offset"], "confirm": f"{topic}-0"}


def _spare_voter(w: World) -> int:
    """A voter that is not the active controller (the matrix gives the voter set back after each case;
    a run of hostile bodies may have removed them all: the first is made a voter again)."""
    st = w.sandbox.state
    with st.lock:
        spare = sorted(c for c in st.controllers if c != st.active_controller)
        node = next((c for c in spare if c not in st.removed_voters), spare[0])
        st.removed_voters.discard(node)
        return node


def _removed_voter(w: World) -> tuple[dict, dict]:
    """A controller taken out of the voter set on the sandbox, to add back (its endpoint typed: the
    cluster is registered by its brokers, which do not know it)."""
    node = _spare_voter(w)
    with w.sandbox.state.lock:
        w.sandbox.state.removed_voters.add(node)
        port = w.sandbox.state.controllers[node].port
    return {}, {"node_id": node, "endpoint": f"CONTROLLER://127.0.0.1:{port}"}


def _scram_user(w: World) -> tuple[dict, dict]:
    """A user with a SCRAM-SHA-512 credential, made straight on Kafka."""
    from console.clusters.actions import gateway_for

    user = uniq("scram")
    gateway_for(w.cluster).upsert_scram_credential(user, "SCRAM-SHA-512", "matrix-password", 4096)
    return {}, {"user": user, "mechanism": "SCRAM-SHA-512"}


def _acl(w: World) -> dict:
    return w.acl()


def _existing_acl(w: World) -> tuple[dict, dict]:
    a = w.acl()
    binding = AclBinding(
        a["resource_type"],
        a["resource_name"],
        a["pattern_type"],
        a["principal"],
        a["host"],
        a["operation"],
        a["permission"],
    )
    from console.clusters.actions import gateway_for

    gateway_for(w.cluster).create_acls([binding])
    flt = {"resource_type": "TOPIC", "resource_name": a["resource_name"], "principal": a["principal"]}
    return {}, {"filters": [flt], "dry_run": False}


def _plan(dry_run: bool) -> Callable:
    def build(w: World):
        topic = w.topic()
        plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 3]}]}
        return {}, {"plan": plan, "throttle_bytes_per_s": 1024 * 1024, "dry_run": dry_run}

    return build


def _request_body(prefix: str) -> Callable:
    def build(w: World):
        payload = {"name": uniq(prefix + "api"), "partitions": 1, "replication_factor": 1, "configs": {}}
        return {}, {"kind": "topic.create", "payload": payload, "reason": "the API matrix"}

    return build


def _election(kind: str) -> Callable:
    def build(w: World):
        body = {"election_type": kind, "partitions": [{"topic": w.topic(), "partition": 0}]}
        if kind == "UNCLEAN":
            body["confirmation"] = f"unclean {w.cluster.name}"
        return {}, body

    return build


def _event(w: World) -> tuple[dict, dict]:
    from console.models import AuditEvent

    w.request(w.cluster)  # its request.submit event is on the cluster
    return {"event_id": AuditEvent.objects.filter(cluster_id=w.cluster.pk).order_by("-pk").first().pk}, {}


def _operation(w: World) -> tuple[dict, dict]:
    return {"op_id": w.reassignment().operation_id}, {}


def _rid(body: dict | None = None, **pacing) -> Callable:
    return lambda w: ({"rid": w.reassignment(**pacing).pk}, dict(body or {}))


def _empty_share_group(w: World) -> tuple[str, str]:
    from tests.unit.share_world import empty_group

    return empty_group(w.sandbox, w.cluster)


def _req(who: str = "requester") -> Callable:
    return lambda w: ({"request_id": w.request(w.cluster).pk}, {"comment": "by the API matrix"})


CONFIG = {"changes": [{"name": "retention.ms", "op": "SET", "value": "5000"}]}
BROKER_CONFIG = {"changes": [{"name": "log.retention.ms", "op": "SET", "value": "123456789"}]}
# A request: the requester and whoever may approve see it; a viewer does not.
REQUEST_READERS = (VIEWERS - {"viewer"}) | frozenset()

ROWS: tuple[ApiRow, ...] = (
    # clusters
    ApiRow("clusters", "get", EVERYONE, 200, cluster_less=True),
    ApiRow("fleet", "get", EVERYONE, 200, cluster_less=True),
    ApiRow(
        "clusters",
        "post",
        SUPER,
        201,
        lambda w: ({}, {"name": uniq("apinew"), "bootstrap_servers": "127.0.0.1:1", "request_timeout_s": 5}),
        cluster_less=True,
    ),
    ApiRow("cluster", "get", VIEWERS, 200),
    # topics
    ApiRow("topics", "get", VIEWERS, 200),
    ApiRow(
        "topics",
        "post",
        OPERATORS,
        201,
        lambda w: ({}, {"name": uniq("api"), "partitions": 1, "replication_factor": 1}),
    ),
    ApiRow(
        "topics",
        "post",
        OPERATORS,
        200,
        lambda w: (
            {},
            {"name": uniq("api"), "partitions": 1, "replication_factor": 1, "validate_only": True},
        ),
        label="topics-post-validate-only",
        changes=False,
    ),
    ApiRow(
        "topics-batch",
        "post",
        OPERATORS,
        201,
        lambda w: ({}, {"topics": [{"name": uniq("apib"), "partitions": 1, "replication_factor": 1}]}),
    ),
    ApiRow(
        "topics-delete",
        "post",
        OPERATORS,
        200,
        lambda w: (lambda t: ({}, {"names": [t], "confirmation": t}))(w.topic()),
    ),
    ApiRow(
        "topics-delete",
        "post",
        OPERATORS,
        200,
        lambda w: ({}, {"names": [w.topic()]}),
        label="topics-delete-preview",
        changes=False,
    ),
    ApiRow("topic", "get", VIEWERS, 200, _topic),
    ApiRow("topic-partitions", "post", OPERATORS, 200, lambda w: ({"topic": w.topic()}, {"total_count": 2})),
    ApiRow("topic-configs", "get", VIEWERS, 200, _topic),
    ApiRow("topic-configs", "post", OPERATORS, 200, lambda w: ({"topic": w.topic()}, CONFIG)),
    ApiRow(
        "topic-configs",
        "post",
        OPERATORS,
        200,
        lambda w: ({"topic": w.topic()}, {**CONFIG, "validate_only": True}),
        label="topic-configs-post-validate-only",
        changes=False,
    ),
    # brokers
    ApiRow("brokers", "get", VIEWERS, 200),
    ApiRow("broker-configs", "get", VIEWERS, 200, lambda w: ({"broker": "1"}, {})),
    ApiRow("broker-configs", "post", OPERATORS, 200, lambda w: ({"broker": "1"}, BROKER_CONFIG)),
    ApiRow(
        "broker-configs",
        "post",
        OPERATORS,
        200,
        lambda w: ({"broker": "-"}, BROKER_CONFIG),
        label="broker-configs-post-cluster-default",
    ),
    # ACLs
    ApiRow("acls", "get", OPERATORS, 200),
    ApiRow("acls", "post", OPERATORS, 200, lambda w: ({}, {"creates": [_acl(w)]})),
    ApiRow("acls-delete", "post", OPERATORS, 200, _existing_acl),
    ApiRow(
        "acls-delete",
        "post",
        OPERATORS,
        200,
        lambda w: ({}, {"filters": [{"principal": "User:nobody-at-all"}], "dry_run": True}),
        label="acls-delete-preview",
        changes=False,
    ),
    ApiRow(
        "acls-effective",
        "get",
        OPERATORS,
        200,
        lambda w: ({}, {"principal": "User:app", "resource_type": "TOPIC", "resource_name": "x"}),
    ),
    ApiRow("acls-export", "get", OPERATORS, 200, lambda w: ({}, {"output": "script"})),
    # client quotas
    ApiRow(
        "topic-purge",
        "post",
        OPERATORS,
        200,
        lambda w: (lambda t: ({"topic": t}, {"all": True, "confirm": t}))(w.topic()),
    ),
    ApiRow("quotas", "get", VIEWERS, 200),
    ApiRow(
        "quotas",
        "post",
        OPERATORS,
        200,
        lambda w: ({}, {"entity": "user=matrix-quota", "changes": {"producer_byte_rate": 1024}}),
    ),
    ApiRow("quotas-effective", "get", VIEWERS, 200, lambda w: ({}, {"user": "alice", "client_id": "app"})),
    # SCRAM users (admin only; the password is write-only)
    ApiRow("scram-users", "get", ADMINS, 200),
    ApiRow(
        "scram-users",
        "post",
        ADMINS,
        200,
        lambda w: ({}, {"user": uniq("scram"), "mechanism": "SCRAM-SHA-256", "password": "matrix-password"}),
    ),
    ApiRow("scram-users-delete", "post", ADMINS, 200, _scram_user),
    # transactions (reads: viewers; an abort: admins)
    ApiRow("transactions", "get", VIEWERS, 200),
    ApiRow("transactions-hanging", "get", VIEWERS, 200, lambda w: ({}, {"broker_id": "1"})),
    ApiRow("transactions-producers", "get", VIEWERS, 200, lambda w: ({}, {"topic": w.topic()})),
    ApiRow("transaction", "get", VIEWERS, 200, _transactional_id),
    # moves between a broker's log dirs (reads: viewers; a move: operators; the world's brokers have one
    # dir, so the dry run of a "move" to it answers with the problem, nothing sent)
    ApiRow("broker-log-dirs", "get", VIEWERS, 200, lambda w: ({"broker": 1}, {})),
    ApiRow(
        "log-dir-moves",
        "post",
        OPERATORS,
        200,
        lambda w: (
            {},
            {
                "moves": [
                    {"topic": w.topic(), "partition": 0, "broker": 1, "dir": "/var/lib/kafka/broker-1/data"}
                ],
                "dry_run": True,
            },
        ),
        changes=False,
    ),  # fmt: skip
    ApiRow("log-dir-move", "get", VIEWERS, 200, lambda w: ({"op_id": w.log_dir_move().pk}, {})),
    # share groups (reads: viewers; reset and delete: operators, the group id typed)
    ApiRow("share-groups", "get", VIEWERS, 200),
    ApiRow("share-group", "get", VIEWERS, 200, lambda w: ({"group_id": _empty_share_group(w)[0]}, {})),
    ApiRow(
        "share-groups-reset",
        "post",
        OPERATORS,
        200,
        lambda w: (lambda g, t: ({}, {"group_id": g, "mode": "to-earliest", "topic": t}))(
            *_empty_share_group(w)
        ),
        changes=False,  # a dry run unless "execute"
    ),
    ApiRow(
        "share-groups-delete",
        "post",
        OPERATORS,
        200,
        lambda w: (lambda g, t: ({}, {"group_id": g, "confirm": g}))(*_empty_share_group(w)),
    ),
    ApiRow("transactions-abort", "post", ADMINS, 200, _hanging),
    # the KRaft lifecycle (admins)
    ApiRow("quorum-features", "get", ADMINS, 200),
    ApiRow(
        "quorum-features",
        "post",
        ADMINS,
        200,
        lambda w: ({}, {"updates": {"metadata.version": 27}, "dry_run": True}),
        label="quorum-features-dry-run",  # Kafka's validate-only answer, audited as a dry run
    ),
    ApiRow("quorum-voter-remove", "post", ADMINS, 200, lambda w: ({}, {"node_id": _spare_voter(w)})),
    ApiRow("quorum-voter-add", "post", ADMINS, 200, _removed_voter),
    ApiRow(
        "broker-unregister",
        "post",
        ADMINS,
        409,
        lambda w: ({"broker": 1}, {}),
        label="broker-unregister-live",
        changes=False,  # refused before Kafka: alive and hosting replicas
    ),
    # consumer groups
    ApiRow("groups", "get", VIEWERS, 200),
    ApiRow("group", "get", VIEWERS, 200, _group()),
    ApiRow(
        "group-reset",
        "post",
        OPERATORS,
        200,
        _group(lambda g, t: {"mode": "to-latest", "dry_run": False, "confirmation": g}),
    ),
    ApiRow(
        "group-reset",
        "post",
        OPERATORS,
        200,
        _group(lambda g, t: {"mode": "to-earliest", "scope": "topic", "topic": t}),
        label="group-reset-dry-run",
        changes=False,
    ),
    ApiRow("group-delete", "post", OPERATORS, 200, _group(lambda g, t: {"confirmation": g})),
    ApiRow(
        "group-offsets-delete", "post", OPERATORS, 200, _group(lambda g, t: {"topic": t, "confirmation": g})
    ),
    # reassignments, throttles, elections
    ApiRow("reassignments", "get", VIEWERS, 200),
    ApiRow("reassignments", "post", OPERATORS, 201, _plan(False)),
    ApiRow(
        "reassignments",
        "post",
        OPERATORS,
        200,
        _plan(True),
        label="reassignments-post-dry-run",
        changes=False,
    ),
    ApiRow("reassignment", "get", VIEWERS, 200, _rid()),
    ApiRow("reassignment-throttle", "post", OPERATORS, 200, _rid({"throttle_bytes_per_s": 2 * 1024 * 1024})),
    ApiRow("reassignment-cancel", "post", OPERATORS, 202, _rid()),
    ApiRow("reassignment-pause", "post", OPERATORS, 200, _rid(max_moves_per_broker=1)),
    ApiRow("reassignment-resume", "post", OPERATORS, 200, _rid(max_moves_per_broker=1, paused=True)),
    ApiRow("reassignments-external", "get", VIEWERS, 200),
    ApiRow(
        "reassignments-external",
        "post",
        OPERATORS,
        200,
        lambda w: ({}, {"partitions": [{"topic": w.external_move(), "partition": 0}]}),
    ),
    ApiRow("throttles", "get", VIEWERS, 200),
    ApiRow("throttles", "post", OPERATORS, 200, lambda w: ({}, {"keys": [w.foreign_throttle()]})),
    ApiRow("elections", "get", VIEWERS, 200),
    ApiRow("elections", "post", OPERATORS, 202, _election("PREFERRED")),
    ApiRow("elections", "post", ADMINS, 202, _election("UNCLEAN"), label="elections-post-unclean"),
    # requests
    ApiRow("requests", "get", VIEWERS, 200),
    ApiRow("requests", "post", REQUESTERS, 201, _request_body("team-a.")),
    ApiRow(
        "requests",
        "post",
        REQUESTERS,
        201,
        _request_body("team-z."),
        label="requests-post-outside-namespace",
        special=(("requester", 422),),
    ),
    ApiRow("request", "get", REQUEST_READERS, 200, _req(), special=(("viewer", 404),)),
    ApiRow("request-approve", "post", OPERATORS, 200, _req()),
    ApiRow("request-reject", "post", OPERATORS, 200, _req()),
    ApiRow(
        "request-cancel",
        "post",
        frozenset({"requester"}),
        200,
        lambda w: ({"request_id": w.request(w.cluster).pk}, {}),
        special=(("viewer", 404),),
    ),
    # capacity, quorum
    ApiRow("capacity", "get", VIEWERS, 200),
    ApiRow("capacity-run", "post", OPERATORS, 202, lambda w: ({}, {"days": 3})),
    ApiRow("capacity-snapshot", "post", OPERATORS, 200),
    ApiRow("quorum", "get", VIEWERS, 200),
    # audit and operations (no cluster in the URL)
    ApiRow("audit-events", "get", AUDITORS, 200, cluster_less=True),
    ApiRow(
        "audit-event",
        "get",
        AUDITORS,
        200,
        _event,
        cluster_less=True,
    ),
    ApiRow("audit-export", "get", AUDITORS, 200, cluster_less=True, audits_refusals=True),
    ApiRow("audit-chain", "get", AUDITORS, 200, cluster_less=True),
    ApiRow("audit-chain", "post", AUDITORS, 202, cluster_less=True),
    ApiRow("operation", "get", VIEWERS, 200, _operation, cluster_less=True, special=(("outsider", 404),)),
    # search across clusters: everyone signed in (an outsider's answer names no cluster)
    ApiRow("search", "get", EVERYONE, 200, lambda w: ({}, {"q": "topic"}), cluster_less=True),
)


def _controller(body: dict | None = None) -> Callable:
    def build(w: World):
        return {"name": w.controllers().name, "node_id": w.sandbox.state.active_controller}, dict(body or {})

    return build


def _viewer_binding(w: World) -> tuple[dict, dict]:
    return {"binding_id": w.cluster.bindings.get(user=w.people["viewer"]).pk}, {}


def _notify_channel(w: World) -> tuple[dict, dict]:
    from console.notify import actions as notify

    channel, _ = notify.create_channel(
        actor=w.people["admin"], cluster=w.cluster, name=uniq("ch"), kind="slack",
        url="https://hooks.example.com/hook", events=["request.submitted"],
    )  # fmt: skip
    return {"channel_id": channel.pk}, {}


def _notify_update(w: World) -> tuple[dict, dict]:
    kwargs, _ = _notify_channel(w)
    return kwargs, {"name": uniq("renamed"), "events": ["request.approved"], "enabled": False}


ADMIN_ROWS: tuple[ApiRow, ...] = (
    ApiRow("change-policy", "get", ADMINS, 200),
    ApiRow(
        "change-policy",
        "post",
        ADMINS,
        200,
        lambda w: ({}, {"enabled": True, "kinds": ["topic.delete"], "roles": ["operator"], "approvers": 2}),
    ),
    ApiRow("notifications", "get", ADMINS, 200),
    ApiRow(
        "notifications",
        "post",
        ADMINS,
        201,
        lambda w: (
            {},
            {
                "name": uniq("hook"),
                "kind": "webhook",
                "url": "https://hooks.example.com/x",
                "events": ["reassignment.finished"],
            },
        ),
    ),
    ApiRow("notifications-log", "get", ADMINS, 200),
    ApiRow("notification", "get", ADMINS, 200, _notify_channel),
    ApiRow("notification", "post", ADMINS, 200, _notify_update),
    ApiRow("notification-delete", "post", ADMINS, 200, _notify_channel),
    ApiRow("notification-test", "post", ADMINS, 202, _notify_channel),
    ApiRow(
        "cluster-settings", "post", ADMINS, 200, lambda w: ({}, {"description": "edited by the API matrix"})
    ),
    ApiRow("cluster-remove", "post", ADMINS, 200, lambda w: ({}, {"confirm_name": w.cluster.name})),
    ApiRow("cluster-test", "post", VIEWERS, 200),  # every connection test is audited
    ApiRow("cluster-health", "post", OPERATORS, 202),
    ApiRow("access", "get", ADMINS, 200),
    ApiRow("access", "post", ADMINS, 201, lambda w: ({}, {"user": "outsider", "role": "viewer"})),
    ApiRow("access-revoke", "post", ADMINS, 200, _viewer_binding),
    ApiRow("topics-policy", "get", VIEWERS, 200),
    ApiRow(
        "topics-policy", "post", ADMINS, 200, lambda w: ({}, {"max_partitions": 64, "max_batch_size": 10})
    ),
    ApiRow("topic-consumers", "get", VIEWERS, 200, _topic),
    ApiRow("broker", "get", VIEWERS, 200, lambda w: ({"broker": "1"}, {})),
    ApiRow("reassignments-export", "get", VIEWERS, 200, lambda w: ({}, {"topics": w.topic()})),
    ApiRow("request-rules", "get", ADMINS, 200),
    ApiRow(
        "request-rules",
        "post",
        ADMINS,
        200,
        lambda w: ({}, {"enabled": True, "kinds": ["topic.create"], "max_partitions": 6}),
    ),
    ApiRow("controller", "get", VIEWERS, 200, _controller()),
    ApiRow(
        "controller",
        "post",
        OPERATORS,
        200,
        _controller({"levels": {"org.apache.kafka.controller": "DEBUG"}, "dry_run": False}),
    ),
)


def _window(w: World) -> tuple[dict, dict]:
    from django.utils import timezone

    from console.models.windows import ChangeWindow

    now = timezone.now()
    row = ChangeWindow.objects.create(
        cluster=w.cluster, kind="maintenance", reason="matrix", starts_at=now, ends_at=now + timezone.timedelta(hours=1),
        created_by_name="admin",
    )  # fmt: skip
    return {"window_id": row.pk}, {}


def _held_change(w: World) -> tuple[dict, dict]:
    from django.utils import timezone

    from console.changes import approvals
    from console.models.requests import ChangeRequest

    payload = {"resource": {"type": "TOPIC", "name": "matrix"}, "changes": []}
    req = ChangeRequest.objects.create(
        cluster=w.cluster, kind="change.config", resource="topic:matrix", payload=payload,
        requested_by=w.people["admin"], requested_by_name="admin", gated=True,
        payload_sha256=approvals.payload_digest(payload),
    )  # fmt: skip
    return {"request_id": req.pk}, {"run_at": (timezone.now() + timezone.timedelta(hours=2)).isoformat()}


def _scheduled_change(w: World) -> tuple[dict, dict]:
    from console.models.windows import ScheduledChange

    kwargs, body = _held_change(w)
    ScheduledChange.objects.create(
        request_id=kwargs["request_id"], run_at=body["run_at"], scheduled_by_name="admin"
    )
    return kwargs, {}


WINDOW_ROWS: tuple[ApiRow, ...] = (
    ApiRow("windows", "get", VIEWERS, 200),
    ApiRow(
        "windows",
        "post",
        ADMINS,
        201,
        lambda w: (
            {},
            {
                "kind": "maintenance",
                "reason": "matrix",
                "weekday": 1,
                "start_time": "02:00",
                "duration_min": 60,
            },
        ),
    ),
    ApiRow("windows-calendar", "get", VIEWERS, 200),
    ApiRow("windows-settings", "post", ADMINS, 200, lambda w: ({}, {"maintenance_only": True})),
    ApiRow("window-end", "post", ADMINS, 200, _window),
    ApiRow("request-schedule", "post", OPERATORS, 200, _held_change),
    ApiRow("request-unschedule", "post", OPERATORS, 200, _scheduled_change),
)


def _alert(w: World) -> tuple[dict, dict]:
    from tests.unit.alert_world import make_alert

    return {"alert_id": make_alert(w.cluster, "group_lag", uniq("group")).pk}, {"note": "matrix"}


def _alert_silence(w: World) -> tuple[dict, dict]:
    from console.alerts import actions as alerts

    made = alerts.create_silence(actor=w.people["admin"], cluster=w.cluster, duration="1h", reason="matrix")
    return {"silence_id": made.pk}, {}


ALERT_ROWS: tuple[ApiRow, ...] = (
    ApiRow("alerts", "get", VIEWERS, 200, lambda w: ({}, {"state": "all"})),
    ApiRow("alert-acknowledge", "post", OPERATORS, 200, _alert),
    ApiRow("alert-silences", "get", VIEWERS, 200),
    ApiRow(
        "alert-silences",
        "post",
        OPERATORS,
        201,
        lambda w: ({}, {"rule": "group_lag", "subject": "group g", "duration": "1h", "reason": "matrix"}),
    ),
    ApiRow("alert-silence", "delete", OPERATORS, 200, _alert_silence),
    ApiRow("alert-rules", "get", VIEWERS, 200),
    ApiRow("alert-rule", "get", VIEWERS, 200, lambda w: ({"rule": "group_lag"}, {})),
    ApiRow(
        "alert-rule",
        "put",
        ADMINS,
        200,
        lambda w: ({"rule": "group_lag"}, {"enabled": True, "threshold": 500, "escalate_after_min": 30}),
    ),
)


def _estate(w: World) -> tuple[dict, dict]:
    """An estate file growing a new topic (1 partition, RF 2) to 2 partitions; its own name is the namespace."""
    t = w.topic()
    text = f"kind: KafkaEstate\nversion: 1\nnamespace: {t}\ntopics:\n- {{name: {t}, partitions: 2, replication_factor: 2}}\n"
    return {}, {"text": text, "reason": "matrix"}


ESTATE_ROWS: tuple[ApiRow, ...] = (
    ApiRow("estate", "get", VIEWERS, 200),
    ApiRow("estate-plan", "post", VIEWERS, 200, _estate, changes=False),
    ApiRow("estate-apply", "post", OPERATORS, 202, _estate),
)


def _data_grant(w: World) -> tuple[dict, dict]:
    from console.models import DataGrant

    grant = DataGrant.objects.create(cluster=w.cluster, user=w.people["viewer"], prefix=uniq("dg"))
    return {"grant_id": grant.pk}, {}


def _masking_rule(w: World) -> tuple[dict, dict]:
    from console.models import MaskingRule

    rule = MaskingRule.objects.create(cluster=w.cluster, prefix=uniq("mr"), kind="header", expression="auth")
    return {"rule_id": rule.pk}, {}


# Messages: data.read / data.write come from data grants only (a superuser holds both); the grants and
# masking rules are the cluster admins'.
MESSAGE_ROWS: tuple[ApiRow, ...] = (
    ApiRow(  # a read refused for want of data.read is audited (outcome refused), as the page's
        "topic-messages",
        "get",
        SUPER,
        200,
        lambda w: ({"topic": w.topic()}, {"mode": "oldest"}),
        audits_refusals=True,
    ),
    ApiRow(
        "topic-messages", "post", SUPER, 201, lambda w: ({"topic": w.topic()}, {"value": "from the matrix"})
    ),
    ApiRow("data-grants", "get", ADMINS, 200),
    ApiRow("data-grants", "post", ADMINS, 201, lambda w: ({}, {"user": "viewer", "prefix": uniq("dg")})),
    ApiRow("data-grant-revoke", "post", ADMINS, 200, _data_grant),
    ApiRow("masking-rules", "get", ADMINS, 200),
    ApiRow(
        "masking-rules",
        "post",
        ADMINS,
        201,
        lambda w: ({}, {"kind": "header", "expression": "authorization", "prefix": uniq("mr")}),
    ),
    ApiRow("masking-rule-remove", "post", ADMINS, 200, _masking_rule),
)

ROWS = ROWS + ADMIN_ROWS + WINDOW_ROWS + ALERT_ROWS + ESTATE_ROWS + MESSAGE_ROWS

NOT_ROUTES = {"schema", "docs"}  # the OpenAPI document and its page: any signed-in caller (tested apart)


def dumps(body: dict) -> str:
    return json.dumps(body)
