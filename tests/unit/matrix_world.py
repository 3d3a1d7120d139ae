"""Shared by the role-matrix tests: who holds which role where, the objects routes act on, and a
snapshot of everything a request could change (the console's rows, the sandboxes' Kafka state, the
capacity lake, the queue), so a refused request can be shown to have changed nothing."""

from __future__ import annotations

import copy
import itertools
import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection

from console.models import (
    AuditChainHead,
    AuditEvent,
    Cluster,
    Operation,
    OperationItem,
    OperationState,
    Role,
    RoleBinding,
    TopicPolicy,
)
from console.models.reassignment import (
    EntryState,
    PartitionState,
    Reassignment,
    ReassignmentPartition,
    Stage,
    ThrottleEntry,
)
from console.models.requests import AutoApproveRule, ChangeRequest, Notification, RequestEvent
from console.reassignment import throttles
from console.requests import actions as requests
from tests.conftest import DISPATCHED

# Every persona of tests/conftest.py, plus a cluster admin: the Role.ADMIN binding (not a superuser).
ROLES = ("anonymous", "admin", "clusteradmin", "operator", "requester", "auditor", "viewer", "outsider")
BOUND = ("admin", "clusteradmin", "operator", "requester", "auditor", "viewer")
LOGIN = "login"
MB = 1024 * 1024
_names = itertools.count()


def uniq(prefix: str = "rm") -> str:
    return f"{prefix}-{next(_names)}"


def bind(cluster: Cluster, people: dict, with_admin: bool = True) -> None:
    """The personas' roles of tests/conftest.py on another cluster (and the cluster admin's)."""
    pairs = [("operator", Role.OPERATOR), ("auditor", Role.AUDITOR), ("viewer", Role.VIEWER)]
    if with_admin:
        pairs.append(("clusteradmin", Role.ADMIN))
    for name, role in pairs:
        RoleBinding.objects.create(cluster=cluster, user=people[name], role=role)
    RoleBinding.objects.create(
        cluster=cluster, user=people["requester"], role=Role.REQUESTER, namespaces=["team-a."]
    )


def cluster_admin(cluster: Cluster):
    user = get_user_model().objects.create_user(username="clusteradmin", password="pw-clusteradmin")
    RoleBinding.objects.create(cluster=cluster, user=user, role=Role.ADMIN)
    return user


# ---- the snapshot --------------------------------------------------------------------------------

MODELS = (
    Cluster,
    RoleBinding,
    Group,
    Operation,
    OperationItem,
    AuditEvent,
    AuditChainHead,
    ChangeRequest,
    RequestEvent,
    Notification,
    AutoApproveRule,
    TopicPolicy,
    Reassignment,
    ReassignmentPartition,
    ThrottleEntry,
)


def db_state() -> dict:
    """Every row of the tables above and of the users (raw SQL: the ORM would be ten times slower).

    Audit events with outcome "refused" (a refused change is recorded, see
    console/audit/refusals.py; so is a message read refused for want of data.read,
    console/messages/reads.py) and the chain head they move are left out: a refusal changes
    nothing else. ``refusals()`` counts the refused changes for the tests that expect one.
    """
    tables = [m._meta.db_table for m in (*MODELS, get_user_model()) if m is not AuditChainHead]
    events = AuditEvent._meta.db_table
    with connection.cursor() as cursor:
        out = {}
        for table in tables:
            where = " WHERE outcome != 'refused'" if table == events else ""
            cursor.execute(f'SELECT * FROM "{table}"{where} ORDER BY 1')  # names from the models
            out[table] = cursor.fetchall()
    return out


def refusals() -> list[tuple[str, str]]:
    """(action, actor) of every refused event so far, oldest first."""
    return list(
        AuditEvent.objects.filter(outcome="refused").order_by("pk").values_list("action", "actor_name")
    )


def kafka_state(sandbox) -> dict:
    """Topics (replicas, ISR, leaders, moves in flight, configs), broker configs, log levels, ACLs."""
    s = sandbox.state
    with s.lock:
        topics = {
            name: (
                dict(t.configs),
                [(p.replicas[:], p.isr[:], p.leader, p.adding[:], p.removing[:]) for p in t.partitions],
            )
            for name, t in s.topics.items()
        }
        return {
            "topics": topics,
            "brokers": copy.deepcopy(s.broker_configs),
            "loggers": copy.deepcopy(s.logger_levels),
            "acls": sorted(repr(a) for a in s.acls),
            "offsets": {g: dict(x.offsets) for g, x in s.groups.items()},
            "quotas": sorted((repr(e), sorted(q.items())) for e, q in s.client_quotas.items()),
            "scram": s.scram_credentials.users(),
            "kraft": (dict(s.features), sorted(s.removed_voters), sorted(s.unregistered_brokers)),
        }


@contextmanager
def kafka_restored(sandbox):
    """Give the shared sandbox back as it was: broker configs, log levels, ACLs, quotas, SCRAM credentials,
    feature levels and the voter set; new topics removed."""
    s = sandbox.state
    with s.lock:
        saved = (copy.deepcopy(s.broker_configs), copy.deepcopy(s.logger_levels), list(s.acls), set(s.topics))
        quotas = copy.deepcopy(s.client_quotas)
        kraft = (dict(s.features), s.features_epoch, set(s.removed_voters), set(s.unregistered_brokers))
        credentials = s.scram_credentials.items()
    try:
        yield
    finally:
        with s.lock:
            s.broker_configs.clear()
            s.broker_configs.update(saved[0])
            s.logger_levels.clear()
            s.logger_levels.update(saved[1])
            s.acls[:] = saved[2]
            for name in set(s.topics) - saved[3]:
                s.remove_topic(name)
            s.client_quotas = quotas
            s.features, s.features_epoch = dict(kraft[0]), kraft[1]
            s.removed_voters, s.unregistered_brokers = set(kraft[2]), set(kraft[3])
            s.scram_credentials.replace(credentials)
            s.touch()


# ---- the world -----------------------------------------------------------------------------------


@dataclass
class World:
    sandbox: Any  # cluster A's Kafka (frozen: nothing moves unless a request moves it)
    cluster: Cluster
    people: dict
    lake: Path
    other: Any = None  # cluster B's Kafka, when the test has one

    def state(self) -> dict:
        lake = (
            sorted(str(p.relative_to(self.lake)) for p in self.lake.rglob("*")) if self.lake.exists() else []
        )
        return {
            "db": db_state(),
            "kafka": kafka_state(self.sandbox),
            "other": kafka_state(self.other) if self.other is not None else None,
            "lake": lake,
            "queued": list(DISPATCHED),
        }

    def topic(self, assignment=((1, 2),), sandbox=None, name: str = "") -> str:
        name = name or uniq()
        (sandbox or self.sandbox).create_topic(
            name, partitions=len(assignment), replication_factor=len(assignment[0]), assignment=assignment
        )
        return name

    def group(self) -> tuple[str, str]:
        """An empty consumer group that committed offset 5 of 10 on a new topic: (group, topic)."""
        topic = self.topic()
        with self.sandbox.state.lock:
            self.sandbox.state.topics[topic].partitions[0].end_offset = 10
        group = uniq("group")
        self.sandbox.add_group(group, offsets={(topic, 0): 5})
        return group, topic

    def request(self, cluster: Cluster | None = None, who: str = "requester", prefix: str = "team-a."):
        """A pending topic.create request (submitted through the service, as the page does)."""
        return requests.submit_request(
            actor=self.people[who],
            cluster=cluster or self.cluster,
            kind="topic.create",
            payload={"name": uniq(prefix + "req"), "partitions": 1, "replication_factor": 1, "configs": {}},
            reason="for the matrix",
        )

    def log_dir_move(self, topic: str = "", who: str = "operator") -> Operation:
        """A running move of partition 0's replica on broker 1 to its broker's log dir (an Operation)."""
        topic = topic or self.topic()
        move = {"topic": topic, "partition": 0, "broker": 1, "dir": "/var/lib/kafka/broker-1/data"}
        return Operation.objects.create(
            kind="logdir.move",
            cluster=self.cluster,
            state=OperationState.RUNNING,
            created_by=self.people[who],
            params={"moves": [move], "throttle": None},
        )

    def reassignment(
        self, cluster: Cluster | None = None, topic: str = "", who: str = "operator", **pacing
    ) -> Reassignment:
        """A running, throttled console reassignment: its operation, one moving partition, its ledger
        (``pacing``: Reassignment fields such as ``max_moves_per_broker``, ``paused``)."""
        cluster = cluster or self.cluster
        topic = topic or self.topic()
        op = Operation.objects.create(
            kind="reassignment.execute",
            cluster=cluster,
            state=OperationState.RUNNING,
            created_by=self.people[who],
            params={"plan": [[topic, 0, [1, 3]]]},
        )
        r = Reassignment.objects.create(
            operation=op,
            cluster=cluster,
            throttle_bytes_per_s=MB,
            stage=Stage.MOVING,
            partitions_total=1,
            **pacing,
        )
        ReassignmentPartition.objects.create(
            reassignment=r,
            topic=topic,
            partition=0,
            original=[1, 2],
            target=[1, 3],
            state=PartitionState.MOVING,
        )
        for broker in ("1", "2", "3"):
            for config in throttles.RATE_CONFIGS:
                ThrottleEntry.objects.create(
                    reassignment=r,
                    cluster=cluster,
                    resource_type="BROKER",
                    resource_name=broker,
                    config=config,
                    value=str(MB),
                    state=EntryState.SET,
                )
        return r

    def external_move(self) -> str:
        """A topic whose partition 0 is being moved by someone outside the console (1,2 -> 1,3)."""
        from console.clusters.actions import gateway_for
        from console.kafka import TopicPartition

        topic = self.topic()
        result = gateway_for(self.cluster).alter_partition_reassignments({TopicPartition(topic, 0): [1, 3]})
        assert all(not isinstance(v, Exception) for v in result.values()), result
        return topic

    def foreign_throttle(self) -> str:
        """A throttle config on a topic that no console reassignment recorded (the cleanup's key)."""
        from console.clusters.actions import gateway_for
        from console.kafka import ConfigChange, ConfigResource

        topic = self.topic()
        result = gateway_for(self.cluster).incremental_alter_configs(
            {ConfigResource("TOPIC", topic): [ConfigChange(throttles.LEADER_REPLICAS, "SET", "0:1")]}
        )
        assert all(not isinstance(v, Exception) for v in result.values()), result
        return f"TOPIC|{topic}|{throttles.LEADER_REPLICAS}"

    def controllers(self) -> Cluster:
        """The sandbox's controllers registered as a KIP-919 cluster, the personas bound as on A."""
        cluster = Cluster.objects.create(
            name="sandbox-ctl", bootstrap_controllers=self.sandbox.bootstrap_controllers, request_timeout_s=5
        )
        bind(cluster, self.people)
        return cluster

    def acl(self, principal: str = "") -> dict:
        return {
            "resource_type": "TOPIC",
            "resource_name": uniq("acl"),
            "pattern_type": "LITERAL",
            "principal": principal or f"User:{uniq('app')}",
            "host": "*",
            "operation": "READ",
            "permission": "ALLOW",
        }

    def acl_json(self) -> str:
        return json.dumps(self.acl(), sort_keys=True)
