"""Every form-posting route (and the GET search forms) with its hostile form and its case count.

``ROUTES`` is the registry the coverage test compares with the URL resolver: a POST route
without an entry here fails it. ``hostile_env`` builds the objects the URLs point at.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import strategies as st

from console.models import Cluster, RoleBinding
from tests.unit import hostile_checks as checks
from tests.unit import hostile_data
from tests.unit.hostile_forms import (
    MAIN,
    MOVE,
    PATH_JUNK,
    VICTIMS,
    acl_apply,
    acl_get,
    acl_new,
    add_partitions,
    audit_get,
    broker_kw,
    change_policy_form,
    cluster_form,
    config_changes,
    decision,
    election_form,
    grant_form,
    keys,
    log_levels,
    login_form,
    nothing,
    notify_channel_form,
    plan_form,
    queue_get,
    request_form,
    rules_form,
    topic_batch,
    topic_create,
    topic_delete,
    topic_list_get,
    topic_policy,
)
from tests.unit.hostile_harness import Env, Route
from tests.unit.hostile_values import NUMBER, as_upload, either, form, text_document
from tests.unit.quorum_helpers import register_controllers


@pytest.fixture
def hostile_env(client, personas, kafka_cluster, frozen, monkeypatch, tmp_path) -> Env:
    """Admin logged in; topics, requests, a reassignment, a second and a controllers cluster."""
    from console.reassignment import actions as reassignment
    from console.requests import actions as requests

    monkeypatch.setenv("TELEMETRY_LAKE_DIR", str(tmp_path / "lake"))
    checks.no_network(monkeypatch, frozen)
    for name, spec in (
        (MAIN, [[1, 2], [2, 3], [3, 1]]),
        (VICTIMS[0], [[1]]),
        (VICTIMS[1], [[2]]),
        (MOVE, [[1, 2]]),
    ):
        if name not in frozen.state.topics:
            frozen.create_topic(name, assignment=spec, configs={"retention.ms": "3600000"})
    admin = personas["admin"]
    client.force_login(admin)
    other = Cluster.objects.create(name="hostile-other", bootstrap_servers="127.0.0.1:1", request_timeout_s=1)
    env = Env(
        client=client, sandbox=frozen, cluster=kafka_cluster, other=other, admin=admin, personas=personas
    )
    env.topics = {"main": MAIN, "move": MOVE}
    env.ctl = register_controllers(frozen, personas, name="hostile-ctl")
    checks.fresh_requests(env)
    op = reassignment.start_reassignment(
        actor=admin, cluster=kafka_cluster, proposed={(MOVE, 0): [2, 3]}, throttle=10 * 1024 * 1024
    )
    env.ids["reassignment"] = op.reassignment.pk
    env.ids["binding"] = RoleBinding.objects.get(cluster=kafka_cluster, user=personas["viewer"]).pk
    env.ids["node"] = min(frozen.state.controllers)
    env.ids["notify_channel"] = _notify_channel(kafka_cluster, admin)
    env.ids["log_dir_op"] = _log_dir_op(kafka_cluster, admin)
    del requests
    return env


def _log_dir_op(cluster, admin) -> int:
    """A running log-dir move (its Operation), for the cancel route."""
    from console.models import Operation, OperationState

    move = {"topic": MAIN, "partition": 0, "broker": 1, "dir": "/var/lib/kafka/broker-1/data"}
    return Operation.objects.create(
        kind="logdir.move", cluster=cluster, state=OperationState.RUNNING, created_by=admin,
        params={"moves": [move], "throttle": None},
    ).pk  # fmt: skip


def _notify_channel(cluster, admin) -> int:
    from console.notify import actions as notify

    channel, _ = notify.create_channel(
        actor=admin,
        cluster=cluster,
        name="hostile",
        kind="webhook",
        events=[],
        url="https://hooks.example.com/x",
    )
    return channel.pk


def cluster_kw(env: Env) -> st.SearchStrategy:
    return st.one_of(
        st.just({"name": env.cluster.name}),
        st.just({"name": env.cluster.name}),
        PATH_JUNK.map(lambda n: {"name": n}),
    )


def no_kw(env: Env) -> st.SearchStrategy:
    """A route without URL arguments."""
    return st.just({})


def with_id(key: str, field: str):
    def kwargs(env: Env) -> st.SearchStrategy:
        ids = st.one_of(st.just(env.ids[key]), st.integers(0, 2**63 - 1))
        return st.builds(lambda i: {"name": env.cluster.name, field: i}, ids)

    return kwargs


def topic_kw(env: Env) -> st.SearchStrategy:
    topics = st.one_of(st.sampled_from([MAIN, MAIN, *VICTIMS, "no-such-topic"]), PATH_JUNK)
    return st.builds(lambda t: {"name": env.cluster.name, "topic": t}, topics)


# -- consumer groups: an empty group on the main topic; every case starts from it again --------------

GROUP = "hostile-group"


def restore_group(env: Env) -> None:
    """The hostile group as it was (a reset or a delete may have changed it)."""
    env.sandbox.add_group(GROUP, offsets={(MAIN, 0): 0, (MAIN, 1): 0})


def group_kw(env: Env) -> st.SearchStrategy:
    restore_group(env)
    groups = st.one_of(st.sampled_from([GROUP, GROUP, GROUP, "no-such-group", "a/b", "-"]), PATH_JUNK)
    return st.builds(lambda g: {"name": env.cluster.name, "group": g}, groups)


def group_reset_form(env: Env) -> st.SearchStrategy:
    files = [f"{MAIN},0,0", f"{MAIN},1,5\n{MAIN},0,0", f"{GROUP},{MAIN},0,0", "a,b,c", f"{MAIN},9,1", '"x']
    lines = either(*files)
    return form(
        {
            "mode": either("to-earliest", "to-latest", "to-datetime", "to-offset", "shift-by", "from-file"),
            "scope": either("all-topics", "topic", "partitions"),
            "topic": either(MAIN, "no-such-topic", *VICTIMS),
            "partitions": either("0", "0,1", "0-2", "1-0", "7"),
            "timestamp": either("2024-01-01T00:00:00", "1700000000000", "2024-01-01T00:00:00+02:00", "soon"),
            "offset": NUMBER,
            "shift": NUMBER,
            "file_text": lines,
            "file": as_upload(st.sampled_from(files), names=("reset.csv", "")),
            "action": either("dry_run", "execute"),
            "confirmation": either(GROUP, "nope"),
        }
    )


def group_confirm_form(env: Env) -> st.SearchStrategy:
    return form({"topic": either(MAIN, "no-such-topic"), "confirmation": either(GROUP, "nope")})


# -- share groups: an Empty share group with share state on the main topic (share.version on) -------

SHARE_GROUP = "hostile-share"


def restore_share_group(env: Env) -> None:
    """share.version on and the hostile share group as it was (a delete may have removed it)."""
    from sandbox import share_groups

    st_ = env.sandbox.state
    with st_.lock:
        if st_.features.get("share.version", 0) < 1:
            st_.features["share.version"] = 1
            st_.features_epoch += 1
        share_groups.of(st_).groups[SHARE_GROUP] = share_groups.ShareGroup(
            SHARE_GROUP, start={(MAIN, 0): 0, (MAIN, 1): 0}
        )


def share_group_kw(env: Env) -> st.SearchStrategy:
    restore_share_group(env)
    groups = st.one_of(st.sampled_from([SHARE_GROUP, SHARE_GROUP, "no-such-group", "-"]), PATH_JUNK)
    return st.builds(lambda g: {"name": env.cluster.name, "group_id": g}, groups)


def share_reset_form(env: Env) -> st.SearchStrategy:
    return form(
        {
            "mode": either("to-earliest", "to-latest", "to-datetime", "to-offset", "shift-by"),
            "topic": either(MAIN, f"{MAIN}:0,1", f"{MAIN}:9", "no-such-topic", ":"),
            "offset": NUMBER,
            "datetime": either("2024-01-01T00:00:00", "1700000000000", "soon"),
            "action": either("dry_run", "apply", "break_glass"),
            "confirmation": either(SHARE_GROUP, "nope"),
        }
    )


def share_delete_form(env: Env) -> st.SearchStrategy:
    return form(
        {
            "topics": either("", MAIN, "no-such-topic", f"{MAIN},{MAIN}"),
            "confirmation": either(SHARE_GROUP, "nope"),
        }
    )


def group_list_get(env: Env) -> st.SearchStrategy:
    return form(
        {
            "q": either("hostile", "(", GROUP),
            "regex": either("1", "on"),
            "state": either("Empty", "Stable", "dead"),
            "topic": either(MAIN, "x"),
            "lagging": either("1"),
            "sort": either("group", "lag", "members", "state", "type", "partitions"),
            "desc": either("1"),
            "page": NUMBER,
            "per_page": NUMBER,
        }
    )


def api_token_form(env: Env) -> st.SearchStrategy:
    return form(
        {
            "name": either("ci", "", "x" * 101, "<b>"),
            "scope": either("read", "write", "admin"),
            "days": NUMBER,
        }
    )


def read_only(name: str, examples: int, payload, kwargs=cluster_kw) -> Route:
    """A GET form (a search, an export): whatever it is sent, it changes nothing."""
    return Route(name, examples, payload, kwargs, method="get", check=checks.unchanged)


def window_form(env):
    """The calendar page's "add a window" form (console/forms/windows.py)."""
    moments = ["2030-01-01T02:00", "2020-01-01T00:00", "2030-13-45T99:99", "9999-12-31T23:59", "1-1-1"]
    return form(
        {
            "kind": either("freeze", "maintenance", "other"),
            "reason": either("release week", "x" * 501, ""),
            "starts_at": either(*moments),
            "ends_at": either(*moments),
            "weekday": either("", "0", "6", "7", "-1"),
            "start_time": either("02:00", "25:00", "xx"),
            "duration_min": NUMBER,
            "time_zone": either("UTC", "Europe/Paris", "Mars/Olympus", "../../etc/passwd", ""),
        }
    )


ESTATE_KEYS = ["kind", "version", "cluster", "namespace", "topics", "acls", "name", "partitions", "configs"]


def estate_form(env):
    """The estate page's plan and submit forms (console/forms/estate.py): a broken file, or junk topics
    in a namespace of their own."""
    doc = {"kind": "KafkaEstate", "version": 1, "namespace": "hostile-estate."}
    text = text_document(
        ESTATE_KEYS, wrap=lambda v: st.sampled_from([v, {**doc, "topics": [v]}, {**doc, "acls": [v]}])
    )
    return form(
        {
            "text": text,
            "upload": as_upload(text),
            "delete": either("on", ""),
            "reason": either("r", "x" * 2001),
        }
    )


def window_kw(env: Env) -> st.SearchStrategy:
    """A window of the main cluster (made once), or any id."""
    if "window" not in env.ids:
        from django.utils import timezone

        from console.windows import actions as windows

        now = timezone.now()
        env.ids["window"] = windows.add_window(
            actor=env.admin, cluster=env.cluster, kind="maintenance", reason="hostile",
            starts_at=now, ends_at=now + timezone.timedelta(days=1),
        ).pk  # fmt: skip
    return with_id("window", "window_id")(env)


def _alert_ids(env: Env) -> None:
    """A firing alert and an active silence on the main cluster (made once)."""
    if "alert" not in env.ids:
        from console.alerts import actions as alerts
        from tests.unit.alert_world import make_alert

        env.ids["alert"] = make_alert(env.cluster, "group_lag", "group hostile").pk
        env.ids["silence"] = alerts.create_silence(
            actor=env.admin, cluster=env.cluster, duration="1d", reason="hostile"
        ).pk


def alert_kw(key: str, field: str):
    def kwargs(env: Env) -> st.SearchStrategy:
        _alert_ids(env)
        return with_id(key, field)(env)

    return kwargs


def alert_rule_kw(env: Env) -> st.SearchStrategy:
    rules = st.one_of(st.sampled_from(["group_lag", "disk_days_to_full", "broker_down", "moon"]), PATH_JUNK)
    return st.builds(lambda r: {"name": env.cluster.name, "rule": r}, rules)


QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage", "connection_creation_rate")


def quota_form(env):
    fields = {
        "entity": either(
            "user=hostile-q",
            "user=<default>",
            "client-id=hostile-q,user=hostile-q",
            "ip=10.9.9.9",
            "ip=bad host",
            "group=x",
            "user=",
            "u" * 300,
            "user=a,user=b",
        ),
        "action": either("preview", "validate", "apply", "break_glass"),
    }
    for key in QUOTA_KEYS:
        fields[key] = either("1024", "-1", "0", "1.5", "x", "1e30", "")
        fields[f"remove_{key}"] = either("on", "")
    return form(fields)


def quotas_only(env, before, after, response, where) -> None:
    """An accepted quota change changes client quotas and nothing else in Kafka."""
    assert {k: v for k, v in after[0].items() if k != "quotas"} == {
        k: v for k, v in before[0].items() if k != "quotas"
    }, where


def purge_form(env):
    """The purge page's form (console/forms/purge.py): offsets, a time or all, the typed topic name."""
    return form(
        {
            "mode": either("offsets", "before", "all", "everything"),
            "offsets": either("0:1", "0:-1,1:2", "0:99999999", "7:1", "x", "0:-5", "0:1\n0:2"),
            "before": either("2026-01-01T00:00:00Z", "1700000000000", "-1", "soon"),
            "partitions": either("0", "0,1", "9", "-1", "a"),
            "confirmation": either(MAIN, *VICTIMS, "nope", ""),
            "action": either("preview", "apply", "break_glass"),
        }
    )


def purge_only(env, before, after, response, where) -> None:
    """An accepted purge moves log starts and nothing else in Kafka."""
    assert {k: v for k, v in after[0].items() if k != "starts"} == {
        k: v for k, v in before[0].items() if k != "starts"
    }, where


def kraft_only(env, before, after, response, where) -> None:
    """An accepted KRaft change (features, voters, a registration) changes nothing else in Kafka."""
    assert {k: v for k, v in after[0].items() if k != "kraft"} == {
        k: v for k, v in before[0].items() if k != "kraft"
    }, where


def features_form(env):
    return form(
        {
            "updates": either("metadata.version=27", "metadata.version=7", "kraft.version=0", "nope=1", "x"),
            "upgrade_type": either("upgrade", "safe-downgrade", "unsafe-downgrade", "sideways"),
            "action": either("preview", "apply", "break_glass"),
        }
    )


def voters_form(env):
    nodes = [str(c) for c in env.sandbox.state.controllers]
    return form(
        {
            "form": either("remove", "add", "other"),
            "node_id": either(*nodes, "1", "-1", "99999999999", "x"),
            "allow_leader": either("on"),
            "directory_id": either("AAAAAAAAAAAAAAAAAAAAAA", "not-a-uuid"),
            "endpoint": either("CONTROLLER://127.0.0.1:1", "nohost", "x://:0"),
            "action": either("remove", "add", "break_glass"),
        }
    )


def unregister_form(env):
    return form({"confirmation": either("1", "2", "999", ""), "action": either("unregister", "break_glass")})


def txn_abort_form(env):
    """The abort page's form: a partition, an open transaction's start offset, the typed topic-partition."""
    return form(
        {
            "topic": either(MAIN, *VICTIMS, "no-such-topic"),
            "partition": either("0", "1", "9", "-1"),
            "start_offset": either("0", "5", "-1", "99999999999999999999"),
            "confirmation": either(f"{MAIN}-0", f"{MAIN}-1", "nope"),
            "action": either("apply", "break_glass"),
        }
    )


def broker_id_kw(env: Env) -> st.SearchStrategy:
    ids = st.one_of(st.sampled_from([1, 2, 999]), st.integers(0, 2**31 - 1))
    return st.builds(lambda b: {"name": env.cluster.name, "broker_id": b}, ids)


def log_dirs_kw(env: Env) -> st.SearchStrategy:
    ids = st.one_of(st.sampled_from([1, 1, 2, 999]), st.integers(0, 2**31 - 1))
    return st.builds(lambda b: {"name": env.cluster.name, "broker": b}, ids)


def log_dir_move_form(env):
    """The broker's log-dirs page's move form (console/forms/logdirs.py); the sandbox's brokers have one dir."""
    return form(
        {
            "topic": either(MAIN, "no-such-topic", *VICTIMS),
            "partitions": either("0", "0,1", "0-2", "2-0", "99", "x"),
            "target": either("/var/lib/kafka/broker-1/data", "/nowhere", "relative", ""),
            "throttle_mib": either("1", "0", "-1", "1e9", "0.0001"),
            "action": either("dry_run", "apply", "break_glass"),
        }
    )


def log_dir_plan_form(env):
    """A kafka-reassign-partitions plan with log_dirs, pasted or uploaded, and broken every way."""
    good = json.dumps(
        {
            "version": 1,
            "partitions": [{"topic": MAIN, "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}],
        }
    )
    plans = st.one_of(
        st.just(good), text_document(["version", "partitions", "topic", "replicas", "log_dirs"])
    )
    return form(
        {
            "plan": plans,
            "plan_file": as_upload(plans, names=("plan.json", "")),
            "throttle_mib": either("1", "0", "-1"),
            "action": either("dry_run", "apply", "break_glass"),
        }
    )


def scram_set_form(env):
    """The SCRAM users page's set form (console/forms/scram.py)."""
    password = either("hostile-password", "short", "", "p" * 1100)
    return form(
        {
            "user": either("hostile-s", "", " hostile-s", "u" * 300, "a\x00b"),
            "mechanism": either("SCRAM-SHA-256", "SCRAM-SHA-512", "MD5"),
            "iterations": either("4096", "16384", "4095", "16385", "x", ""),
            "password": password,
            "password_again": password,
            "action": either("apply", "break_glass"),
        }
    )


def scram_delete_form(env):
    return form(
        {
            "user": either("hostile-s", "", "u" * 300),
            "mechanism": either("SCRAM-SHA-256", "SCRAM-SHA-512", "MD5"),
            "confirmation": either("hostile-s", "nope"),
            "action": either("delete", "break_glass"),
        }
    )


def scram_only(env, before, after, response, where) -> None:
    """An accepted SCRAM change changes SCRAM credentials and nothing else in Kafka."""
    assert {k: v for k, v in after[0].items() if k != "scram"} == {
        k: v for k, v in before[0].items() if k != "scram"
    }, where


def alert_ack_form(env):
    return form({"note": either("on it", "", "x" * 2100)})


def alert_silence_form(env):
    """The alerts page's silence form (console/forms/alerts.py)."""
    return form(
        {
            "rule": either("", "group_lag", "moon"),
            "subject": either("", "broker 2", "x" * 400),
            "duration": either("2h", "0m", "45d", "1d12h", "soon", ""),
            "until": either("", "2030-01-01T02:00", "2020-01-01T00:00", "2030-13-45T99:99"),
            "reason": either("backfill", "", "x" * 1100),
        }
    )


def alert_rule_form(env):
    return form(
        {
            "enabled": either("on", ""),
            "threshold": NUMBER,
            "severity": either("", "warning", "critical", "doom"),
            "escalate_after_min": NUMBER,
        }
    )


def _routes() -> list[Route]:
    rk = with_id("reassignment", "rid")
    rq = with_id("request", "request_id")
    own = with_id("own_request", "request_id")
    ch = with_id("notify_channel", "channel_id")
    return [
        Route("topic_batch_create", 1200, topic_batch, cluster_kw, check=checks.topics_created),
        Route("topic_create", 700, topic_create, cluster_kw, check=checks.topics_created),
        Route("topic_delete", 400, topic_delete, cluster_kw, check=checks.topics_deleted),
        Route("topic_policy", 500, topic_policy, cluster_kw, check=checks.db_only),
        Route("topic_add_partitions", 300, add_partitions, topic_kw, check=checks.partitions_added),
        Route("topic_configs", 400, config_changes, topic_kw, check=checks.configs_only),
        Route("broker_configs_default", 150, config_changes, cluster_kw, check=checks.configs_only),
        Route("broker_configs", 150, config_changes, broker_kw, check=checks.configs_only),
        Route("cluster_new", 400, cluster_form, no_kw, check=checks.db_only),
        Route(
            "cluster_settings",
            300,
            cluster_form,
            checks.other_kw,
            check=checks.db_only,
            after=checks.restore_other,
        ),
        Route(
            "cluster_remove",
            150,
            keys("confirm_name", ["hostile-other", "sandbox"]),
            checks.other_kw,
            check=checks.db_only,
            after=checks.restore_other,
        ),
        Route("cluster_test", 100, nothing, checks.other_kw),
        Route("cluster_access", 400, grant_form, cluster_kw, check=checks.db_only),
        Route(
            "cluster_access_revoke",
            150,
            nothing,
            with_id("binding", "binding_id"),
            check=checks.db_only,
            after=checks.restore_binding,
        ),
        Route("health_check_start", 100, nothing, cluster_kw, check=checks.db_only),
        Route("acl_new", 800, acl_new, cluster_kw, check=checks.unchanged),
        Route("quotas", 400, quota_form, cluster_kw, check=quotas_only),
        Route("topic_purge", 250, purge_form, topic_kw, check=purge_only),
        Route("transaction_abort", 150, txn_abort_form, cluster_kw, check=checks.db_only),
        Route("quorum_features", 150, features_form, cluster_kw, check=kraft_only),
        Route("quorum_voters", 150, voters_form, cluster_kw, check=kraft_only),
        Route("broker_unregister", 100, unregister_form, broker_id_kw, check=kraft_only),
        Route("broker_log_dirs", 200, log_dir_move_form, log_dirs_kw, check=checks.anything),
        Route("log_dir_plan", 200, log_dir_plan_form, cluster_kw, check=checks.anything),
        Route("log_dir_move_cancel", 60, nothing, with_id("log_dir_op", "op_id"), check=checks.db_only),
        Route("scram_users", 250, scram_set_form, cluster_kw, check=scram_only),
        Route("scram_delete", 150, scram_delete_form, cluster_kw, check=scram_only),
        Route("acl_apply", 600, acl_apply, cluster_kw, check=checks.acls_applied),
        Route("request_new", 500, request_form, cluster_kw, check=checks.db_only),
        Route("request_approve", 200, decision, rq, check=checks.anything, after=checks.fresh_requests),
        Route("request_reject", 200, decision, rq, check=checks.db_only, after=checks.fresh_requests),
        Route("request_cancel", 100, nothing, own, check=checks.db_only, after=checks.fresh_requests),
        Route("request_rules", 250, rules_form, cluster_kw, check=checks.db_only),
        Route("change_policy", 250, change_policy_form, cluster_kw, check=checks.db_only),
        Route("notify_channels", 250, notify_channel_form, cluster_kw, check=checks.db_only),
        Route("notify_channel", 250, notify_channel_form, ch, check=checks.db_only),
        Route("notify_channel_test", 100, nothing, ch, check=checks.db_only),
        Route("notify_channel_delete", 100, nothing, ch, check=checks.db_only),
        Route("windows_page", 400, window_form, cluster_kw, check=checks.db_only),
        Route("window_end", 100, nothing, window_kw, check=checks.db_only),
        Route("change_unschedule", 100, nothing, rq, check=checks.db_only),
        Route("estate_plan", 150, estate_form, cluster_kw, check=checks.unchanged),
        Route("estate_submit", 150, estate_form, cluster_kw, check=checks.db_only),
        Route("alert_acknowledge", 100, alert_ack_form, alert_kw("alert", "alert_id"), check=checks.db_only),
        Route("alert_silence_create", 150, alert_silence_form, cluster_kw, check=checks.db_only),
        Route("alert_silence_end", 50, nothing, alert_kw("silence", "silence_id"), check=checks.db_only),
        Route("alert_rule_set", 150, alert_rule_form, alert_rule_kw, check=checks.db_only),
        Route(
            "window_settings",
            100,
            keys("maintenance_only", ["on", "off", ""]),
            cluster_kw,
            check=checks.db_only,
        ),
        Route(
            "change_schedule",
            300,
            lambda env: form(
                {
                    "run_at": either("2030-01-01T02:00", "2020-01-01T00:00", "x"),
                    "time_zone": either("UTC", "Nowhere/Land"),
                }
            ),
            rq,
            check=checks.db_only,
        ),
        Route("reassign_new", 700, plan_form, cluster_kw, check=checks.db_only),
        Route(
            "reassign_external_cancel",
            150,
            keys("partition", [f"{MOVE}|0", "a|b", "|", "x|99"]),
            cluster_kw,
            check=checks.anything,
        ),
        Route(
            "throttle_cleanup",
            150,
            keys("key", ["broker:1:leader.replication.throttled.rate", "topic:x:y"]),
            cluster_kw,
            check=checks.anything,
        ),
        Route("election_page", 300, election_form, cluster_kw, check=checks.db_only),
        Route(
            "reassign_throttle",
            200,
            keys("throttle_mb", ["5", "0", "0.0001", "1e9"]),
            rk,
            check=checks.anything,
        ),
        Route("reassign_cancel", 100, nothing, rk, check=checks.db_only),
        Route("reassign_pause", 60, nothing, rk, check=checks.db_only),
        Route("reassign_resume", 60, nothing, rk, check=checks.db_only),
        Route(
            "capacity_run",
            150,
            keys("days", ["1", "365", "0", "-5", "1e9"]),
            cluster_kw,
            check=checks.db_only,
        ),
        Route("capacity_snapshot", 60, nothing, cluster_kw, check=checks.anything),
        Route("controller_detail", 300, log_levels, checks.controller_kw, check=checks.anything),
        Route("audit_verify_all", 60, nothing, no_kw, check=checks.db_only),
        # The user's own API tokens page (console/views/api_tokens.py).
        Route("account_tokens", 200, api_token_form, no_kw, check=checks.db_only),
        Route(
            "account_token_revoke",
            60,
            nothing,
            lambda env: st.integers(0, 2**63 - 1).map(lambda i: {"token_id": i}),
            check=checks.db_only,
        ),
        Route("login", 150, login_form, no_kw, check=checks.anything, after=checks.relogin),
        Route("logout", 50, nothing, no_kw, check=checks.anything, after=checks.relogin),
        # The GET search forms, for the record (they change nothing).
        read_only("acl_list", 250, acl_get),
        read_only("acl_delete", 250, acl_get),
        read_only("acl_effective", 200, acl_get),
        read_only("audit_list", 300, audit_get, no_kw),
        read_only("review_queue", 100, queue_get, no_kw),
        read_only("audit_export_csv", 120, audit_get, no_kw),
        read_only("audit_export_jsonl", 120, audit_get, no_kw),
        read_only("topic_list", 200, topic_list_get),
        Route("group_reset", 400, group_reset_form, group_kw, check=checks.anything, after=restore_group),
        Route("group_delete", 120, group_confirm_form, group_kw, check=checks.anything, after=restore_group),
        Route(
            "group_offsets_delete",
            120,
            group_confirm_form,
            group_kw,
            check=checks.anything,
            after=restore_group,
        ),
        read_only("group_list", 120, group_list_get),
        Route(
            "share_group_reset",
            200,
            share_reset_form,
            share_group_kw,
            check=checks.anything,
            after=restore_share_group,
        ),
        Route(
            "share_group_delete",
            150,
            share_delete_form,
            share_group_kw,
            check=checks.anything,
            after=restore_share_group,
        ),
        read_only("reassign_export", 100, keys("topics", [MOVE, f"{MAIN},{MOVE}", ",,"])),
    ]


ROUTES: dict[str, Route] = {r.name: r for r in [*_routes(), *hostile_data.routes()]}
