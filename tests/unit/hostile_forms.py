"""The hostile form of every route: plausible values mixed with junk, field by field (issue 14)."""

from __future__ import annotations

from hypothesis import strategies as st

from console.acls import core as acl_core
from console.models import Role
from console.models.requests import RequestKind
from console.quorum.controllers import LOG_LEVELS, RESET
from tests.unit import hostile_checks as checks
from tests.unit.hostile_values import JUNK, NUMBER, as_upload, either, form, text_document

MAIN, VICTIMS, MOVE = "hostile-main", ("hostile-victim-a", "hostile-victim-b"), "hostile-move"
PATH_JUNK = st.sampled_from(["..", "%00", "\u202e", "a b", "x" * 300, "é", "<b>", "__consumer_offsets", "-"])


# -- the forms -------------------------------------------------------------------------------------

TOPIC_KEYS = [
    "topics",
    "name",
    "partitions",
    "replication_factor",
    "rf",
    "configs",
    "assignment",
    "retention.ms",
]
ACTIONS = either("create", "validate", "apply", "preview", "start", "test", "save")
NAMES = st.one_of(st.sampled_from([MAIN, *VICTIMS, "hostile-new", "hostile-new2"]), JUNK)


def topic_batch(env):
    text = text_document(TOPIC_KEYS, wrap=lambda v: st.sampled_from([v, {"topics": v}, [v]]))
    return form(
        {"text": text, "upload": as_upload(text), "format": either("yaml", "json", "csv"), "action": ACTIONS}
    )


def topic_create(env):
    fields = {
        "name": NAMES,
        "partitions": NUMBER,
        "replication_factor": NUMBER,
        "assignment": either("1,2\n2,3", "1;2;3", "1,1", "99"),
        "other_configs": either("segment.ms=604800000", "a=b\na=c", "=x", "cleanup.policy=compact"),
        "action": ACTIONS,
    }
    for key in (
        "cleanup.policy",
        "retention.ms",
        "retention.bytes",
        "min.insync.replicas",
        "compression.type",
    ):
        fields[f"cfg__{key}"] = either("delete", "compact", "-1", "1", "gzip", "86400000")
    return form(fields)


def topic_delete(env):
    names = st.lists(
        st.one_of(st.sampled_from([*VICTIMS, "no-such-topic", "__consumer_offsets"]), JUNK), max_size=3
    )

    @st.composite
    def draw(draw_):
        chosen = draw_(names)
        pairs = [("names", n) for n in chosen]
        confirm = draw_(
            st.one_of(st.just(chosen[0] if len(chosen) == 1 else str(len(chosen))), JUNK, st.none())
        )
        return pairs + ([] if confirm is None else [("confirmation", confirm)]) + draw_(form({}, extra=True))

    return draw()


def topic_policy(env):
    return form(
        {
            "max_partitions": NUMBER,
            "allowed_replication_factors": either("3", "2, 3", "0", "a"),
            "allowed_config_keys": either("retention.ms", "a\nb"),
            "config_ranges": st.one_of(text_document(["retention.ms", "min", "max", "choices"]), JUNK),
            "name_pattern": either(r"[a-z]+\..+", "(a+)+$", "[", "(?P<x>", r"\1", ".*"),
            "protected_topics": either("^__.*", "(", "a{99999}"),
            "max_batch_size": NUMBER,
        }
    )


def add_partitions(env):
    return form(
        {
            "total_count": either("4", "5", "3", "10001", "0"),
            "assignment": either("1,2", "1,2\n2,3", "9,9"),
            "action": ACTIONS,
        }
    )


def config_changes(env):
    fields = {}
    for i in range(5):
        fields[f"op_{i}"] = either("SET", "DELETE", "APPEND", "SUBTRACT", "BOGUS")
        fields[f"key_{i}"] = either(
            "retention.ms", "cleanup.policy", "log.cleaner.threads", "min.insync.replicas", "x.y"
        )
        fields[f"value_{i}"] = either("1000", "-1", "compact", "delete,compact", "")
    fields["action"] = ACTIONS
    return form(fields)


def broker_kw(env):
    brokers = st.one_of(st.sampled_from(["1", "2", "999", "-1"]), PATH_JUNK)
    return st.builds(lambda b: {"name": env.cluster.name, "broker": b}, brokers)


def cluster_form(env):
    return form(
        {
            "name": either("hostile-new", "sandbox", "hostile-other", "UPPER", "a" * 70),
            "description": JUNK,
            "bootstrap_servers": either("127.0.0.1:1", "host:0", "[::1]:9092", "a:99999", "a,b:1"),
            "bootstrap_controllers": either("", "127.0.0.1:2"),
            "security_protocol": either("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
            "sasl_mechanism": either("PLAIN", "SCRAM-SHA-256", ""),
            "sasl_username": JUNK,
            "sasl_password": JUNK,
            "ca_certificate": either("-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----", "junk"),
            "request_timeout_s": either("1", "0.5", "121", "nan", "inf", "-1"),
            "action": ACTIONS,
        }
    )


def grant_form(env):
    users = [str(p.pk) for p in env.personas.values()]
    return form(
        {
            "user": either(*users, "0", "999999"),
            "group": either("1", "0"),
            "role": either(*Role.values),
            "namespaces": either("team-b.", "a,b c", "bad/prefix"),
            "principals": either("User:x", "User:a,Group:b", "Nobody"),
        }
    )


def binding_fields(prefix: str = "") -> dict:
    return {
        f"{prefix}resource_type": either(*acl_core.RESOURCE_TYPES, "ANY"),
        f"{prefix}pattern_type": either(*acl_core.FILTER_PATTERN_TYPES),
        f"{prefix}resource_name": either("hostile-main", "*", "kafka-cluster", "team-a."),
        f"{prefix}principal": either("User:alice", "Group:ops", "User:*", "alice"),
        f"{prefix}host": either("*", "10.0.0.1", "::1", "300.1.1.1"),
        f"{prefix}operation": either(*acl_core.ALL_OPERATIONS),
        f"{prefix}permission": either(*acl_core.PERMISSIONS),
    }


ACL_KEYS = ["create", "delete", *acl_core.BINDING_FIELDS, "permission_type"]


def acl_new(env):
    batch = form(
        {
            "mode": st.just("batch"),
            "text": text_document(
                ACL_KEYS, wrap=lambda v: st.sampled_from([v, {"create": v}, {"delete": [v]}])
            ),
        }
    )
    return st.one_of(form({"mode": either("single", "batch"), **binding_fields()}), batch)


def acl_apply(env):
    binding = st.fixed_dictionaries(
        {f: st.one_of(st.sampled_from(checks.ACL_VALUES[f]), JUNK) for f in acl_core.BINDING_FIELDS}
    )
    entry = st.one_of(binding.map(checks.to_json), text_document(ACL_KEYS), JUNK)
    return form({"create": entry, "delete": entry})


def acl_get(env):
    return form({**binding_fields(), "group_by": either("principal", "resource"), "page": NUMBER})


def request_form(env):
    return form(
        {
            "kind": either(*RequestKind.values),
            "topic": either("team-a.x", "team-b.y", MAIN),
            "partitions": NUMBER,
            "replication_factor": NUMBER,
            "total_count": NUMBER,
            "configs": either("retention.ms=1000", "-retention.ms", "junk line"),
            **{f"acl_{k}": v for k, v in binding_fields().items()},
            "reason": JUNK,
        }
    )


def decision(env):
    return form({"comment": JUNK})


def rules_form(env):
    return form(
        {"enabled": either("on", "true", "1"), "kinds": either(*RequestKind.values), "max_partitions": NUMBER}
    )


def change_policy_form(env):
    return form(
        {
            "enabled": either("on", "true", "1"),
            "kinds": either("config", "topic.delete", "acl", "group.reset", "reassignment", "x"),
            "roles": either("operator", "admin", "viewer", "nobody"),
            "approvers": either("1", "2", "3", "0", "-1"),
        }
    )


def plan_form(env):
    plan_keys = ["version", "partitions", "topic", "partition", "replicas", "log_dirs", MOVE, "any"]
    plan = text_document(plan_keys, wrap=lambda v: st.sampled_from([v, {"version": 1, "partitions": [v]}]))
    return form(
        {
            "intent": either("json", "move_off", "spread", "rf", "balance"),
            "plan_json": plan,
            "plan_file": as_upload(plan),
            "topics": either(MOVE, MAIN, "a,,b", "no-such"),
            "brokers": either("1", "2,3", "1 2", "-1", "9999999999999999999999"),
            "replication_factor": NUMBER,
            "throttle_mb": either("10", "0", "0.001", "1e3", "99999999999.999"),
            "elect_preferred": either("on"),
            "action": ACTIONS,
        }
    )


def election_form(env):
    return form(
        {
            "election_type": either("PREFERRED", "UNCLEAN"),
            "scope": either("imbalanced", "selected"),
            "partitions": either(f"{MAIN}-0", f"{MAIN}-99", "a-", "-1", f"{MAIN}-0,{MAIN}-1"),
            "confirmation": either(f"unclean {env.cluster.name}"),
        }
    )


def log_levels(env):
    return form(
        {
            "logger": either("org.apache.kafka.controller", "root", "a..b", "1abc"),
            "level": either(*LOG_LEVELS, RESET),
            "more": either("org.apache.kafka.raft=DEBUG", "a=b", "x=INFO,y=WARN"),
            "action": either("apply", "dry-run"),
        }
    )


def login_form(env):
    return form(
        {
            "username": either("admin", "viewer", ""),
            "password": either("pw-admin", "wrong"),
            "next": either("/", "//evil.example", "javascript:alert(1)"),
        }
    )


def nothing(env):
    return form({}, extra=True)


def keys(field_name: str, values):
    return lambda env: form({field_name: either(*values)})


def queue_get(env):
    return form(
        {
            "cluster": either("sandbox", "no-such-cluster"),
            "kind": either(*RequestKind.values),
            "state": either("pending", "succeeded", "nope"),
        }
    )


def audit_get(env):
    return form(
        {
            "actor": either("admin"),
            "action": either("topic.create", "topic"),
            "cluster": either("sandbox"),
            "resource": either("topic:a*", "*", "**"),
            "outcome": either("ok", "failed", "refused"),
            "since": either("2026-01-01T00:00", "2026-13-45", "0001-01-01T00:00"),
            "until": either("2020-01-01", "9999-12-31T23:59"),
            "before": NUMBER,
            "after": NUMBER,
        }
    )


def topic_list_get(env):
    return form(
        {
            "q": either("hostile", "(", "a{9999}"),
            "regex": either("1", "on"),
            "sort": JUNK,
            "desc": either("1"),
            "page": NUMBER,
            "per_page": NUMBER,
        }
    )


def notify_channel_form(env):
    return form(
        {
            "name": either("ops", "", "x" * 101, "<b>"),
            "kind": either("webhook", "slack", "email", "pager"),
            "url": either("http://127.0.0.1:9/x", "ftp://x", "http://u:p@h/", "javascript:alert(1)", JUNK),
            "recipients": either("ops@example.com", "not-an-address", JUNK),
            "events": either("request.submitted", "change.break_glass", "nope"),
            "enabled": either("on", "1"),
            "rotate_secret": either("on"),
        }
    )
