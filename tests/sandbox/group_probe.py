"""Run the same consumer-group scenario against a real Kafka and the sandbox and print what the
group APIs answer, normalised (no member ids, topic ids or timings), so the two can be diffed.

    python -m tests.sandbox.group_probe --bootstrap "$BOOTSTRAP_SERVERS" > real.txt
    python -m tests.sandbox.group_probe --sandbox > sandbox.txt
    diff real.txt sandbox.txt

A consumer-protocol consumer (``group.protocol=consumer``) and a classic one each join their
group, consume, commit; while they are members the probe lists and describes the groups (raw
ListGroups v5, DescribeGroups v5/v6, ConsumerGroupDescribe v1 and the admin client's view),
tries an admin OffsetCommit, OffsetDelete and DeleteGroups; a second consumer-protocol member
joins and leaves; after everyone left the same calls are made again. Topics and groups are
named uniquely and deleted at the end. Not collected by pytest (the tests are test_*.py).
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.protocol.admin import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.consumer import OffsetDeleteRequest, OffsetFetchRequest
from kafka.protocol.metadata import FindCoordinatorRequest

from sandbox.protocol import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
)
from tests.sandbox import group_requests

PARTITIONS, RECORDS = 4, 40
OWN_RESPONSES = {68: ConsumerGroupHeartbeatResponse, 69: ConsumerGroupDescribeResponse}


def _call(hostport: str, request: Any, version: int) -> Any:
    host, port = hostport.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        request.with_header(correlation_id=1, client_id="group-probe")
        sock.sendall(request.encode(version=version, header=True, framed=True))
        size = struct.unpack(">i", _read(sock, 4))[0]
        # this module's classes for the APIs kafka-python lacks (the registry holds one per key)
        cls = OWN_RESPONSES.get(request.API_KEY) or ResponseClassRegistry.get_response_class(request.header)
        return cls.decode(_read(sock, size), version=version, header=True)


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


class Probe:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        tag = uuid.uuid4().hex[:8]
        self.topic, self.other = f"probe-{tag}", f"probe-{tag}-other"
        self.new_group, self.old_group = f"probe-{tag}-consumer", f"probe-{tag}-classic"
        self.names = {
            self.topic: "TOPIC",
            self.other: "OTHER",
            self.new_group: "G_CONSUMER",
            self.old_group: "G_CLASSIC",
        }

    def say(self, label: str, value: Any) -> None:
        text = repr(value)
        for real, alias in sorted(self.names.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(real, alias)
        print(f"{label}: {text}", flush=True)

    def coordinator(self, group: str) -> str:
        first = self.bootstrap.split(",")[0]
        for _ in range(50):
            c = _call(first, FindCoordinatorRequest(key_type=0, coordinator_keys=[group]), 4).coordinators[0]
            if c.error_code == 0:
                return f"{c.host}:{c.port}"
            time.sleep(0.2)
        raise RuntimeError(f"no coordinator for {group}")

    def consumer(self, group: str, protocol: str) -> Consumer:
        conf = {
            "bootstrap.servers": self.bootstrap,
            "group.id": group,
            "group.protocol": protocol,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
        if protocol == "classic":
            conf.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
        return Consumer(conf)

    # ---- raw views ---------------------------------------------------------------------------

    def list_groups(self, label: str, states: list[str], types: list[str]) -> None:
        seen = []
        for b in self.bootstrap.split(","):
            r = _call(b, ListGroupsRequest(states_filter=states, types_filter=types), 5)
            seen += [
                (g.group_id, g.protocol_type, g.group_state, g.group_type)
                for g in r.groups
                if g.group_id in (self.new_group, self.old_group)
            ]
        self.say(label, sorted(seen))

    def describe_groups(self, label: str, group: str) -> None:
        co = self.coordinator(group)
        for v in (5, 6):
            r = _call(co, DescribeGroupsRequest(groups=[group], include_authorized_operations=False), v)
            g = r.groups[0]
            self.say(
                f"{label} DescribeGroups v{v}",
                (
                    g.error_code,
                    g.error_message,
                    g.group_state,
                    g.protocol_type,
                    g.protocol_data,
                    len(g.members),
                ),
            )

    def consumer_group_describe(self, label: str, group: str, targets: bool = True) -> None:
        r = _call(
            self.coordinator(group),
            ConsumerGroupDescribeRequest(group_ids=[group], include_authorized_operations=True),
            1,
        )
        g = r.groups[0]
        members = sorted(
            (
                m.member_epoch == g.assignment_epoch,
                m.client_host,
                tuple(m.subscribed_topic_names),
                m.subscribed_topic_regex,
                sum(len(tp.partitions) for tp in m.assignment.topic_partitions),
                sum(len(tp.partitions) for tp in m.target_assignment.topic_partitions) if targets else None,
                m.member_type,
            )
            for m in g.members
        )
        self.say(
            f"{label} ConsumerGroupDescribe v1",
            (
                g.error_code,
                g.error_message,
                g.group_state,
                g.group_epoch,
                g.assignment_epoch,
                g.assignor_name,
                g.authorized_operations if g.error_code == 0 else None,
                members,
            ),
        )

    def admin_describe(self, label: str, group: str) -> None:
        d = self.admin.describe_consumer_groups([group])[group].result(20)
        members = sorted(
            (m.host, sorted(tp.partition for tp in m.assignment.topic_partitions)) for m in d.members
        )
        self.say(f"{label} admin describe", (str(d.type), str(d.state), d.is_simple_consumer_group, members))

    def admin_commit(self, label: str, group: str) -> None:
        r = _call(self.coordinator(group), group_requests.offset_commit(group, self.topic, 0, 1), 9)
        self.say(
            f"{label} admin OffsetCommit v9",
            [(x.name, [(q.partition_index, q.error_code) for q in x.partitions]) for x in r.topics],
        )

    def offset_fetch(self, label: str, group: str) -> None:
        g = OffsetFetchRequest.OffsetFetchRequestGroup
        r = _call(
            self.coordinator(group),
            OffsetFetchRequest(
                groups=[g(group_id=group, member_id=None, member_epoch=-1, topics=None)], require_stable=False
            ),
            9,
        )
        rg = r.groups[0]
        self.say(
            f"{label} OffsetFetch v9",
            (
                rg.error_code,
                sorted(
                    (t.name, p.partition_index, p.committed_offset, p.error_code)
                    for t in rg.topics
                    for p in t.partitions
                ),
            ),
        )

    def offset_delete(self, label: str, group: str) -> None:
        t = OffsetDeleteRequest.OffsetDeleteRequestTopic
        p = t.OffsetDeleteRequestPartition
        topics = [
            t(name=self.topic, partitions=[p(partition_index=0), p(partition_index=99)]),
            t(name=self.other, partitions=[p(partition_index=0)]),
            t(name="no-such-topic-" + self.topic, partitions=[p(partition_index=0)]),
        ]
        r = _call(self.coordinator(group), OffsetDeleteRequest(group_id=group, topics=topics), 0)
        self.say(
            f"{label} OffsetDelete v0",
            (
                r.error_code,
                sorted((x.name, q.partition_index, q.error_code) for x in r.topics for q in x.partitions),
            ),
        )

    def delete_groups(self, label: str, group: str) -> None:
        r = _call(self.coordinator(group), DeleteGroupsRequest(groups_names=[group]), 2)
        self.say(f"{label} DeleteGroups v2", [(x.group_id, x.error_code) for x in r.results])

    def views(self, label: str, group: str) -> None:
        self.describe_groups(label, group)
        self.consumer_group_describe(label, group)
        self.admin_describe(label, group)
        self.offset_fetch(label, group)

    # ---- scenario ----------------------------------------------------------------------------

    def run(self) -> None:
        fs = self.admin.create_topics([NewTopic(self.topic, PARTITIONS, 1), NewTopic(self.other, 1, 1)])
        for f in fs.values():
            f.result(20)
        time.sleep(1)
        producer = Producer({"bootstrap.servers": self.bootstrap})
        for i in range(RECORDS):
            producer.produce(self.topic, f"m{i}".encode(), partition=i % PARTITIONS)
        producer.produce(self.other, b"x", partition=0)
        assert producer.flush(20) == 0
        consumers: list[Consumer] = []
        try:
            self.raw_scenario()
            self.scenario(consumers)
        finally:
            for c in consumers:
                c.close()
            self.cleanup()

    def consume_all(self, c: Consumer, label: str) -> None:
        got, deadline = 0, time.monotonic() + 60
        while got < RECORDS and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got += 1
        c.commit(asynchronous=False)
        self.say(f"{label} consumed", got)

    def wait(
        self, what: str, check: Callable[[], bool], consumers: list[Consumer], limit: float = 60
    ) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            for c in consumers:
                c.poll(0.1)
            if check():
                return
        self.say("TIMEOUT waiting for", what)

    def scenario(self, consumers: list[Consumer]) -> None:
        new, old = self.new_group, self.old_group
        a = self.consumer(new, "consumer")
        consumers.append(a)
        a.subscribe([self.topic])
        self.consume_all(a, "consumer-protocol member")
        c = self.consumer(old, "classic")
        consumers.append(c)
        c.subscribe([self.topic])
        self.consume_all(c, "classic member")
        # the commit of a member carries its epoch / generation: read back
        self.say(
            "committed (consumer group)",
            sorted(
                tp.offset
                for tp in a.committed([TopicPartition(self.topic, i) for i in range(PARTITIONS)], 20)
            ),
        )
        self.say(
            "committed (classic group)",
            sorted(
                tp.offset
                for tp in c.committed([TopicPartition(self.topic, i) for i in range(PARTITIONS)], 20)
            ),
        )
        self.wait("consumer group stable", lambda: self._state(new) == "Stable", [a, c], 30)
        self.list_groups("ListGroups v5 all", [], [])
        self.list_groups("ListGroups v5 types=[consumer]", [], ["consumer"])
        self.list_groups("ListGroups v5 types=[CLASSIC]", [], ["CLASSIC"])
        self.list_groups("ListGroups v5 states=[stable]", ["stable"], [])
        self.list_groups("ListGroups v5 types=[share]", [], ["share"])
        for label, g in (("live consumer group", new), ("live classic group", old)):
            self.views(label, g)
            self.admin_commit(label, g)
            self.offset_delete(label, g)
            self.delete_groups(label, g)
        b = self.consumer(new, "consumer")
        consumers.append(b)
        b.subscribe([self.topic])
        self.wait(
            "two members split the partitions",
            lambda: (
                len(a.assignment()) + len(b.assignment()) == PARTITIONS
                and bool(a.assignment())
                and bool(b.assignment())
            ),
            [a, b, c],
        )
        self.wait("consumer group stable with 2", lambda: self._state(new) == "Stable", [a, b, c], 30)
        self.say("split", sorted([len(a.assignment()), len(b.assignment())]))
        self.consumer_group_describe("two members", new)
        b.close()
        consumers.remove(b)
        self.wait(
            "the remaining member gets every partition", lambda: len(a.assignment()) == PARTITIONS, [a, c]
        )
        self.say("after leave", len(a.assignment()))
        self.wait("consumer group stable with 1", lambda: self._state(new) == "Stable", [a, c], 30)
        self.consumer_group_describe("one member again", new)
        for x in list(consumers):
            x.close()
            consumers.remove(x)
        self.list_groups("ListGroups v5 after leaving", [], [])
        for label, g in (("empty consumer group", new), ("empty classic group", old)):
            self.views(label, g)
            self.offset_delete(label, g)
            self.admin_commit(label, g)
            self.delete_groups(label, g)
        self.list_groups("ListGroups v5 after delete", [], [])
        self.delete_groups("deleted again", new)

    # ---- raw ConsumerGroupHeartbeat edge cases -------------------------------------------------

    def heartbeat(self, group: str, version: int = 1, to: str | None = None, **fields: Any) -> Any:
        request = group_requests.heartbeat(group, self.topic, **fields)
        return _call(to or self.coordinator(group), request, version)

    def hb(self, label: str, group: str, version: int = 1, **fields: Any) -> Any:
        r = self.heartbeat(group, version, **fields)
        parts = (
            None if r.assignment is None else sum(len(tp.partitions) for tp in r.assignment.topic_partitions)
        )
        shown = r.member_id if r.member_id in (None, "", fields.get("member_id")) else "<new id>"
        self.say(
            label, (r.error_code, r.error_message, shown, r.member_epoch, r.heartbeat_interval_ms > 0, parts)
        )
        return r

    def raw_scenario(self) -> None:
        g = self.new_group + "-raw"
        self.names[g] = "G_RAW"
        mid, other = str(uuid.uuid4()), str(uuid.uuid4())
        self.names[mid], self.names[other] = "MEMBER_1", "MEMBER_2"
        co = self.coordinator(g)
        wrong = next(b for b in self.bootstrap.split(",") if b != co)
        r = self.heartbeat(g, to=wrong, member_id=mid)
        self.say("heartbeat to another broker", (r.error_code, r.error_message))
        self.hb("v1 without member id", g)
        self.hb("join without rebalance timeout", g, member_id=mid, rebalance_timeout_ms=-1)
        self.hb("join with owned partitions null", g, member_id=mid, topic_partitions=None)
        self.hb("join without subscription", g, member_id=mid, subscribed_topic_names=None)
        self.hb("epoch -3", g, member_id=mid, member_epoch=-3)
        self.hb("assignor foo", g, member_id=mid, server_assignor="foo")
        r = self.heartbeat(g, member_id=mid, subscribed_topic_names=None, subscribed_topic_regex="(")
        self.say("bad regex", (r.error_code, (r.error_message or "").split(":")[0]))
        self.hb("heartbeat to an unknown group", g, member_id=mid, member_epoch=3)
        self.hb("leave an unknown group", g, member_id=mid, member_epoch=-1)
        v0 = self.hb("v0 join without member id", g, version=0)
        first = self.hb("join", g, member_id=mid, server_assignor="range")
        self.hb("heartbeat of an unknown member", g, member_id=other, member_epoch=1)
        self.hb("epoch from the future", g, member_id=mid, member_epoch=first.member_epoch + 5)
        self.hb(
            "heartbeat",
            g,
            member_id=mid,
            member_epoch=first.member_epoch,
            rebalance_timeout_ms=-1,
            subscribed_topic_names=None,
            topic_partitions=None,
        )
        self.consumer_group_describe("raw group, range assignor", g)
        # offsets of a consumer-protocol member carry its epoch
        for label, epoch, member, version in (
            ("commit with the member epoch", first.member_epoch, mid, 9),
            ("commit with a stale epoch", first.member_epoch + 7, mid, 9),
            ("commit by an unknown member", first.member_epoch, other, 9),
            ("commit v8 by a consumer-protocol member", first.member_epoch, mid, 8),
        ):
            req = group_requests.offset_commit(
                g, self.topic, 0, 3, generation_id_or_member_epoch=epoch, member_id=member
            )
            r = _call(co, req, version)
            self.say(label, [q.error_code for x in r.topics for q in x.partitions])
        fg = OffsetFetchRequest.OffsetFetchRequestGroup
        for label, member, epoch in (
            ("fetch as the member", mid, first.member_epoch),
            ("fetch with a stale epoch", mid, first.member_epoch + 2),
            ("fetch as an unknown member", other, first.member_epoch),
        ):
            r = _call(
                co,
                OffsetFetchRequest(
                    groups=[fg(group_id=g, member_id=member, member_epoch=epoch, topics=None)],
                    require_stable=False,
                ),
                9,
            )
            self.say(label, (r.groups[0].error_code, len(r.groups[0].topics)))
        # static membership: a temporary leave keeps the partitions, a new member id takes them over
        s1 = self.hb("static join", g, member_id=other, instance_id="inst-1")
        intruder = str(uuid.uuid4())
        self.names[intruder] = "MEMBER_4"
        self.hb("static instance taken", g, member_id=intruder, instance_id="inst-1")
        self.hb("static leave (-2)", g, member_id=other, member_epoch=-2, instance_id="inst-1")
        new_id = str(uuid.uuid4())
        self.names[new_id] = "MEMBER_3"
        self.hb("static rejoin under a new member id", g, member_id=new_id, instance_id="inst-1")
        self.hb(
            "the old member id is fenced",
            g,
            member_id=other,
            member_epoch=s1.member_epoch,
            instance_id="inst-1",
        )
        self.hb("leave", g, member_id=new_id, member_epoch=-1, instance_id="inst-1")
        self.hb("leave", g, member_id=mid, member_epoch=-1)
        self.hb("leave twice", g, member_id=mid, member_epoch=-1)
        self.consumer_group_describe("raw group, one member left", g, targets=False)
        self.names[v0.member_id] = "V0_MEMBER"
        self.say("a member id made by the coordinator", (len(v0.member_id), "-" in v0.member_id[:1]))
        self.hb("the v0 member leaves", g, member_id=v0.member_id, member_epoch=-1)
        self.consumer_group_describe("raw group, everyone left", g)
        self.delete_groups("raw group", g)
        # a group made by an admin commit is a classic group without protocol type
        admin_group = self.new_group + "-admin"
        self.names[admin_group] = "G_ADMIN"
        req = group_requests.offset_commit(admin_group, self.topic, 1, 5)
        self.say(
            "admin commit to a new group",
            [q.error_code for x in _call(self.coordinator(admin_group), req, 9).topics for q in x.partitions],
        )
        for b in self.bootstrap.split(","):
            for lg in _call(b, ListGroupsRequest(states_filter=[], types_filter=[]), 5).groups:
                if lg.group_id == admin_group:
                    self.say("listed", (lg.protocol_type, lg.group_state, lg.group_type))
        self.describe_groups("admin-made group", admin_group)
        self.hb("consumer-protocol member joins the admin-made group", admin_group, member_id=mid)
        self.consumer_group_describe("converted group", admin_group)
        self.offset_fetch("converted group keeps its offsets", admin_group)
        self.hb("leave", admin_group, member_id=mid, member_epoch=-1)
        self.delete_groups("converted group", admin_group)
        missing = self.new_group + "-missing"
        self.names[missing] = "G_MISSING"
        req = group_requests.offset_commit(
            missing, self.topic, 1, 5, generation_id_or_member_epoch=4, member_id="m"
        )
        for v in (8, 9):
            r = _call(self.coordinator(missing), req, v)
            self.say(
                f"commit v{v} with a generation to an unknown group",
                [q.error_code for x in r.topics for q in x.partitions],
            )
        r = _call(
            self.coordinator(missing),
            ConsumerGroupDescribeRequest(group_ids=[missing], include_authorized_operations=False),
            1,
        )
        self.say("describe an unknown group", [(x.error_code, x.error_message) for x in r.groups])
        r = _call(
            self.coordinator(missing),
            ConsumerGroupDescribeRequest(group_ids=[""], include_authorized_operations=False),
            1,
        )
        self.say(
            "describe an empty group id", [(x.group_id, x.error_code, x.error_message) for x in r.groups]
        )
        self.offset_delete("unknown group", missing)

    def _state(self, group: str) -> str:
        r = _call(
            self.coordinator(group),
            ConsumerGroupDescribeRequest(group_ids=[group], include_authorized_operations=False),
            1,
        )
        return r.groups[0].group_state

    def cleanup(self) -> None:
        for g in (self.new_group, self.old_group):
            try:
                _call(self.coordinator(g), DeleteGroupsRequest(groups_names=[g]), 2)
            except Exception:  # best effort
                pass
        for f in self.admin.delete_topics([self.topic, self.other]).values():
            try:
                f.result(20)
            except Exception:
                pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", help="a Kafka's bootstrap servers")
    ap.add_argument("--sandbox", action="store_true", help="run against an in-process sandbox")
    args = ap.parse_args()
    if args.sandbox:
        from sandbox.testing import running_sandbox

        with running_sandbox(brokers=3, controllers=1, speed=0) as cluster:
            Probe(cluster.bootstrap_servers).run()
    elif args.bootstrap:
        Probe(args.bootstrap).run()
    else:
        ap.error("--bootstrap or --sandbox")
        sys.exit(2)


if __name__ == "__main__":
    main()
