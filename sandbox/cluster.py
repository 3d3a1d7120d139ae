"""SandboxCluster: a multi-node Kafka wire-protocol sandbox running in a background thread."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

from sandbox import replication
from sandbox.apis import CreateTopicPolicy, api_key_of
from sandbox.faults import Fault, Faults
from sandbox.sasl import SaslRealm
from sandbox.security import SandboxSecurity
from sandbox.server import NodeServer
from sandbox.state import ClusterState, Node

log = logging.getLogger("sandbox")

DEFAULT_PORT = 19092
CONTROLLER_PORT_OFFSET = 100
TICK_S = 0.1
AUTOSAVE_S = 30.0  # write the state file this often (real seconds)


def cluster_id_for(seed: str) -> str:
    """A Kafka-style cluster id (22 chars, url-safe base64 of a UUID) derived from ``seed``."""
    raw = hashlib.sha256(seed.encode()).digest()[:16]
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def topic_id_for(seed: str, name: str) -> uuid.UUID:
    """A stable topic id per (seed, topic name), so restarts and reruns look the same."""
    return uuid.UUID(bytes=hashlib.sha256(f"{seed}/{name}".encode()).digest()[:16])


class SandboxCluster:
    """A Kafka cluster simulator: brokers 1..N and dedicated controllers 101.. on 127.0.0.1.

    ``port=0`` picks ephemeral ports. ``create_topic_policy`` plays the part of Kafka's
    ``create.topic.policy.class.name``: a message it returns fails the topic with POLICY_VIOLATION. ``speed`` is how many virtual seconds pass per real
    second (replication progress, synthetic writes). ``racks`` is a list of rack names (one per
    broker, cycled) or None. ``state_file`` is loaded at start when it exists and written at
    shutdown. ``broker_properties`` are server.properties lines every broker starts with (static
    configs, e.g. ``group.consumer.heartbeat.interval.ms``), reported as STATIC_BROKER_CONFIG.
    ``security`` secures every node's listener (brokers and controllers): TLS, mTLS, SASL.
    ``loop``: an event loop already running in another thread, shared with other clusters
    (``sandbox.fleet``); by default the cluster runs its own loop in a thread of its own.
    ``log_dirs``: each broker's number of log dirs (JBOD, ``data-0``, ``data-1``, ...; 1: ``data``).
    """

    def __init__(
        self,
        brokers: int = 3,
        controllers: int = 3,
        port: int = DEFAULT_PORT,
        speed: float = 10.0,
        racks: Sequence[str] | None = None,
        seed: str = "sandbox",
        state_file: str | None = None,
        host: str = "127.0.0.1",
        bandwidth_bytes_per_s: float = 50 * 1024 * 1024,
        create_topic_policy: CreateTopicPolicy | None = None,
        broker_properties: dict[str, str] | None = None,
        security: SandboxSecurity | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        log_dirs: int = 1,
    ) -> None:
        self.seed = seed
        self.security = security
        self.ssl_context = security.server_ssl_context() if security else None
        # like Kafka's create.topic.policy.class.name: (name, partitions, rf, configs) -> message
        self.create_topic_policy = create_topic_policy
        self.speed = speed
        self.state_file = state_file
        self.state = ClusterState(cluster_id_for(seed))
        self.sasl_realm = SaslRealm(security, self.state) if security and security.sasl else None
        self.state.bandwidth_bytes_per_s = bandwidth_bytes_per_s
        self.state.static_configs = dict(broker_properties or {})
        self.faults = Faults()
        rack_list = list(racks) if racks else []
        for i in range(brokers):
            bid = i + 1
            dirs = [f"/var/lib/kafka/broker-{bid}/data-{d}" for d in range(log_dirs)] if log_dirs > 1 else []
            self.state.brokers[bid] = Node(
                bid,
                port + i if port else 0,
                rack_list[i % len(rack_list)] if rack_list else None,
                host=host,
                log_dir=dirs[0] if dirs else f"/var/lib/kafka/broker-{bid}/data",
                log_dirs=dirs,
            )
        for i in range(controllers):
            cid = 101 + i
            self.state.controllers[cid] = Node(
                cid,
                port + CONTROLLER_PORT_OFFSET + i if port else 0,
                None,
                is_controller=True,
                host=host,
                log_dir=f"/var/lib/kafka/controller-{cid}/metadata",
            )
        self.state.active_controller = min(self.state.controllers, default=-1)
        self._shared_loop = loop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: dict[int, NodeServer] = {}
        self._ticker: asyncio.Task[None] | None = None
        self._started = threading.Event()

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> SandboxCluster:
        """Load state (if any), start every node's listener and the replication ticker."""
        if self.state_file:
            from sandbox.persist import load_state

            load_state(self, self.state_file)
        if self._shared_loop is not None:
            self._loop = self._shared_loop
        else:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._run_loop, name="sandbox-loop", daemon=True)
            self._thread.start()
            self._started.wait()
        try:
            self._call(self._start_all())
        except BaseException:  # e.g. a port in use: release what was started, then report
            self.shutdown()
            raise
        return self

    def _run_loop(self) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._started.set)
        self._loop.run_forever()

    def _call(self, coro: Any, timeout: float = 30.0) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _start_all(self) -> None:
        for node in [*self.state.brokers.values(), *self.state.controllers.values()]:
            srv = NodeServer(self, node)
            self._servers[node.node_id] = srv
            if node.up:
                await srv.start()
        self._ticker = asyncio.get_running_loop().create_task(self._tick_forever())

    async def _tick_forever(self) -> None:
        """Advance the virtual clock with real time x speed; tick less often when ticks are costly
        (big reassignments), so that serving requests keeps most of the loop."""
        loop = asyncio.get_running_loop()
        last = last_save = loop.time()
        cost = 0.0
        while True:
            await asyncio.sleep(max(TICK_S, 3 * cost))
            now = loop.time()
            started = time.perf_counter()
            if self.speed > 0:
                self.advance((now - last) * self.speed)
            cost = time.perf_counter() - started
            last = now
            if self.state_file and now - last_save >= AUTOSAVE_S:
                last_save = now
                from sandbox.persist import save_state

                try:
                    save_state(self, self.state_file)
                except OSError:
                    log.exception("could not save %s", self.state_file)

    def shutdown(self) -> None:
        """Stop every listener and the loop thread; write the state file when configured."""
        if self._loop is None:
            return
        if self.state_file:
            from sandbox.persist import save_state

            save_state(self, self.state_file)

        async def _stop() -> None:
            if self._ticker:
                self._ticker.cancel()
            for srv in self._servers.values():
                await srv.stop()
            if self._shared_loop is None:
                others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            else:  # the loop serves other clusters too: only this cluster's connections
                others = [t for srv in self._servers.values() for t in srv.tasks]
            for t in others:  # connection handlers still waiting on their sockets
                t.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        try:
            self._call(_stop())
        finally:
            if self._shared_loop is None:  # a shared loop is stopped by its owner
                self._loop.call_soon_threadsafe(self._loop.stop)
                if self._thread:
                    self._thread.join(10)
                self._loop.close()
            self._loop = None

    def __enter__(self) -> SandboxCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # ---- addresses -------------------------------------------------------------------------
    @property
    def cluster_id(self) -> str:
        """Stable per seed."""
        return self.state.cluster_id

    @property
    def bootstrap_servers(self) -> str:
        """Comma-separated host:port of every broker."""
        return ",".join(f"{n.host}:{n.port}" for n in self.state.brokers.values())

    @property
    def bootstrap_controllers(self) -> str:
        """Comma-separated host:port of every dedicated controller ("" when there are none)."""
        return ",".join(f"{n.host}:{n.port}" for n in self.state.controllers.values())

    # ---- faults ----------------------------------------------------------------------------
    def stop_broker(self, broker_id: int) -> None:
        """Stop a broker: connections refused, its replicas offline, ISR shrinks, leaders move."""
        with self.state.lock:
            replication.broker_down(self.state, broker_id)
        self._call(self._servers[broker_id].stop())

    def start_broker(self, broker_id: int) -> None:
        """Restart a stopped broker; its replicas catch up and rejoin the ISR."""
        self._call(self._servers[broker_id].start())
        with self.state.lock:
            replication.broker_up(self.state, broker_id)

    def freeze_broker(self, broker_id: int, fenced: bool = False) -> None:
        """Freeze a broker as SIGSTOP does: its port still accepts connections (the kernel's backlog)
        but nothing is read or answered until ``thaw_broker``. ``fenced``: as KRaft does once the
        frozen broker missed its heartbeats (``broker.session.timeout.ms``), it leaves Metadata and
        its leaders move, as for ``stop_broker``; otherwise it is still listed and still leads."""
        if fenced:
            with self.state.lock:
                replication.broker_down(self.state, broker_id)
        server = self._servers[broker_id]
        self._loop.call_soon_threadsafe(server.thawed.clear)

    def thaw_broker(self, broker_id: int) -> None:
        """Let a frozen broker answer again (the requests it queued meanwhile too); unfence it."""
        server = self._servers[broker_id]
        self._loop.call_soon_threadsafe(server.thawed.set)
        with self.state.lock:
            if not self.state.brokers[broker_id].up:
                replication.broker_up(self.state, broker_id)

    def stop_controller(self, controller_id: int) -> None:
        """Stop a controller; if it was active another voter takes over (new epoch)."""
        with self.state.lock:
            replication.controller_down(self.state, controller_id)
        self._call(self._servers[controller_id].stop())

    def start_controller(self, controller_id: int) -> None:
        """Restart a stopped controller; it catches up with the metadata log."""
        self._call(self._servers[controller_id].start())
        with self.state.lock:
            self.state.controllers[controller_id].up = True
            if self.state.active_controller < 0:
                replication.controller_down(self.state, -1)
            self.state.record()

    def inject_fault(
        self,
        api: str | int,
        node: int | None = None,
        delay_s: float = 0.0,
        error_code: int | None = None,
        count: int | None = None,
    ) -> None:
        """Delay and/or fail requests of ``api`` (name like "CreateTopics" or key) on ``node``."""
        self.faults.add(Fault(api_key_of(api), node, delay_s, error_code, count))

    def clear_faults(self) -> None:
        """Remove every injected fault."""
        self.faults.clear()

    def set_broker_config_lag(self, seconds: float) -> None:
        """Brokers describe a changed dynamic broker config only ``seconds`` after the change was answered.

        Real Kafka answers IncrementalAlterConfigs once the controller has committed the record; each
        broker applies it when it replays the metadata log, so a describe right after may show the old value.
        0 turns the lag off and lets every broker catch up at once.
        """
        with self.state.lock:
            self.state.broker_config_lag_s = max(0.0, float(seconds))
            if not self.state.broker_config_lag_s:
                self.state.catch_up_broker_configs()

    # ---- clock and data --------------------------------------------------------------------
    def advance(self, seconds: float) -> None:
        """Move the virtual clock forward, growing logs and copying replicas."""
        with self.state.lock:
            replication.tick(self.state, seconds)

    def produce_synthetic(self, topic: str, bytes_per_s: float) -> None:
        """Set a topic's synthetic write rate (spread over its partitions)."""
        with self.state.lock:
            self.state.topics[topic].synthetic_bytes_per_s = float(bytes_per_s)

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        configs: dict[str, str] | None = None,
        assignment: list[list[int]] | None = None,
    ) -> None:
        """Create a topic directly (demo data, tests); placement as Kafka's default."""
        from sandbox.placement import place_replicas

        with self.state.lock:
            if assignment is None:
                assignment = place_replicas(self.state, partitions, replication_factor)
            self.state.add_topic(name, assignment, configs or {}, topic_id_for(self.seed, name))
            from sandbox.handlers.metacache import warm_topic

            warm_topic(self.state, name)

    def set_broker_config(self, broker: str, name: str, value: str | None) -> None:
        """Set (or with None delete) a dynamic broker config; broker "" is the cluster default."""
        with self.state.lock:
            cfg = self.state.broker_configs.setdefault(broker, {})
            if value is None:
                cfg.pop(name, None)
            else:
                cfg[name] = value
            self.state.record()

    def add_group(
        self,
        group_id: str,
        members: dict[str, list[tuple[str, int]]] | None = None,
        offsets: dict[tuple[str, int], int] | None = None,
        state: str | None = None,
        consume_ratio: float = 0.0,
        protocol: str = "classic",
    ) -> None:
        """Add a synthetic consumer group: members (client id -> partitions) and committed offsets.

        With ``consume_ratio`` > 0 the committed offsets advance on the virtual clock by that share
        of the records produced meanwhile (1.0 keeps the lag steady, less lets it grow).
        ``protocol="consumer"`` makes a KIP-848 consumer group (ListGroups type "consumer",
        described by ConsumerGroupHeartbeat's ConsumerGroupDescribe) whose members own their
        partitions at epoch 1 and never time out; otherwise a classic group.
        """
        from sandbox.state import Group, GroupMember

        with self.state.lock:
            if protocol == "consumer":
                from sandbox.consumer_groups import synthetic_consumer_group

                g = synthetic_consumer_group(self.state, group_id, members or {}, offsets or {})
                g.consume_ratio = consume_ratio
                self.state.groups[group_id] = g
                return
            g = Group(group_id, offsets=dict(offsets or {}), consume_ratio=consume_ratio)
            for i, (client, parts) in enumerate((members or {}).items()):
                g.members.append(
                    GroupMember(
                        f"{client}-{i}-{uuid.uuid5(uuid.NAMESPACE_OID, group_id + client)}",
                        client,
                        "/127.0.0.1",
                        list(parts),
                    )
                )
            g.state = state or ("Stable" if g.members else "Empty")
            self.state.groups[group_id] = g
