"""The tour of the console's pages: every route that answers GET with a page, with data that fills it.

``toured(sandbox, cluster, people, lake)`` (``build`` and, afterwards, the sandbox's topic and groups
removed) puts on the (shared) sandbox and in the database what makes each
page non-empty - a topic with millions of records and gigabytes on disk and a retention set, a group
lagging by half a million and one lagging by a handful, a running reassignment (its operation and
throttles), a pending request, a config change and an ACL binding made through the console (audit
events), an open alert, a notification channel, an API token, the
sandbox's controllers registered as a KIP-919 cluster - and returns a ``Tour`` whose ``pages()`` are
(label, path) pairs to visit as ``admin``. The values are large on purpose: a page that shows one raw
is caught by tests/unit/test_page_values.py; tests/e2e/test_screens*.py lays out the same pages.

Every named route is either a ``STOPS`` entry or in ``LEFT_OUT`` with the reason
(tests/unit/test_page_tour.py checks both, and that a route left out as POST-only refuses GET).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

GiB = 1 << 30
RETENTION_MS = 604800000
BIG_LAG = 510_696
SMALL_LAG = 54
END_OFFSET = 5_000_000
_names = itertools.count()


@dataclass(frozen=True)
class Stop:
    """One page: its route, the URL arguments besides the cluster's name (Tour attribute names), a
    query string, and which registered cluster it is on ("cluster" or "controllers")."""

    route: str
    args: tuple[tuple[str, str], ...] = ()
    query: str = ""
    on: str = "cluster"
    label: str = ""

    @property
    def id(self) -> str:
        return self.label or self.route


def _s(route: str, query: str = "", on: str = "cluster", label: str = "", **args: str) -> Stop:
    return Stop(route, tuple(args.items()), query, on, label)


STOPS: tuple[Stop, ...] = (
    # cluster-less pages
    _s("cluster_list"),
    _s("cluster_new"),
    _s("fleet_home"),
    _s("search", query="?q=tour"),
    _s("review_queue"),
    _s("account_tokens"),
    _s("audit_list"),
    _s("audit_detail", event_id="event_id"),
    _s("audit_chain"),
    _s("operation_detail", op_id="op_id"),
    _s("operation_progress", op_id="op_id"),
    # the cluster's pages
    _s("cluster_overview"),
    _s("cluster_settings"),
    _s("cluster_access"),
    _s("notify_channels"),
    _s("notify_channel", channel_id="channel_id"),
    _s("notify_deliveries"),
    _s("topic_list"),
    _s("topic_create"),
    _s("topic_batch_create"),
    _s("topic_policy"),
    _s("topic_detail", topic="topic"),
    _s("topic_add_partitions", topic="topic"),
    _s("topic_configs", topic="topic"),
    _s("messages", topic="topic", query="?mode=newest&count=6"),
    _s("messages_produce", topic="topic"),
    _s("data_access"),
    _s("broker_configs_default"),
    _s("broker_configs", broker="broker"),
    _s("broker_list"),
    _s("broker_detail", broker="broker"),
    _s("group_list"),
    _s("group_detail", group="group"),
    _s("group_detail", group="small_group", label="group_detail_small_lag"),
    _s("group_topic_consumers", topic="topic"),
    _s("group_reset", group="group"),
    _s("group_delete", group="group"),
    _s("group_offsets_delete", group="group"),
    _s("acl_list"),
    _s("acl_new"),
    _s("acl_delete", query="?resource_type=TOPIC&pattern_type=LITERAL&resource_name=tour"),
    _s("acl_effective", query="?principal=User%3Atour&resource_type=TOPIC&resource_name=tour&host=*"),
    _s("quotas", query="?user=tour&client_id=tour-app"),
    _s("scram_users"),
    _s("scram_delete", query="?user=tour&mechanism=SCRAM-SHA-512"),
    _s("topic_purge", topic="topic"),
    _s("transactions"),
    _s("broker_log_dirs", broker="broker"),
    _s("log_dir_plan"),
    _s("log_dir_move", op_id="log_dir_op"),
    _s("log_dir_move_progress", op_id="log_dir_op"),
    _s("share_groups"),
    _s("share_group", group_id="share_group"),
    _s("share_group_reset", group_id="share_group"),
    _s("share_group_delete", group_id="share_group"),
    _s("transactions_hanging", query="?broker_id=1"),
    _s("transaction_abort"),
    _s("request_list"),
    _s("request_new"),
    _s("request_rules"),
    _s("request_detail", request_id="request_id"),
    _s("request_status", request_id="request_id"),
    _s("change_policy"),
    _s("reassign_list"),
    _s("reassign_new"),
    _s("reassign_detail", rid="rid"),
    _s("reassign_progress", rid="rid"),
    _s("throttle_list"),
    _s("election_page"),
    _s("capacity"),
    _s("quorum_page"),
    _s("controller_detail", on="controllers", node_id="controller"),
    _s("quorum_features"),
    _s("quorum_voters"),
    _s("broker_unregister", broker_id="broker"),
    _s("drift_recent"),
    _s("alert_list"),
    _s("alert_glance"),
    _s("windows_page"),
    _s("estate"),
)

_POST = "POST only: an action, no page (a GET answers 405)"
_FILE = "a download (JSON, YAML, CSV), not a page"
LEFT_OUT: dict[str, str] = {
    **dict.fromkeys(
        (
            "acl_apply",
            "account_token_revoke",
            "alert_acknowledge",
            "alert_silence_create",
            "alert_silence_end",
            "alert_rule_set",
            "audit_verify_all",
            "capacity_run",
            "capacity_snapshot",
            "cluster_remove",
            "cluster_test",
            "cluster_access_revoke",
            "data_grant_remove",
            "masking_rule_remove",
            "estate_plan",
            "estate_submit",
            "health_check_start",
            "notify_channel_delete",
            "notify_channel_test",
            "reassign_cancel",
            "reassign_pause",
            "log_dir_move_cancel",
            "reassign_resume",
            "reassign_external_cancel",
            "reassign_throttle",
            "request_approve",
            "request_cancel",
            "request_reject",
            "throttle_cleanup",
            "topic_delete",
            "window_end",
            "window_settings",
            "change_schedule",
            "change_unschedule",
        ),
        _POST,
    ),
    **dict.fromkeys(
        (
            "acl_export",
            "audit_export_csv",
            "audit_export_jsonl",
            "estate_export",
            "reassign_export",
            "reassign_rollback",
        ),
        _FILE,
    ),
    "transaction_detail": "a transactional id the tour's sandbox does not hold (404); "
    "tests/unit/test_transactions_doors.py visits one",
    "home": "a redirect to the only cluster's overview, the fleet home or the cluster list",
    "healthz": "the deployment's probe: plain text for a load balancer",
    "readyz": "the deployment's probe: JSON for a load balancer",
    "metrics": "Prometheus' text format",
    "login": "the signed-out page (the tour is signed in); tests/e2e/test_screens* may add it",
    "logout": "ends the session",
    "sso_oidc_login": "a redirect to the identity provider",
    "sso_oidc_callback": "the identity provider's redirect back",
}
POST_ONLY = frozenset(route for route, why in LEFT_OUT.items() if why == _POST)


@dataclass
class Tour:
    """What the stops point at; ``pages()`` are the paths to visit (as ``people["admin"]``)."""

    cluster: Any
    controllers: Any
    people: dict
    topic: str
    group: str
    small_group: str
    broker: str = "1"
    controller: int = 101
    request_id: int = 0
    rid: int = 0
    op_id: int = 0
    event_id: int = 0
    channel_id: int = 0
    share_group: str = ""
    log_dir_op: int = 0

    def url(self, stop: Stop) -> str:
        from django.urls import NoReverseMatch, reverse

        kwargs = {key: getattr(self, attr) for key, attr in stop.args}
        cluster = self.controllers if stop.on == "controllers" else self.cluster
        try:
            path = reverse(stop.route, kwargs={"name": cluster.name, **kwargs})
        except NoReverseMatch:  # a cluster-less page
            path = reverse(stop.route, kwargs=kwargs)
        return path + stop.query

    def pages(self) -> list[tuple[str, str]]:
        """(label, path) of every stop."""
        return [(stop.id, self.url(stop)) for stop in STOPS]


def _uniq(prefix: str) -> str:
    return f"{prefix}-{next(_names)}"


def _fill_topic(sandbox, name: str) -> None:
    """Three partitions (replicas 1,2 / 2,3 / 3,1), millions of records and 1.5 GiB per replica."""
    sandbox.create_topic(
        name,
        partitions=3,
        replication_factor=2,
        configs={
            "retention.ms": str(RETENTION_MS),
            "retention.bytes": str(4 * GiB),
            "segment.bytes": str(GiB),
        },
        assignment=[[1, 2], [2, 3], [3, 1]],
    )
    with sandbox.state.lock:
        for p in sandbox.state.topics[name].partitions:
            p.end_offset = END_OFFSET
            p.sizes = {b: 1.5 * GiB for b in p.replicas}
        sandbox.state.touch()


def _lagging_group(sandbox, topic: str, lag: int) -> str:
    group = _uniq("tour-group")
    sandbox.add_group(
        group, offsets={(topic, p): END_OFFSET - lag // 3 - (lag % 3 if p == 0 else 0) for p in range(3)}
    )
    return group


def _reassignment(cluster, people, topic: str):
    """A running, throttled console reassignment of partition 0 (1,2 -> 1,3) with its ledger."""
    from tests.unit.matrix_world import World

    return World(sandbox=None, cluster=cluster, people=people, lake=None).reassignment(topic=topic)


def _changes(cluster, admin, topic: str) -> int:
    """A config change on the topic (max.message.bytes to 2 MiB) and an ACL binding on it, made through
    the console's actions; returns the config change's audit event (its page shows before and after)."""
    from console.acls import actions as acls
    from console.configs import actions as configs
    from console.kafka import AclBinding, ConfigChange
    from console.models import AuditEvent

    configs.alter_configs(
        actor=admin,
        cluster=cluster,
        resource=configs.topic_resource(topic),
        changes=[ConfigChange("max.message.bytes", "SET", str(2 * 1024 * 1024))],
    )
    event = AuditEvent.objects.filter(action__startswith="config").latest("pk").pk
    acls.change_acls(
        actor=admin,
        cluster=cluster,
        creates=[AclBinding("TOPIC", topic, "LITERAL", "User:tour", "*", "READ", "ALLOW")],
    )
    from console.scram import actions as scram

    scram.set_credential(
        actor=admin,
        cluster=cluster,
        user="tour",
        mechanism="SCRAM-SHA-512",
        iterations=8192,
        password="tour-password",
    )
    from console.quotas import actions as quotas
    from console.quotas import core as quota_core

    for entity, values in (
        ("user=tour", {"producer_byte_rate": 10 * 1024 * 1024, "request_percentage": 50}),
        ("user=tour,client-id=<default>", {"consumer_byte_rate": 52_428_800}),
        ("client-id=tour-app", {"controller_mutation_rate": 12.5}),
    ):
        quotas.alter_quotas(
            actor=admin, cluster=cluster, entity=quota_core.parse_entity(entity), changes=values
        )
    return event


def _data_access(cluster, people, topic: str) -> None:
    """A data grant (read and write on the tour's topics, for the operator) and a masking rule on them,
    made through the console's actions: the data-access page lists both, the messages page masks."""
    from console.messages import actions as messages

    prefix = topic.split("-")[0]
    messages.grant(actor=people["admin"], cluster=cluster, user=people["operator"], prefix=prefix, write=True)
    messages.add_rule(
        actor=people["admin"],
        cluster=cluster,
        prefix=prefix,
        kind="json_path",
        expression="$.synthetic",
        note="tour",
    )


def _capacity_report(lake: Path, cluster_name: str) -> None:
    """Two days of synthetic hourly snapshots ending half a day ago and the capacity reports the
    pipeline's reference engine makes of them (the capacity page's charts and tables)."""
    from pipeline import generate, reference, reports
    from pipeline import lake as lakes
    from pipeline.reference import JobParams

    start = (datetime.now(UTC) - timedelta(days=2)).replace(minute=0, second=0, microsecond=0)
    shape = generate.Shape(topics=8, partitions=3, snapshots=36, interval_s=3600)
    generate.write_lake(lake, cluster_name, shape, start, per_file=12)
    until = start + timedelta(days=2)
    tables = {ds: lakes.read_window(lake, ds, cluster_name, start, until) for ds in lakes.DATASETS}
    meta = {"since": start.isoformat(), "until": until.isoformat(), "generated_at": until.isoformat()}
    reports.publish(lake, cluster_name, reference.compute(tables, JobParams(idle_days=1)), meta)


def build(sandbox, cluster, people, lake=None) -> Tour:
    """The tour's data on ``sandbox`` (registered as ``cluster``; ``people``: tests/conftest.py's personas).

    With ``lake`` (a test's own telemetry lake, e.g. the ``telemetry_lake`` fixture's, which
    TELEMETRY_LAKE_DIR names) the capacity reports are published from synthetic history and a
    telemetry snapshot is taken: sizes on the topic pages, the fleet home's summary, search's names.
    """
    from console.models import Cluster
    from console.notify import actions as notify
    from console.requests import actions as requests
    from tests.unit.alert_world import make_alert

    topic = _uniq("tour")
    _fill_topic(sandbox, topic)
    group, small = _lagging_group(sandbox, topic, BIG_LAG), _lagging_group(sandbox, topic, SMALL_LAG)
    request = requests.submit_request(
        actor=people["requester"],
        cluster=cluster,
        kind="topic.create",
        payload={
            "name": _uniq("team-a.tour"),
            "partitions": 12,
            "replication_factor": 2,
            "configs": {"retention.ms": str(RETENTION_MS)},
        },
        reason="the page tour",
    )
    moving = _reassignment(cluster, people, topic)
    changed = _changes(cluster, people["admin"], topic)
    _data_access(cluster, people, topic)
    channel, _ = notify.create_channel(
        actor=people["admin"],
        cluster=cluster,
        name="tour",
        kind="webhook",
        events=[],
        url="https://hooks.example.com/tour",
    )
    make_alert(
        cluster,
        "group_lag",
        subject=group,
        value=float(BIG_LAG),
        threshold=10000.0,
        summary=f"group {group} lags",
    )
    if lake is not None:
        from console.telemetry import snapshots

        _capacity_report(Path(lake), cluster.name)
        snapshots.collect_snapshot(cluster=cluster, force=True, lake_dir=lake)
    controllers = Cluster.objects.create(
        name=_uniq("tour-ctl"), bootstrap_controllers=sandbox.bootstrap_controllers, request_timeout_s=5
    )
    from tests.unit.matrix_world import World
    from tests.unit.share_world import empty_group

    share_group, _ = empty_group(sandbox, cluster)  # share.version on (toured puts it back)
    return Tour(
        cluster=cluster,
        controllers=controllers,
        people=people,
        topic=topic,
        group=group,
        small_group=small,
        request_id=request.pk,
        rid=moving.pk,
        op_id=moving.operation_id,
        event_id=changed,
        channel_id=channel.pk,
        share_group=share_group,
        log_dir_op=World(sandbox=None, cluster=cluster, people=people, lake=None)
        .log_dir_move(topic=topic)
        .pk,
    )


@contextmanager
def toured(sandbox, cluster, people, lake=None) -> Iterator[Tour]:
    """``build``, and the tour's topics, groups and ACLs taken off the shared sandbox afterwards."""
    from sandbox import share_groups

    with sandbox.state.lock:
        topics, groups, acls = set(sandbox.state.topics), set(sandbox.state.groups), list(sandbox.state.acls)
        quotas, features = dict(sandbox.state.client_quotas), dict(sandbox.state.features)
        shared = set(share_groups.of(sandbox.state).groups)
    try:
        yield build(sandbox, cluster, people, lake)
    finally:
        with sandbox.state.lock:
            for name in set(sandbox.state.topics) - topics:
                sandbox.state.remove_topic(name)
            for name in set(sandbox.state.groups) - groups:
                del sandbox.state.groups[name]
            store = share_groups.of(sandbox.state).groups
            for name in set(store) - shared:
                del store[name]
            if sandbox.state.features != features:
                sandbox.state.features.clear()
                sandbox.state.features.update(features)
                sandbox.state.features_epoch += 1
            sandbox.state.acls[:] = acls
            sandbox.state.client_quotas = quotas
            sandbox.state.touch()
