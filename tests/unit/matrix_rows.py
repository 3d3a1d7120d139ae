"""The role matrix's table: every route classified, and for each mutating route a valid POST and who may send it.

A route is read-only (GET only: a POST is 405), session (login/logout), or mutating (accepts POST:
it has a row below). tests/unit/test_route_classes.py fails for a route that is none of these.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from tests.unit.matrix_world import LOGIN, World, uniq

READ_ONLY = frozenset(
    {
        "home",
        "cluster_list",
        "fleet_home",  # every visible cluster's summary (console/views/fleet.py)
        "search",  # the cross-cluster search (console/views/search.py)
        "cluster_overview",
        "topic_list",
        "topic_detail",
        "broker_list",
        "broker_detail",
        "acl_list",
        "acl_delete",  # a GET preview; the deletion itself is acl_apply
        "acl_effective",
        "acl_export",  # the matching bindings as a YAML or kafka-acls.sh file
        "transactions",
        "transactions_hanging",
        "transaction_detail",
        "share_groups",
        "share_group",
        "log_dir_move",
        "log_dir_move_progress",
        "request_list",
        "review_queue",
        "request_detail",
        "request_status",
        "reassign_list",
        "reassign_export",
        "reassign_detail",
        "reassign_progress",
        "reassign_rollback",  # a cancel's rollback plan file
        "throttle_list",
        "capacity",
        "quorum_page",
        "audit_list",
        "audit_detail",
        "audit_chain",
        "audit_export_csv",  # audited (an export event), but changes nothing else
        "audit_export_jsonl",
        "operation_detail",
        "operation_progress",
        "group_list",
        "group_detail",
        "group_topic_consumers",  # the topic page's section, loaded by htmx
        "notify_deliveries",
        "alert_list",
        "alert_glance",  # the overview's box of open alerts, loaded by htmx
        "drift_recent",  # the overview's and topic page's changes outside the console, loaded by htmx
        "estate",  # the estate page (its forms post to estate_plan and estate_submit)
        "estate_export",  # the estate YAML download
        "messages",  # a topic's messages: a read changes nothing (audited as messages.read)
        # The deployment's probes (console/views/health.py): no login; /readyz and /metrics need the metrics
        # token or an allowed network (tests/unit/test_health.py)
        "healthz",
        "readyz",
        "metrics",
    }
)
# Login and logout (console/views/sso.py) and the OIDC redirect and callback: they change the session only.
SESSION = frozenset({"login", "logout", "sso_oidc_login", "sso_oidc_callback"})

SUPER = frozenset({"admin"})
ADMINS = frozenset({"admin", "clusteradmin"})
OPERATORS = ADMINS | {"operator"}
AUDITORS = ADMINS | {"auditor"}
REQUESTERS = frozenset({"admin", "requester"})  # a cluster admin's role has no request.submit
VIEWERS = frozenset({"admin", "clusteradmin", "operator", "requester", "auditor", "viewer"})

# (cluster or None for cluster-less routes, URL kwargs besides the cluster name, POST body)
Build = Callable[[World], tuple]


@dataclass(frozen=True)
class Row:
    route: str
    allowed: frozenset[str]
    ok: int  # the status of an allowed POST
    build: Build
    label: str = ""
    changes: bool = True  # an allowed POST changes something (proof that the body is a real one)
    outsider: int = 404  # a cluster-less route cannot hide a cluster: 403
    # Roles refused with another status than 403 (a 404, or a 200 page naming the problem): they
    # change nothing either.
    special: tuple[tuple[str, int], ...] = ()

    @property
    def id(self) -> str:
        return self.label or self.route

    def refused(self, role: str) -> bool:
        return role not in self.allowed or role in dict(self.special)

    def expected(self, role: str):
        if role == "anonymous":
            return LOGIN
        if role in dict(self.special):
            return dict(self.special)[role]
        if role in self.allowed:
            return self.ok
        return self.outsider if role == "outsider" else 403


def _a(data: dict | None = None, **kwargs) -> Build:
    return lambda w: (w.cluster, kwargs, data or {})


def _cluster_fields(w: World) -> dict:
    return {
        "name": w.cluster.name,
        "description": "edited by the role matrix",
        "bootstrap_servers": w.cluster.bootstrap_servers,
        "security_protocol": "PLAINTEXT",
        "request_timeout_s": "5",
        "action": "save",
    }


def _new_cluster(w: World) -> tuple:
    body = {
        "name": uniq("new"),
        "bootstrap_servers": "127.0.0.1:1",
        "security_protocol": "PLAINTEXT",
        "request_timeout_s": "5",
        "action": "save",
    }
    return None, {}, body


def _revoke(w: World) -> tuple:
    binding = w.cluster.bindings.get(user=w.people["viewer"])
    return w.cluster, {"binding_id": binding.pk}, {}


def _batch(w: World) -> tuple:
    text = f"- name: {uniq()}\n  partitions: 1\n  replication_factor: 1\n"
    return w.cluster, {}, {"text": text, "format": "yaml", "action": "create"}


def _delete(w: World) -> tuple:
    topic = w.topic()
    return w.cluster, {}, {"names": [topic], "confirmation": topic}


def _partitions(w: World) -> tuple:
    return w.cluster, {"topic": w.topic()}, {"total_count": "2", "action": "apply"}


def _topic_configs(w: World) -> tuple:
    body = {"op_0": "SET", "key_0": "retention.ms", "value_0": "5000", "action": "apply"}
    return w.cluster, {"topic": w.topic()}, body


BROKER_CHANGE = {"op_0": "SET", "key_0": "log.retention.ms", "value_0": "123456789", "action": "apply"}


def _acl_single(w: World) -> tuple:
    return w.cluster, {}, {"mode": "single", **w.acl()}


def _request(w: World) -> tuple:
    body = {
        "kind": "topic.create",
        "topic": uniq("team-a.new"),
        "partitions": "1",
        "replication_factor": "1",
        "reason": "needed by the matrix",
    }
    return w.cluster, {}, body


def _outside_namespace(w: World) -> tuple:
    return w.cluster, {}, {**_request(w)[2], "topic": uniq("team-z.new")}


def _group_reset_request(prefix: str) -> Build:
    """A consumer group offset reset request: the group (offset 5 of 10) and its topic under prefix."""

    def build(w: World) -> tuple:
        topic = w.topic(name=uniq(prefix + "t"))
        with w.sandbox.state.lock:
            w.sandbox.state.topics[topic].partitions[0].end_offset = 10
        group = uniq(prefix + "g")
        w.sandbox.add_group(group, offsets={(topic, 0): 5})
        body = {"kind": "group.offsets.reset", "group": group, "reset-mode": "to-earliest"}
        return w.cluster, {}, {**body, "reset-scope": "all-topics", "reason": "replay"}

    return build


def _decide(comment: str) -> Build:
    return lambda w: (w.cluster, {"request_id": w.request().pk}, {"comment": comment})


def _plan(w: World) -> tuple:
    topic = w.topic()
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 3]}]}
    body = {"intent": "json", "plan_json": json.dumps(plan), "throttle_mb": "1", "action": "start"}
    return w.cluster, {}, body


def _election(kind: str) -> Build:
    def build(w: World) -> tuple:
        body = {"election_type": kind, "scope": "selected", "partitions": f"{w.topic()}-0"}
        if kind == "UNCLEAN":
            body["confirmation"] = f"unclean {w.cluster.name}"
        return w.cluster, {}, body

    return build


def _reassignment(data: dict, **pacing) -> Build:
    return lambda w: (w.cluster, {"rid": w.reassignment(**pacing).pk}, data)


def _group(body) -> Build:
    """An empty group (offset 5 of 10) and a body for it: ``body(group, topic)``."""

    def build(w: World) -> tuple:
        group, topic = w.group()
        return w.cluster, {"group": group}, body(group, topic)

    return build


def _log_level(w: World) -> tuple:
    body = {"logger": "org.apache.kafka.controller", "level": "DEBUG", "action": "apply"}
    return w.controllers(), {"node_id": w.sandbox.state.active_controller}, body


MUTATING_ROWS = (
    Row("cluster_new", SUPER, 302, _new_cluster, outsider=403),
    Row("cluster_settings", ADMINS, 302, lambda w: (w.cluster, {}, _cluster_fields(w))),
    Row("cluster_remove", ADMINS, 302, lambda w: (w.cluster, {}, {"confirm_name": w.cluster.name})),
    Row("cluster_test", VIEWERS, 200, _a()),  # every Test connection is audited
    Row(
        "cluster_access",
        ADMINS,
        302,
        lambda w: (w.cluster, {}, {"user": w.people["outsider"].pk, "role": "viewer"}),
    ),
    Row("cluster_access_revoke", ADMINS, 302, _revoke),
    Row("health_check_start", OPERATORS, 302, _a()),
    Row(
        "topic_create",
        OPERATORS,
        302,
        lambda w: (
            w.cluster,
            {},
            {"name": uniq(), "partitions": "1", "replication_factor": "1", "action": "create"},
        ),
    ),
    Row("topic_batch_create", OPERATORS, 200, _batch),
    Row("topic_delete", OPERATORS, 200, _delete),
    Row("topic_policy", ADMINS, 302, _a({"max_partitions": "64", "max_batch_size": "10"})),
    Row("broker_configs_default", OPERATORS, 302, _a(BROKER_CHANGE)),
    Row("broker_configs", OPERATORS, 302, _a(BROKER_CHANGE, broker="1")),
    Row("topic_add_partitions", OPERATORS, 302, _partitions),
    Row("topic_configs", OPERATORS, 302, _topic_configs),
    Row("acl_new", OPERATORS, 200, _acl_single, changes=False),  # the review step: nothing is applied yet
    Row("acl_apply", OPERATORS, 200, lambda w: (w.cluster, {}, {"create": w.acl_json()})),
    Row("request_new", REQUESTERS, 302, _request),
    # A requester outside their namespace: the form says why, nothing is stored.
    Row(
        "request_new",
        REQUESTERS,
        302,
        _outside_namespace,
        label="request_new-outside-namespace",
        special=(("requester", 200),),
    ),
    Row("request_new", REQUESTERS, 302, _group_reset_request("team-a."), label="request_new-group-reset"),
    Row(
        "request_new",
        REQUESTERS,
        302,
        _group_reset_request("team-z."),
        label="request_new-group-reset-outside-namespace",
        special=(("requester", 200),),
    ),
    Row(
        "request_rules", ADMINS, 302, _a({"enabled": "on", "kinds": ["topic.create"], "max_partitions": "6"})
    ),
    Row(
        "change_policy",
        ADMINS,
        302,
        _a({"enabled": "on", "kinds": ["topic.delete"], "roles": ["operator"], "approvers": "2"}),
    ),
    Row("request_approve", OPERATORS, 302, _decide("fine")),
    Row("request_reject", OPERATORS, 302, _decide("not this one")),
    # Only the requester withdraws; approvers and auditors see the request (403), a viewer does not (404).
    Row(
        "request_cancel",
        frozenset({"requester"}),
        302,
        lambda w: (w.cluster, {"request_id": w.request().pk}, {}),
        special=(("viewer", 404),),
    ),
    Row("reassign_new", OPERATORS, 302, _plan),
    Row(
        "reassign_external_cancel",
        OPERATORS,
        302,
        lambda w: (w.cluster, {}, {"partition": f"{w.external_move()}|0"}),
    ),
    Row("throttle_cleanup", OPERATORS, 302, lambda w: (w.cluster, {}, {"key": w.foreign_throttle()})),
    Row("election_page", OPERATORS, 302, _election("PREFERRED"), label="election_page-preferred"),
    Row("election_page", ADMINS, 302, _election("UNCLEAN"), label="election_page-unclean"),
    Row("reassign_throttle", OPERATORS, 302, _reassignment({"throttle_mb": "2"})),
    Row("reassign_cancel", OPERATORS, 302, _reassignment({})),
    Row("reassign_pause", OPERATORS, 302, _reassignment({}, max_moves_per_broker=1)),
    Row("reassign_resume", OPERATORS, 302, _reassignment({}, max_moves_per_broker=1, paused=True)),
    Row("capacity_run", OPERATORS, 302, _a({"days": "3"})),
    Row("capacity_snapshot", OPERATORS, 302, _a()),
    Row("controller_detail", OPERATORS, 302, _log_level),
    Row("audit_verify_all", AUDITORS, 200, lambda w: (None, {}, {}), outsider=403),
    Row(
        "group_reset",
        OPERATORS,
        302,
        _group(
            lambda g, t: {"mode": "to-latest", "scope": "all-topics", "action": "execute", "confirmation": g}
        ),
    ),
    Row(
        "group_reset",
        OPERATORS,
        200,
        _group(lambda g, t: {"mode": "to-earliest", "scope": "topic", "topic": t, "action": "dry_run"}),
        label="group_reset-dry-run",
        changes=False,  # a dry run shows the plan and changes nothing
    ),
    Row("group_delete", OPERATORS, 302, _group(lambda g, t: {"confirmation": g})),
    Row("group_offsets_delete", OPERATORS, 302, _group(lambda g, t: {"topic": t, "confirmation": g})),
)

# The user's own API tokens (console/views/api_tokens.py): anyone signed in, for themselves only.
ANYONE = VIEWERS | {"outsider"}


def _own_token(w: World) -> tuple:
    from console.identity import tokens

    token = tokens.create_token(actor=w.people["viewer"], name=uniq("matrix"), scope="read", days=1).token
    return None, {"token_id": token.pk}, {}


MUTATING_ROWS += (
    Row(
        "account_tokens", ANYONE, 200, lambda w: (None, {}, {"name": "matrix", "scope": "read", "days": "30"})
    ),
    # Only the token's owner revokes it; for anyone else it does not exist.
    Row(
        "account_token_revoke",
        frozenset({"viewer"}),
        302,
        _own_token,
        special=tuple((r, 404) for r in ("admin", "clusteradmin", "operator", "requester", "auditor")),
    ),
)


def _notify_channel(w: World) -> int:
    from console.notify import actions as notify

    channel, _ = notify.create_channel(
        actor=w.people["admin"], cluster=w.cluster, name=uniq("matrix"), kind="slack", events=[],
        url="https://hooks.example.com/hook",
    )  # fmt: skip
    return channel.pk


def _channel_row(data: dict | None = None) -> Build:
    return lambda w: (w.cluster, {"channel_id": _notify_channel(w)}, data or {})


MUTATING_ROWS += (
    Row(
        "notify_channels",
        ADMINS,
        302,
        lambda w: (
            w.cluster,
            {},
            {
                "name": uniq("ch"),
                "kind": "slack",
                "url": "https://hooks.example.com/x",
                "events": ["request.submitted"],
            },
        ),
    ),
    Row("notify_channel", ADMINS, 302, _channel_row({"name": "renamed", "events": ["audit.chain_broken"]})),
    Row("notify_channel_delete", ADMINS, 302, _channel_row()),
    Row("notify_channel_test", ADMINS, 302, _channel_row()),
)


def _alert(w: World) -> tuple:
    from tests.unit.alert_world import make_alert

    return w.cluster, {"alert_id": make_alert(w.cluster, "group_lag", uniq("group")).pk}, {"note": "matrix"}


def _silence(w: World) -> tuple:
    from console.alerts import actions as alerts

    made = alerts.create_silence(actor=w.people["admin"], cluster=w.cluster, duration="1h", reason="matrix")
    return w.cluster, {"silence_id": made.pk}, {}


MUTATING_ROWS += (
    Row("alert_acknowledge", OPERATORS, 302, _alert),
    Row("alert_silence_create", OPERATORS, 302, _a({"duration": "1h", "reason": "matrix"})),
    Row("alert_silence_end", OPERATORS, 302, _silence),
    Row("alert_rule_set", ADMINS, 302, _a({"enabled": "on", "threshold": "500"}, rule="group_lag")),
)


def _window_row(w: World) -> tuple:
    from tests.unit.api_rows import _window

    return w.cluster, _window(w)[0], {}


def _schedule_row(w: World) -> tuple:
    from tests.unit.api_rows import _held_change

    kwargs, body = _held_change(w)
    return w.cluster, kwargs, {"run_at": body["run_at"][:16], "time_zone": "UTC"}


def _unschedule_row(w: World) -> tuple:
    from tests.unit.api_rows import _scheduled_change

    return w.cluster, _scheduled_change(w)[0], {}


def _new_window(w: World) -> tuple:
    from django.utils import timezone

    start = timezone.now() + timezone.timedelta(days=1)
    end = start + timezone.timedelta(hours=1)
    data = {"kind": "maintenance", "reason": "matrix", "time_zone": "UTC"}
    return w.cluster, {}, {**data, "starts_at": f"{start:%Y-%m-%dT%H:%M}", "ends_at": f"{end:%Y-%m-%dT%H:%M}"}


MUTATING_ROWS += (
    Row("windows_page", ADMINS, 302, _new_window),
    Row("window_end", ADMINS, 302, _window_row),
    Row("window_settings", ADMINS, 302, _a({"maintenance_only": "on"})),
    Row("change_schedule", OPERATORS, 302, _schedule_row, special=(("viewer", 404), ("requester", 404))),
    Row("change_unschedule", OPERATORS, 302, _unschedule_row, special=(("viewer", 404), ("requester", 404))),
)


def _estate_file(w: World) -> tuple:
    from tests.unit.api_rows import _estate

    return w.cluster, {}, _estate(w)[1]


MUTATING_ROWS += (
    Row("estate_plan", VIEWERS, 200, _estate_file, changes=False),  # a plan changes nothing
    Row("estate_submit", OPERATORS, 302, _estate_file),
)


def _data_grant(w: World) -> tuple:
    from console.models import DataGrant

    grant = DataGrant.objects.create(cluster=w.cluster, user=w.people["viewer"], prefix=uniq("matrix"))
    return w.cluster, {"grant_id": grant.pk}, {}


def _masking_rule(w: World) -> tuple:
    from console.models import MaskingRule

    rule = MaskingRule.objects.create(
        cluster=w.cluster, prefix=uniq("matrix"), kind="header", expression="auth"
    )
    return w.cluster, {"rule_id": rule.pk}, {}


def _new_grant(w: World) -> tuple:
    body = {
        "add": "grant",
        "grant-user": w.people["viewer"].pk,
        "grant-prefix": uniq("matrix"),
        "grant-read": "on",
    }
    return w.cluster, {}, body


# Data access is granted by data grants only: among the roles, only the superuser writes messages.
MUTATING_ROWS += (
    Row(
        "messages_produce",
        SUPER,
        200,
        lambda w: (w.cluster, {"topic": w.topic()}, {"partition": "0", "value": "m"}),
    ),
    Row("data_access", ADMINS, 302, _new_grant),
    Row("data_grant_remove", ADMINS, 302, _data_grant),
    Row("masking_rule_remove", ADMINS, 302, _masking_rule),
)


def _scram_credential(w: World) -> tuple:
    """A user with a SCRAM-SHA-512 credential, made straight on Kafka, and the typed confirmation."""
    from console.clusters.actions import gateway_for

    user = uniq("scram")
    gateway_for(w.cluster).upsert_scram_credential(user, "SCRAM-SHA-512", "matrix-password", 4096)
    return (
        w.cluster,
        {},
        {"user": user, "mechanism": "SCRAM-SHA-512", "confirmation": user, "action": "delete"},
    )


def _scram_set(w: World) -> tuple:
    password = "matrix-password"
    body = {"user": uniq("scram"), "mechanism": "SCRAM-SHA-256", "iterations": "4096"}
    return w.cluster, {}, {**body, "password": password, "password_again": password}


# Client quotas: operators (config.manage); SCRAM credentials: admins.
MUTATING_ROWS += (
    Row(
        "quotas",
        OPERATORS,
        302,
        lambda w: (
            w.cluster,
            {},
            {"entity": f"user={uniq('quota')}", "producer_byte_rate": "1024", "action": "apply"},
        ),
    ),
    Row("scram_users", ADMINS, 302, _scram_set),
    Row("scram_delete", ADMINS, 302, _scram_credential),
)


def _purge(w: World) -> tuple:
    """A topic holding 10 records and the page's purge of its first 5, confirmed."""
    topic = w.topic(name=uniq("purge"))
    with w.sandbox.state.lock:
        w.sandbox.state.topics[topic].partitions[0].end_offset = 10
    body = {"mode": "offsets", "offsets": "0:5", "action": "apply", "confirmation": topic}
    return w.cluster, {"topic": topic}, body


# Purging records: operators (topic.manage); the page answers with the result (200).
MUTATING_ROWS += (Row("topic_purge", OPERATORS, 200, _purge),)


def _voter_removed(w: World) -> tuple:
    """A voter that is not the active controller, removed through the page (the matrix gives it back)."""
    with w.sandbox.state.lock:
        leader = w.sandbox.state.active_controller
        node = min(
            c for c in w.sandbox.state.controllers if c != leader and c not in w.sandbox.state.removed_voters
        )
    return w.cluster, {}, {"form": "remove", "node_id": str(node), "action": "remove"}


# The KRaft lifecycle: admins. A feature preview is Kafka's validate-only answer, audited as a dry run; a
# live broker that hosts replicas is refused with the reasons on the page, before Kafka is asked.
MUTATING_ROWS += (
    Row(
        "quorum_features",
        ADMINS,
        200,
        lambda w: (
            w.cluster,
            {},
            {"updates": "metadata.version=27", "upgrade_type": "upgrade", "action": "preview"},
        ),
        label="quorum_features-preview",  # audited as a dry run; nothing else changes
    ),
    Row("quorum_voters", ADMINS, 302, _voter_removed),
    Row(
        "broker_unregister",
        ADMINS,
        200,
        lambda w: (w.cluster, {"broker_id": 1}, {"confirmation": "1", "action": "unregister"}),
        label="broker_unregister-live",
        changes=False,  # refused before Kafka (alive, hosts replicas): the page names the reasons
    ),
)


def _hanging_abort(w: World) -> tuple:
    """A hanging transaction (its coordinator knows nothing of it) on a new topic, aborted by its start."""
    from sandbox.testing import hanging_transaction

    topic = w.topic(name=uniq("txn"))
    hung = hanging_transaction(w.sandbox, topic, 0, records=2, age_ms=20 * 60_000)
    body = {"topic": topic, "partition": "0", "start_offset": str(hung["start_offset"])}
    return w.cluster, {}, {**body, "confirmation": f"{topic}-0", "action": "apply"}


# Aborting a transaction: admins (Kafka authorises WriteTxnMarkers as CLUSTER_ACTION); the page answers
# with the result (200).
MUTATING_ROWS += (Row("transaction_abort", ADMINS, 200, _hanging_abort),)


def _share_group(data: Callable[[str, str], dict]) -> Build:
    """An Empty share group with share state on a new topic (share.version on; the world puts it back)."""

    def build(w: World) -> tuple:
        from tests.unit.share_world import empty_group

        group, topic = empty_group(w.sandbox, w.cluster)
        return w.cluster, {"group_id": group}, data(group, topic)

    return build


def _one_dir_move(w: World) -> dict:
    """Broker 1's replica of a new topic "moved" to the dir it is in (the world's brokers have one):
    the dry run names the refusal, the page shows it (200), nothing is sent."""
    topic = w.topic(name=uniq("ld"))
    return {"topic": topic, "partitions": "0", "target": "/var/lib/kafka/broker-1/data", "action": "dry_run"}


def _one_dir_plan(w: World) -> dict:
    topic = w.topic(name=uniq("ld"))
    plan = {
        "version": 1,
        "partitions": [{"topic": topic, "partition": 0, "replicas": [1], "log_dirs": ["any"]}],
    }
    return {"plan": json.dumps(plan), "action": "dry_run"}


# Moves between a broker's log dirs: operators and admins (reassignment.manage); the dry runs change nothing.
MUTATING_ROWS += (
    Row(
        "broker_log_dirs",
        OPERATORS,
        200,
        lambda w: (w.cluster, {"broker": 1}, _one_dir_move(w)),
        changes=False,
    ),
    Row("log_dir_plan", OPERATORS, 200, lambda w: (w.cluster, {}, _one_dir_plan(w)), changes=False),
    Row("log_dir_move_cancel", OPERATORS, 302, lambda w: (w.cluster, {"op_id": w.log_dir_move().pk}, {})),
)


# Share groups: operators and admins (group.manage). A reset's dry run shows the plan (changes nothing);
# the deletion takes the typed group id.
MUTATING_ROWS += (
    Row(
        "share_group_reset",
        OPERATORS,
        200,
        _share_group(lambda g, t: {"mode": "to-earliest", "topic": t, "action": "dry_run"}),
        changes=False,
    ),
    Row("share_group_delete", OPERATORS, 200, _share_group(lambda g, t: {"topics": "", "confirmation": g})),
)

MUTATING = frozenset(r.route for r in MUTATING_ROWS)
