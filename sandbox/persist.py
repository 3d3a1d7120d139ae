"""Save and restore a sandbox cluster's state as JSON (``--state FILE``).

Kept: topics (ids, configs, placement, ISR, leaders, sizes, offsets, reassignments, synthetic
rates), dynamic broker configs, logger levels, ACLs, client quotas, SCRAM credentials (salt, stored
and server keys, iterations: what Kafka's metadata log keeps), groups (kind, epochs, synthetic
members, offsets), features, racks and the virtual clock. A file saved before credentials were kept
loads with the credentials the cluster was started with.
Not kept: record batches (offsets survive, the bytes do not; Fetch serves synthetic records), live
group members (their groups come back Empty).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import uuid
from typing import TYPE_CHECKING, Any

from sandbox.consumer_groups import SYNTHETIC, synthetic_consumer_group
from sandbox.state import AclBinding, Group, GroupMember, Partition, Topic

if TYPE_CHECKING:
    from sandbox.cluster import SandboxCluster

FORMAT = 1
log = logging.getLogger("sandbox.persist")


def _partition(p: Partition) -> dict[str, Any]:
    return {
        "replicas": p.replicas,
        "isr": p.isr,
        "leader": p.leader,
        "leader_epoch": p.leader_epoch,
        "partition_epoch": p.partition_epoch,
        "sizes": {str(b): s for b, s in p.sizes.items()},
        "log_start_offset": p.log_start_offset,
        "end_offset": p.end_offset,
        "adding": p.adding,
        "removing": p.removing,
    }


def dump_state(cluster: SandboxCluster) -> dict[str, Any]:
    """The persistent part of the state as plain JSON-able data."""
    st = cluster.state
    with st.lock:
        return {
            "format": FORMAT,
            "cluster_id": st.cluster_id,
            "now_ms": st.now_ms,
            "topics": [
                {
                    "name": t.name,
                    "id": str(t.topic_id),
                    "configs": t.configs,
                    "synthetic_bytes_per_s": t.synthetic_bytes_per_s,
                    "partitions": [_partition(p) for p in t.partitions],
                }
                for t in st.topics.values()
            ],
            "broker_configs": st.broker_configs,
            "logger_levels": {str(k): v for k, v in st.logger_levels.items()},
            "acls": [
                [
                    a.resource_type,
                    a.resource_name,
                    a.pattern_type,
                    a.principal,
                    a.host,
                    a.operation,
                    a.permission_type,
                ]
                for a in st.acls
            ],
            "groups": [
                {
                    "id": g.group_id,
                    # live members (JoinGroup, ConsumerGroupHeartbeat) are not kept: their
                    # group comes back Empty, as after their sessions timed out
                    "state": g.state if g.members or _synthetic(st, g) else "Empty",
                    "protocol": g.protocol,
                    "protocol_type": g.protocol_type,
                    "type": g.type,
                    "group_epoch": g.group_epoch + (1 if g.consumers else 0),
                    "assignment_epoch": g.assignment_epoch,
                    "members": [[m.member_id, m.client_id, m.client_host, m.assignment] for m in g.members],
                    "consumers": _synthetic(st, g),
                    "offsets": [[t, p, o] for (t, p), o in g.offsets.items()],
                    "consume_ratio": g.consume_ratio,
                }
                for g in st.groups.values()
            ],
            "client_quotas": [[list(map(list, e)), q] for e, q in st.client_quotas.items()],
            "scram_credentials": [
                [mechanism, user, salt.hex(), stored.hex(), server.hex(), iterations]
                for mechanism, user, (salt, stored, server, iterations) in st.scram_credentials.items()
            ],
            "features": st.features,
            "features_epoch": st.features_epoch,
            "kraft": [sorted(st.removed_voters), sorted(st.unregistered_brokers)],
            "racks": {str(b): n.rack for b, n in st.brokers.items()},
        }


def _synthetic(st: Any, g: Group) -> list[list[Any]]:
    """The never-expiring members of a consumer group made by add_group(protocol="consumer"):
    [client id, [[topic, partition], ...]]."""
    return [
        [
            m.client_id,
            [
                [st.topic_ids[t], p]
                for t, ps in sorted(m.assigned.items(), key=str)
                if t in st.topic_ids
                for p in sorted(ps)
            ],
        ]
        for m in g.consumers.values()
        if m.last_seen == SYNTHETIC
    ]


def save_state(cluster: SandboxCluster, path: str) -> None:
    """Write the state file atomically."""
    data = dump_state(cluster)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".sandbox-state-")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


def load_state(cluster: SandboxCluster, path: str) -> bool:
    """Restore a state file into a not-yet-started cluster; False when there is no file."""
    if not os.path.exists(path):
        return False
    try:
        with open(path) as fh:
            data = json.load(fh)
        if data.get("format") != FORMAT:
            raise ValueError(f"unknown state format {data.get('format')!r}")
    except (OSError, ValueError) as exc:  # keep the bad file for inspection, start fresh
        log.warning("ignoring unreadable state file %s (%s); kept as %s.bad", path, exc, path)
        os.replace(path, path + ".bad")
        return False
    st = cluster.state
    with st.lock:
        st.topics.clear()
        st.reset_index()
        st.topic_ids.clear()
        for t in data["topics"]:
            parts = []
            for i, p in enumerate(t["partitions"]):
                part = Partition(
                    index=i,
                    replicas=p["replicas"],
                    isr=p["isr"],
                    leader=p["leader"],
                    leader_epoch=p["leader_epoch"],
                    partition_epoch=p["partition_epoch"],
                    sizes={int(b): s for b, s in p["sizes"].items()},
                    log_start_offset=p["log_start_offset"],
                    end_offset=p["end_offset"],
                    adding=p["adding"],
                    removing=p["removing"],
                    topic=t["name"],
                )
                parts.append(part)
                if part.adding or part.removing or set(part.replicas) - set(part.isr):
                    st.catching_up.add((t["name"], i))
            topic = Topic(t["name"], uuid.UUID(t["id"]), parts, t["configs"], t["synthetic_bytes_per_s"])
            st.topics[topic.name] = topic
            st.topic_ids[topic.topic_id] = topic.name
        st.broker_configs = data["broker_configs"]
        st.logger_levels = {int(k): v for k, v in data["logger_levels"].items()}
        st.acls = [AclBinding(*a) for a in data["acls"]]
        st.groups = {}
        for g in data["groups"]:
            grp = Group(g["id"], state=g["state"], protocol=g["protocol"])
            grp.protocol_type = g.get("protocol_type", "consumer")
            grp.type = g.get("type", "classic")
            grp.group_epoch = g.get("group_epoch", 0)
            grp.assignment_epoch = g.get("assignment_epoch", 0)
            grp.consume_ratio = g.get("consume_ratio", 0.0)
            grp.members = [GroupMember(m[0], m[1], m[2], [tuple(x) for x in m[3]]) for m in g["members"]]
            grp.offsets = {(t, p): o for t, p, o in g["offsets"]}
            if g.get("consumers"):  # add_group(protocol="consumer") members
                members = {c: [(t, p) for t, p in parts] for c, parts in g["consumers"]}
                grp = synthetic_consumer_group(st, grp.group_id, members, grp.offsets)
                grp.consume_ratio = g.get("consume_ratio", 0.0)
            st.groups[grp.group_id] = grp
        st.client_quotas = {tuple((t, n) for t, n in e): q for e, q in data.get("client_quotas", [])}
        if "scram_credentials" in data:
            st.scram_credentials.replace(
                [
                    (m, u, (bytes.fromhex(salt), bytes.fromhex(stored), bytes.fromhex(server), i))
                    for m, u, salt, stored, server, i in data["scram_credentials"]
                ]
            )
        st.features = data["features"]
        st.features_epoch = data["features_epoch"]
        st.removed_voters, st.unregistered_brokers = (set(ids) for ids in data.get("kraft", [[], []]))
        for b, rack in data.get("racks", {}).items():
            if int(b) in st.brokers and rack:
                st.brokers[int(b)].rack = rack
        st.now_ms = max(st.now_ms, data["now_ms"])
        st.touch()
    return True
